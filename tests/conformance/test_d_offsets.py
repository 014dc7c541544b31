"""Conformance: the offsets API (KIP-875) with FileStream source and sink connectors.

FileStream's alter_offsets hooks return true, so success answers are the "definite" messages.
Invalid bodies follow contract section 4, scenarios 58 (sink) and 59 (source).
"""

from __future__ import annotations

from typing import Any

import pytest

from .harness import Conformance, Deliberate
from .scenario import create_topic, sink_config, source_config, state_is, write_lines

pytestmark = pytest.mark.oracle

LINES = ["one", "two", "three", "four"]
END = sum(len(line) + 1 for line in LINES)  # FileStreamSource offsets are byte positions
JSON_400 = "a malformed or mistyped JSON body is 400 naming the offending field (the reference: 500)"
FORMAT_400 = "source-offset format violations are 400 (the reference: 500)"


def _source_at(position: int):
    def check(body: Any) -> bool:
        return [o["offset"]["position"] for o in body["offsets"]] == [position]

    return check


def _sink_at(offset: int):
    def check(body: Any) -> bool:
        return [o["offset"]["kafka_offset"] for o in body["offsets"]] == [offset]

    return check


def test_source_offsets(cf: Conformance) -> None:
    create_topic(cf, "<<topic>>")
    write_lines(cf, "<<dir>>/<<topic>>.in", LINES)
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": source_config()}, status=201)
    cf.poll("/connectors/<<c>>/offsets", _source_at(END), label="RUNNING source: offsets reach end of file")
    partition = {"filename": "<<dir>>/<<topic>>.in"}
    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": partition, "offset": {"position": 4}}]},
        status=400,
        label="alter while RUNNING: 400 must be STOPPED",
    )
    cf.call("DELETE", "/connectors/<<c>>/offsets", status=400, label="reset while RUNNING")
    cf.call("PUT", "/connectors/<<c>>/pause", status=202)
    cf.poll("/connectors/<<c>>/status", state_is("PAUSED", ["PAUSED"]))
    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": partition, "offset": {"position": 4}}]},
        status=400,
        label="alter while PAUSED: 400",
    )
    cf.call("PUT", "/connectors/<<c>>/stop", status=204)
    cf.poll("/connectors/<<c>>/status", state_is("STOPPED", []))
    cf.call("GET", "/connectors/<<c>>/offsets", status=200, label="STOPPED source offsets")

    # Scenario 59: invalid bodies on a STOPPED source.
    for raw, label in [
        ("[]", "array body"),
        ('{"key": []}', "unknown field"),
        ('{"offsets": {}}', "offsets not a list"),
        ('{"offsets": [123]}', "entry not an object"),
        ('{"offsets": [{"key": "val"}]}', "unknown entry field"),
        ('{"offsets": [{"partition": []]}]}', "malformed JSON"),
    ]:
        cf.call(
            "PATCH",
            "/connectors/<<c>>/offsets",
            raw=raw,
            status=500,
            label=f"invalid body: {label}",
            deliberate=Deliberate(JSON_400, 400),
        )
    cf.call("PATCH", "/connectors/<<c>>/offsets", {}, status=400, label="invalid body: {}")
    cf.call("PATCH", "/connectors/<<c>>/offsets", {"offsets": []}, status=400, label="invalid body: empty offsets")
    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": partition, "offset": {"position": {"x": 1}}}]},
        status=500,
        deliberate=Deliberate(FORMAT_400, 400, ("position",)),
        label="non-primitive offset value",
    )
    cf.call(
        "PATCH",
        "/connectors/<<nope>>/offsets",
        {"offsets": [{"partition": partition, "offset": None}]},
        status=404,
        label="alter an unknown connector",
    )
    cf.call(
        "PATCH",
        "/connectors/<<nope>>/offsets",
        {"offsets": []},
        status=400,
        label="empty offsets is 400 before the existence check",
    )

    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": partition, "offset": {"position": 4}}]},
        status=200,
        label="alter: definite message",
    )
    cf.call("GET", "/connectors/<<c>>/offsets", status=200, label="altered to 4")
    cf.call("DELETE", "/connectors/<<c>>/offsets", status=200, label="reset: definite message")
    cf.call("GET", "/connectors/<<c>>/offsets", status=200, label="after reset: []")
    cf.call("DELETE", "/connectors/<<c>>/offsets", status=200, label="reset again succeeds")
    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": partition, "offset": {"position": 4}}]},
        status=200,
        label="alter after reset",
    )
    cf.call("PUT", "/connectors/<<c>>/resume", status=202)
    cf.poll("/connectors/<<c>>/offsets", _source_at(END), label="resumed from 4, back at end of file")
    cf.call("DELETE", "/connectors/<<nope>>/offsets", status=404)
    cf.call("DELETE", "/connectors/<<c>>", status=204)


SINK_CATCH_UP_S = 150


def test_sink_offsets(cf: Conformance) -> None:
    create_topic(cf, "<<topic>>")
    write_lines(cf, "<<dir>>/<<topic>>.in", LINES)
    cf.call("POST", "/connectors", {"name": "<<src>>", "config": source_config()}, status=201)
    # The sink is created once the source's task runs: in distributed mode the source's task assignment is a
    # rebalance of the worker group, which, coming while the sink task's consumer joins its group, restarts
    # that join. On Tansu (which answers a JoinGroup only after session.timeout.ms / 2 and has wedged the
    # reference's sink consumer group under CI load) that cost the reference's sink more than 150 s once.
    cf.poll("/connectors/<<src>>/status", state_is("RUNNING", ["RUNNING"]), label="source task RUNNING")
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": sink_config()}, status=201)
    # SINK_CATCH_UP_S: the sink consumer group's first join on Tansu (above), in the reference's rebalances.
    cf.poll(
        "/connectors/<<c>>/offsets",
        _sink_at(len(LINES)),
        timeout_s=SINK_CATCH_UP_S,
        label="RUNNING sink: committed offsets reach the record count",
    )
    for target in cf.targets:  # the sink really wrote what the source read
        out = cf.path_of(target, "<<dir>>/<<topic>>.out")
        got = out.read_text().splitlines() if out.exists() else None
        if got != LINES:
            cf.note(f"{target.name}: sink file holds {got!r}, expected {LINES!r}")
    cf.call("PUT", "/connectors/<<c>>/stop", status=204)
    cf.poll("/connectors/<<c>>/status", state_is("STOPPED", []))
    cf.call("GET", "/connectors/<<c>>/offsets", status=200, label="STOPPED sink offsets")

    # Scenario 58: invalid bodies on a STOPPED sink, all 400 in the reference too.
    tp = {"kafka_topic": "<<topic>>", "kafka_partition": 0}
    for body, label in [
        ({}, "{}"),
        ({"offsets": []}, "empty offsets"),
        ({"offsets": [{}]}, "empty entry"),
        ({"offsets": [{"partition": None, "offset": None}]}, "null partition"),
        ({"offsets": [{"partition": {}, "offset": None}]}, "partition without keys"),
        (
            {
                "offsets": [
                    {"partition": {"kafka_topic": "<<topic>>", "kafka_partition": "not a number"}, "offset": None}
                ]
            },
            "partition not a number",
        ),
        ({"offsets": [{"partition": tp, "offset": {}}]}, "offset without kafka_offset"),
        ({"offsets": [{"partition": tp, "offset": {"kafka_offset": "not a number"}}]}, "offset not a number"),
        ({"offsets": [{"partition": tp, "offset": {"kafka_offset": None}}]}, "kafka_offset null"),
        ({"offsets": [{"partition": {"kafka_topic": None, "kafka_partition": 0}, "offset": None}]}, "null topic"),
        (
            {"offsets": [{"partition": {"kafka_topic": "<<topic>>", "kafka_partition": None}, "offset": None}]},
            "null partition number",
        ),
    ]:
        cf.call("PATCH", "/connectors/<<c>>/offsets", body, status=400, label=f"invalid sink body: {label}")

    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": tp, "offset": {"kafka_offset": "1"}}]},
        status=200,
        label="alter (numeric string accepted): definite message",
    )
    cf.call("GET", "/connectors/<<c>>/offsets", status=200, label="altered to 1")
    cf.call("DELETE", "/connectors/<<c>>/offsets", status=200, label="reset: definite message")
    cf.call("GET", "/connectors/<<c>>/offsets", status=200, label="after reset: []")
    cf.call("DELETE", "/connectors/<<c>>/offsets", status=200, label="reset again succeeds")
    cf.call(
        "PATCH",
        "/connectors/<<c>>/offsets",
        {"offsets": [{"partition": tp, "offset": {"kafka_offset": 2}}]},
        status=200,
        label="alter to 2",
    )
    cf.call("PUT", "/connectors/<<c>>/resume", status=202)
    cf.poll(
        "/connectors/<<c>>/offsets", _sink_at(len(LINES)), timeout_s=SINK_CATCH_UP_S, label="resumed from 2, caught up"
    )
    cf.call("DELETE", "/connectors/<<c>>", status=204)
    cf.call("DELETE", "/connectors/<<src>>", status=204)
