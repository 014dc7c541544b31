"""Conformance: connector CRUD, name handling, initial_state, expand, deletion."""

from __future__ import annotations

import pytest

from .harness import OURS, Conformance, Deliberate
from .scenario import only_test_connectors, sink_config, source_config, state_is, write_lines

pytestmark = pytest.mark.oracle

CREATE_400 = "every bad request is a 4xx with a clear message, never a 500"


def test_create_read_update_delete(cf: Conformance, mode: str) -> None:
    distributed = mode == "distributed"
    write_lines(cf, "<<dir>>/<<topic>>.in", ["a", "b", "c"])
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<c>>", "config": source_config()},
        status=201,
        label="create: 201, Location, ConnectorInfo with tasks (standalone; distributed: tasks [])",
    )
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": source_config()}, status=409, label="duplicate")
    cf.call("GET", "/connectors", status=200, project=only_test_connectors)
    cf.call("GET", "/connectors/<<c>>", status=200)
    cf.call("GET", "/connectors/<<c>>/config", status=200)
    cf.call("GET", "/connectors/<<c>>/tasks", status=200)
    cf.call("GET", "/connectors/<<c>>/tasks-config", status=200)
    cf.poll("/connectors/<<c>>/status", state_is("RUNNING", ["RUNNING"]), label="status RUNNING")
    cf.call("GET", "/connectors/<<c>>/tasks/0/status", status=200)
    cf.call("GET", "/connectors/<<c>>/tasks/7/status", status=404)
    cf.call("GET", "/connectors/<<c>>/", status=200, label="trailing slash")
    cf.call("GET", "/connectors/<<c>>/status/", status=200, label="trailing slash on status")

    updated = source_config(**{"batch.size": "10"})
    cf.call("PUT", "/connectors/<<c>>/config", updated, status=200, label="PUT existing: 200")
    cf.call("GET", "/connectors/<<c>>/config", status=200)
    cf.call(
        "PUT",
        "/connectors/<<c>>/config",
        {**updated, "name": "<<other>>"},
        status=400,
        label="PUT with a body name differing from the URL",
    )
    cf.call(
        "PATCH",
        "/connectors/<<c>>/config",
        {"batch.size": "20", "extra.key": "v"},
        status=200,
        label="PATCH adds and changes keys",
    )
    cf.call("PATCH", "/connectors/<<c>>/config", {"extra.key": None}, status=200, label="PATCH null removes a key")
    cf.call("GET", "/connectors/<<c>>/config", status=200)
    cf.call("PATCH", "/connectors/<<nope>>/config", {"a": "b"}, status=404)
    cf.call(
        "PUT",
        "/connectors/<<c2>>/config",
        source_config(topic="<<topic2>>"),
        status=201,
        label="PUT new connector: 201 with Location",
    )
    cf.poll("/connectors/<<c2>>/status", state_is("RUNNING", ["RUNNING"]))

    cf.call("DELETE", "/connectors/<<c2>>", status=204)
    cf.call("DELETE", "/connectors/<<c>>", status=204)
    cf.call("GET", "/connectors", status=200, project=only_test_connectors, label="deleted ones are gone")
    cf.call("GET", "/connectors/<<c>>", status=404)
    cf.call("GET", "/connectors/<<c>>/config", status=404)
    cf.call("GET", "/connectors/<<c>>/tasks", status=404)
    cf.call("GET", "/connectors/<<c>>/tasks-config", status=404)
    cf.poll("/connectors/<<c>>/status", lambda b: True, status=404, label="status 404 after delete")
    cf.call("GET", "/connectors/<<c>>/offsets", status=404)
    cf.call("DELETE", "/connectors/<<c>>", status=404)
    cf.call("PUT", "/connectors/<<c>>/pause", status=404)
    cf.call("PUT", "/connectors/<<c>>/resume", status=404)
    # The distributed reference already answers these three 404 (standalone: 500, section 0's cases).
    cf.call(
        "PUT",
        "/connectors/<<c>>/stop",
        status=404 if distributed else 500,
        deliberate=None
        if distributed
        else Deliberate("PUT /stop on an unknown connector is 404 in both modes", 404, ("<<c>>",)),
    )
    cf.call(
        "POST",
        "/connectors/<<c>>/restart",
        status=404 if distributed else 500,
        label="plain restart of an unknown connector",
        deliberate=None
        if distributed
        else Deliberate(
            "restart of an unknown connector (any parameters) is 404 `Unknown connector: <c>`",
            404,
            ("Unknown connector: <<c>>",),
        ),
    )
    cf.call(
        "POST",
        "/connectors/<<c>>/restart",
        params={"includeTasks": "true"},
        status=404,
        label="restart with parameters of an unknown connector (the reference already says 404)",
    )
    cf.call(
        "POST",
        "/connectors/<<c>>/tasks/0/restart",
        status=404 if distributed else 500,
        deliberate=None
        if distributed
        else Deliberate(
            "restart of a task of an unknown connector is 404 `Unknown connector: <c>`",
            404,
            ("Unknown connector: <<c>>",),
        ),
    )
    if distributed:  # contract 2.5: a deleted connector's active topics are reset on revocation
        # the reference does so only when the deletion reaches it as a revocation: some runs it still lists
        # them after 45 s, so only ours is held to it
        cf.poll(
            "/connectors/<<c>>/topics",
            lambda b: b["<<c>>"]["topics"] == [],
            only=OURS,
            label="topics of a deleted connector: eventually [] (distributed)",
        )
    else:
        cf.call(
            "GET",
            "/connectors/<<c>>/topics",
            status=200,
            label="topics of a deleted connector (standalone 3.9 still lists them)",
        )


def test_name_handling(cf: Conformance, mode: str) -> None:
    write_lines(cf, "<<dir>>/<<topic>>.in", ["x"])
    cf.call(
        "POST",
        "/connectors",
        {"name": "  <<c>>  ", "config": source_config()},
        status=201,
        label="padded name is trimmed",
    )
    cf.call("GET", "/connectors/<<c>>/config", status=200)
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<d>>", "config": source_config(name="<<e>>")},
        status=400,
        label="config.name differs from name",
    )
    cf.call("POST", "/connectors", {"name": "", "config": source_config()}, status=400, label="empty name")
    cf.call("POST", "/connectors", {"config": source_config()}, status=400, label="missing name")
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<d>>", "config": {"tasks.max": "1", "topic": "t"}},
        status=400,
        label="no connector.class",
    )
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<d>>", "config": {"connector.class": "com.example.Nope"}},
        status=500,
        deliberate=Deliberate(
            "an unknown connector.class on create is 400 naming the class", 400, ("com.example.Nope",)
        ),
    )
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<d>>", "config": source_config(**{"batch.size": "many"})},
        status=400,
        label="invalid value: 400 listing the errors",
    )
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<d>>", "config": source_config(), "bogus": 1},
        status=500,
        deliberate=Deliberate(f"{CREATE_400}: unknown field is 400 naming it", 400, ("bogus",)),
    )
    cf.call(
        "POST",
        "/connectors",
        raw='{"name": "<<d>>", "config": ',
        status=500,
        deliberate=Deliberate(f"{CREATE_400}: invalid JSON is 400", 400),
    )
    # the distributed reference answers 201 (standalone: 500); both create the connector
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<d>>", "config": {**source_config(), "batch.size": None}},
        status=201 if mode == "distributed" else 500,
        deliberate=Deliberate("a JSON null config value is a 400 validation error and creates nothing", 400),
    )
    if mode == "standalone":  # a distributed follower may not have read the new config yet; DELETE shows it
        cf.call(
            "GET",
            "/connectors/<<d>>",
            status=200,
            label="the reference created the connector despite the 500 (section 0: we must not)",
            deliberate=Deliberate("a JSON null config value ... creates nothing", 404),
        )
    cf.call(
        "DELETE",
        "/connectors/<<d>>",
        status=204,
        deliberate=Deliberate("a JSON null config value ... creates nothing", 404),
    )
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<n>>", "config": source_config(**{"tasks.max": 1})},
        status=201,
        label="numbers in configs are coerced to strings",
    )
    cf.call("DELETE", "/connectors/<<n>>", status=204)
    cf.call("DELETE", "/connectors/<<c>>", status=204)


@pytest.mark.parametrize(
    "state,expected", [("STOPPED", "STOPPED"), ("PAUSED", "PAUSED"), ("paused", "PAUSED"), ("Running", "RUNNING")]
)
def test_initial_state(cf: Conformance, state: str, expected: str) -> None:
    write_lines(cf, "<<dir>>/<<topic>>.in", ["x"])
    body = {"name": "<<c>>", "config": source_config(), "initial_state": state}
    cf.call("POST", "/connectors", body, status=201)
    tasks = ["RUNNING"] if expected == "RUNNING" else []
    cf.poll("/connectors/<<c>>/status", state_is(expected, tasks))
    cf.call("GET", "/connectors/<<c>>", status=200)
    cf.call("GET", "/connectors/<<c>>/tasks", status=200)
    if expected != "RUNNING":
        cf.call("GET", "/connectors/<<c>>/offsets", status=200)
        cf.call("PUT", "/connectors/<<c>>/resume", status=202)
        cf.poll("/connectors/<<c>>/status", state_is("RUNNING", ["RUNNING"]), label="resumed")
        cf.call("GET", "/connectors/<<c>>", status=200)
    cf.call("DELETE", "/connectors/<<c>>", status=204)


def test_initial_state_invalid(cf: Conformance) -> None:
    body = {"name": "<<c>>", "config": source_config(), "initial_state": "SLEEPING"}
    cf.call(
        "POST",
        "/connectors",
        body,
        status=500,
        deliberate=Deliberate("an invalid initial_state is 400 (KIP-980)", 400, ("initial_state",)),
    )
    cf.call("GET", "/connectors/<<c>>", status=404, label="nothing created")


def test_expand(cf: Conformance) -> None:
    write_lines(cf, "<<dir>>/<<topic>>.in", ["x"])
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": source_config()}, status=201)
    cf.call("POST", "/connectors", {"name": "<<s>>", "config": sink_config(), "initial_state": "PAUSED"}, status=201)
    cf.poll("/connectors/<<c>>/status", state_is("RUNNING", ["RUNNING"]))
    cf.poll("/connectors/<<s>>/status", state_is("PAUSED", []))
    cf.call("GET", "/connectors?expand=status", status=200, project=only_test_connectors)
    cf.call("GET", "/connectors?expand=info", status=200, project=only_test_connectors)
    cf.call("GET", "/connectors?expand=status&expand=info", status=200, project=only_test_connectors)
    cf.call("GET", "/connectors?expand=bogus", status=200, project=only_test_connectors)
    cf.call("GET", "/connectors?expand=info&expand=bogus", status=200, project=only_test_connectors)
    cf.call("DELETE", "/connectors/<<c>>", status=204)
    cf.call("DELETE", "/connectors/<<s>>", status=204)


def test_class_aliases(cf: Conformance) -> None:
    write_lines(cf, "<<dir>>/<<topic>>.in", ["x"])
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<c>>", "config": source_config(**{"connector.class": "FileStreamSource"})},
        status=201,
        label="short alias as connector.class",
    )
    cf.call("GET", "/connectors/<<c>>/tasks", status=200)
    cf.call("DELETE", "/connectors/<<c>>", status=204)
