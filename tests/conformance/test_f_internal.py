"""Conformance: the internal endpoints `POST /connectors/{c}/tasks` and `PUT /connectors/{c}/fence`.

Standalone, the reference refuses both with 500 (after parsing the body and the signature headers). In
distributed mode both clusters run the "compatible" group protocol (ours offers it first; the reference's
side is set to it in distributed/conftest.py), under which the reference checks no KIP-507 signatures; the
sessioned protocol's checks are covered by tests/unit/herder/test_signatures.py.
"""

from __future__ import annotations

import pytest

from .harness import Conformance, Deliberate
from .scenario import sink_config, source_config, state_is, write_lines

pytestmark = pytest.mark.oracle

BAD_BODY = Deliberate(
    "every bad request is a 4xx with a clear message, never a 500: a malformed task-config body is 400", 400
)
SOURCE_TASK = "org.apache.kafka.connect.file.FileStreamSourceTask"
NOT_LIST = ('{"a": "b"}', '["x"]', "[1, 2]", '[{"a": {"b": 1}}]', '{"a": ', "", "null")


def test_internal_endpoints(cf: Conformance, mode: str) -> None:
    distributed = mode == "distributed"
    write_lines(cf, "<<dir>>/<<topic>>.in", ["a"])
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": source_config()}, status=201)
    cf.call("POST", "/connectors", {"name": "<<s>>", "config": sink_config()}, status=201)
    cf.poll("/connectors/<<c>>/status", state_is("RUNNING", ["RUNNING"]))
    cf.poll("/connectors/<<s>>/status", state_is("RUNNING", ["RUNNING"]))

    # standalone: every well-formed request is refused with 500, whatever the connector; distributed: the
    # source connector's task configs are replaced with real ones further down
    cf.call("POST", "/connectors/<<nope>>/tasks", [{"a": "b"}], status=404 if distributed else 500)
    cf.call("POST", "/connectors/<<s>>/tasks", [{"a": "b"}], status=204 if distributed else 500)
    for name in ("<<nope>>", "<<c>>", "<<s>>"):
        for raw in NOT_LIST:
            cf.call(
                "POST",
                f"/connectors/{name}/tasks",
                raw=raw,
                status=500,
                deliberate=BAD_BODY,
                label=f"task configs for {name}: body {raw!r}",
            )
        cf.call(
            "POST",
            f"/connectors/{name}/tasks",
            [{"a": "b"}],
            status=400,
            headers={"X-Connect-Authorization": "abc", "X-Connect-Request-Signature-Algorithm": "Nope"},
            label=f"task configs for {name}: unknown signature algorithm",
        )
        cf.call(
            "POST",
            f"/connectors/{name}/tasks",
            [{"a": "b"}],
            status=400,
            headers={"X-Connect-Authorization": "!!!", "X-Connect-Request-Signature-Algorithm": "HmacSHA256"},
            label=f"task configs for {name}: signature not base64",
        )
        cf.call(
            "PUT",
            f"/connectors/{name}/fence",
            status=400,
            headers={"X-Connect-Authorization": "abc", "X-Connect-Request-Signature-Algorithm": "Nope"},
            label=f"fence {name}: unknown signature algorithm",
        )
        fence = {"<<nope>>": 404, "<<c>>": 204, "<<s>>": 400}[name] if distributed else 500
        cf.call("PUT", f"/connectors/{name}/fence", status=fence, label=f"fence {name}")
        cf.call(
            "PUT", f"/connectors/{name}/fence", raw="anything", status=fence, label=f"fence {name}: the body is ignored"
        )
    cf.call("GET", "/connectors/<<c>>/fence", status=405)

    # the leader writes the task configs as given; the task restarts with them
    task = {**source_config(**{"batch.size": "7"}), "name": "<<c>>", "task.class": SOURCE_TASK}
    cf.call(
        "POST",
        "/connectors/<<c>>/tasks",
        [task],
        status=204 if distributed else 500,
        headers={"Content-Type": "text/plain"},
        label="task configs (any Content-Type)",
    )
    if distributed:
        cf.poll(
            "/connectors/<<c>>/tasks",
            lambda b: [t["config"] for t in b] == [task],
            label="GET tasks shows the posted task config",
        )
        cf.poll("/connectors/<<c>>/status", state_is("RUNNING", ["RUNNING"]))
        cf.call("PUT", "/connectors/<<c>>/stop", status=204)
        cf.call(
            "POST", "/connectors/<<c>>/tasks", [task], status=400, label="non-empty task configs of a STOPPED connector"
        )
        cf.call("POST", "/connectors/<<c>>/tasks", [], status=204, label="empty task configs of a STOPPED connector")
        cf.call("PUT", "/connectors/<<c>>/fence", status=204, label="fence a STOPPED source connector")
    cf.call("DELETE", "/connectors/<<c>>", status=204)
    cf.call("DELETE", "/connectors/<<s>>", status=204)
