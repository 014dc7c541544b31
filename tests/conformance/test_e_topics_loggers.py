"""Conformance: active topics (KIP-558) and the logger admin endpoints (KIP-495/KIP-976)."""

from __future__ import annotations

from typing import Any

import pytest

from .harness import Conformance
from .normalise import sorted_names
from .scenario import create_topic, source_config, state_is, write_lines

pytestmark = pytest.mark.oracle


def test_topics_and_reset(cf: Conformance) -> None:
    create_topic(cf, "<<topic>>")
    cf.call("GET", "/connectors/<<c>>/topics", status=200, label="before creation: empty list, not 404")
    write_lines(cf, "<<dir>>/<<topic>>.in", ["a", "b"])
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": source_config()}, status=201)
    cf.poll(
        "/connectors/<<c>>/topics",
        lambda b: b["<<c>>"]["topics"] == ["<<topic>>"],
        label="the source's topic becomes active",
    )
    cf.call("PUT", "/connectors/<<c>>/stop", status=204)
    cf.poll("/connectors/<<c>>/status", state_is("STOPPED", []))
    cf.call("GET", "/connectors/<<c>>/topics", status=200, label="a stopped connector keeps its active topics")
    cf.call("PUT", "/connectors/<<c>>/topics/reset", status=202)
    cf.poll("/connectors/<<c>>/topics", lambda b: b["<<c>>"]["topics"] == [], label="reset empties the list")
    cf.call("PUT", "/connectors/<<nope>>/topics/reset", status=202, label="reset of an unknown connector")
    cf.call("DELETE", "/connectors/<<c>>", status=204)


def _listing(ns: str):
    """GET /admin/loggers lists implementation loggers too; compare `root` and our namespace only."""

    def project(body: Any) -> Any:
        return {k: v for k, v in body.items() if k == "root" or k.startswith(ns)}

    return project


def test_admin_loggers(cf: Conformance) -> None:
    ns = "<<ns>>"
    cf.call("GET", "/admin/loggers", status=200, project=_listing(ns), label="initial listing has root")
    cf.call("GET", "/admin/loggers/root", status=200)
    cf.call("GET", "/admin/loggers/ROOT", status=200, label="root is case-insensitive")
    cf.call("GET", f"/admin/loggers/{ns}", status=404, label="unknown logger")
    cf.call(
        "PUT",
        f"/admin/loggers/{ns}",
        {"level": "DEBUG"},
        status=200,
        project=sorted_names,
        label="worker scope (default): 200 with the affected names",
    )
    cf.call("GET", f"/admin/loggers/{ns}", status=200, label="level DEBUG with a timestamp")
    cf.call("GET", "/admin/loggers", status=200, project=_listing(ns), label="listing shows the namespace")
    cf.call(
        "PUT",
        f"/admin/loggers/{ns}",
        {"level": "debug"},
        params={"scope": "worker"},
        status=200,
        project=sorted_names,
        label="lower-case level, explicit worker scope",
    )
    cf.call("PUT", f"/admin/loggers/{ns}.child", {"level": "WARN"}, status=200, project=sorted_names)
    cf.call(
        "PUT",
        f"/admin/loggers/{ns}",
        {"level": "ERROR"},
        status=200,
        project=sorted_names,
        label="a parent update includes its children",
    )
    cf.call("GET", f"/admin/loggers/{ns}.child", status=200)
    cf.call(
        "PUT",
        f"/admin/loggers/{ns}",
        {"level": "INFO"},
        params={"scope": "bogus"},
        status=200,
        project=sorted_names,
        label="unknown scope reads as worker",
    )
    cf.call(
        "PUT",
        f"/admin/loggers/{ns}",
        {"level": "INFO"},
        params={"scope": "cluster"},
        status=204,
        label="cluster scope: 204, no body",
    )
    cf.call("PUT", f"/admin/loggers/{ns}", {"level": "LOUD"}, status=404, label="invalid level is 404")
    cf.call("PUT", f"/admin/loggers/{ns}", {}, status=400, label="missing level")
    cf.call(
        "PUT",
        "/admin/loggers/root",
        {"level": "INFO"},
        status=200,
        project=_root_update,
        label="root update answers every logger; compared: starts with and contains root",
    )


def _root_update(body: Any) -> Any:
    return {"is_list": isinstance(body, list), "has_root": "root" in body}
