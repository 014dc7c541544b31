"""The Airbyte source driven through the plugin API with a small source executable (a script speaking the Airbyte
protocol): spec validation and a failing check at validate, records and states (per stream and GLOBAL) to
offsets, the committed state given back with --state, and a failed read's TRACE error in the task's error.
The real source (airbyte-source-faker) runs in tests/integration/taps/test_airbyte_faker.py."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from runtime.api import ConnectError, ConnectorContext
from runtime.connectors.airbyte import AirbyteSourceConnector
from runtime.connectors.airbyte.task import AirbyteSourceTask

SPEC = {
    "connectionSpecification": {
        "type": "object",
        "required": ["api_key"],
        "properties": {"api_key": {"type": "string", "airbyte_secret": True}, "pages": {"type": "integer"}},
    }
}
STREAM = {
    "name": "orders",
    "json_schema": {"type": "object", "properties": {"id": {"type": "integer"}, "total": {"type": "number"}}},
    "supported_sync_modes": ["full_refresh", "incremental"],
    "source_defined_cursor": True,
    "default_cursor_field": ["id"],
    "source_defined_primary_key": [["id"]],
}


def record(i: int) -> dict[str, Any]:
    return {"type": "RECORD", "record": {"stream": "orders", "data": {"id": i, "total": i * 1.5}, "emitted_at": 0}}


def stream_state(i: int) -> dict[str, Any]:
    return {
        "type": "STATE",
        "state": {"type": "STREAM", "stream": {"stream_descriptor": {"name": "orders"}, "stream_state": {"id": i}}},
    }


def write_source(path: Path, read: list[dict[str, Any]], exit_code: int = 0) -> str:
    """A source whose check fails unless api_key is "good", and whose read writes `read` (recording its state)."""
    lines = "\n".join(json.dumps(m) for m in read)
    path.write_text(
        f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
command = args[0]
config = json.load(open(args[args.index("--config") + 1])) if "--config" in args else {{}}
def out(message):
    print(json.dumps(message))
if command == "spec":
    out({{"type": "SPEC", "spec": {SPEC!r}}})
elif command == "check":
    ok = config.get("api_key") == "good"
    out({{"type": "LOG", "log": {{"level": "INFO", "message": "checking"}}}})
    out({{"type": "CONNECTION_STATUS", "connectionStatus": {{"status": "SUCCEEDED" if ok else "FAILED",
        "message": None if ok else "401 Unauthorized: the API key " + config.get("api_key", "") + " is not valid"}}}})
elif command == "discover":
    out({{"type": "CATALOG", "catalog": {{"streams": [{STREAM!r}]}}}})
elif command == "read":
    state = json.load(open(args[args.index("--state") + 1])) if "--state" in args else None
    with open({str(path) + ".states"!r}, "a") as f:
        f.write(json.dumps(state) + "\\n")
    sys.stdout.write({lines!r} + "\\n")
    sys.exit({exit_code})
"""
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def props(source: str, api_key: str = "good") -> dict[str, str]:
    return {
        "name": "orders",
        "source": source,
        "source.config": json.dumps({"api_key": api_key}),
        "topic.prefix": "api.",
        "poll.interval.ms": "3600000",
    }


def task_props(source: str) -> dict[str, str]:
    connector = AirbyteSourceConnector()
    connector.initialize(ConnectorContext())
    connector.start(props(source))
    [config] = connector.task_configs(4)  # one stream: one task
    return config


def poll_until(task: AirbyteSourceTask, done, timeout_s: float = 20) -> list:
    records: list = []
    deadline = time.monotonic() + timeout_s
    while not done(records):
        assert time.monotonic() < deadline, f"timed out; got {records}"
        records.extend(task.poll() or [])
    return records


def errors(values) -> dict[str, list[str]]:
    return {v.name: v.errors for v in values if v.errors}


def test_validate_checks_the_spec_then_runs_the_check(tmp_path: Path) -> None:
    source = write_source(tmp_path / "source", [])
    connector = AirbyteSourceConnector()
    assert errors(connector.validate({**props(source), "source.config": '{"pages": "x"}'})) == {
        "source.config": [
            "The config does not match the source's spec: (the config): 'api_key' is a required property",
            "The config does not match the source's spec: pages: 'x' is not of type 'integer'",
        ]
    }
    # the check's message, with the secret the spec marks taken out
    assert errors(connector.validate(props(source, "wrong-key-123"))) == {
        "source.config": ["The source's check failed: 401 Unauthorized: the API key [hidden] is not valid"]
    }
    values = {v.name: v for v in connector.validate(props(source))}
    assert not errors(values.values()) and values["streams"].recommended_values == ["orders"]


def test_records_and_states_become_records_with_offsets_and_the_state_comes_back(
    tmp_path: Path, offsets, start_source
) -> None:
    offsets.commit({"stream": "orders"}, {"id": 1})
    source = write_source(tmp_path / "source", [record(2), record(3), stream_state(3)])
    task = start_source(AirbyteSourceTask, task_props(source))
    records = poll_until(task, lambda r: len(r) == 2)
    assert [(r.topic, r.key, r.value) for r in records] == [
        ("api.orders", {"id": 2}, {"id": 2, "total": 3.0}),
        ("api.orders", {"id": 3}, {"id": 3, "total": 4.5}),
    ]
    assert [(r.source_partition, r.source_offset) for r in records] == [(None, None), ({"stream": "orders"}, {"id": 3})]
    [given] = [json.loads(line) for line in Path(source + ".states").read_text().splitlines()]
    assert given == [{"type": "STREAM", "stream": {"stream_descriptor": {"name": "orders"}, "stream_state": {"id": 1}}}]


def test_a_global_state_is_one_offset(tmp_path: Path, start_source) -> None:
    shared = {"lsn": 42}
    global_state = {
        "type": "STATE",
        "state": {
            "type": "GLOBAL",
            "global": {
                "shared_state": shared,
                "stream_states": [{"stream_descriptor": {"name": "orders"}, "stream_state": {"id": 1}}],
            },
        },
    }
    source = write_source(tmp_path / "source", [record(1), global_state])
    task = start_source(AirbyteSourceTask, task_props(source))
    [carrier] = poll_until(task, lambda r: len(r) == 1)
    assert carrier.source_partition == {"global": "state"}
    assert json.loads(carrier.source_offset["shared_state.json"]) == shared


def test_a_failed_read_fails_the_task_with_the_trace_error(tmp_path: Path, start_source) -> None:
    trace = {
        "type": "TRACE",
        "trace": {
            "type": "ERROR",
            "emitted_at": 0,
            "error": {"message": "Rate limit exceeded", "internal_message": "HTTP 429", "failure_type": "system_error"},
        },
    }
    source = write_source(tmp_path / "source", [record(1), trace], exit_code=1)
    task = start_source(AirbyteSourceTask, task_props(source))
    with pytest.raises(
        ConnectError, match=r"exited with code 1; the last lines of its stderr:\nRate limit exceeded \(HTTP 429\)"
    ):
        poll_until(task, lambda r: False)
