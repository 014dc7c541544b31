"""The Singer source driven through the plugin API with small tap executables (scripts speaking the Singer
protocol): messages to records, STATE to offsets carried by the records before it, runs from the committed
bookmarks, tap failures and hung taps. The real tap (meltanolabs-tap-postgres) runs in
tests/integration/connectors/test_singer_postgres.py."""

from __future__ import annotations

import datetime as dt
import json
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from runtime.api import ConnectError, ConnectorContext
from runtime.connectors.singer import SingerSourceConnector
from runtime.connectors.singer.task import SingerSourceTask

SCHEMA = {
    "type": "SCHEMA",
    "stream": "public-users",
    "key_properties": ["id"],
    "schema": {
        "type": "object",
        "properties": {
            "id": {"type": ["integer"]},
            "name": {"type": ["null", "string"]},
            "score": {"type": ["null", "number"]},
            "updated_at": {"type": ["null", "string"], "format": "date-time"},
            "tags": {"type": ["null", "array"], "items": {"type": "string"}},
            "extra": {"type": ["null", "object"]},
        },
    },
}


def record(i: int) -> dict[str, Any]:
    return {
        "type": "RECORD",
        "stream": "public-users",
        "record": {
            "id": i,
            "name": f"user-{i}",
            "score": i / 2,
            "updated_at": f"2024-05-0{i}T10:00:00+00:00",
            "tags": ["a"],
            "extra": {"k": i},
        },
    }


def state(value: int) -> dict[str, Any]:
    return {
        "type": "STATE",
        "value": {"bookmarks": {"public-users": {"replication_key": "id", "replication_key_value": value}}},
    }


def write_tap(
    path: Path, messages: list[dict[str, Any]], stderr: str = "", exit_code: int = 0, hang: bool = False
) -> str:
    """A tap executable that writes `messages` (and records the arguments and state it was started with)."""
    lines = "\n".join(json.dumps(m) for m in messages)
    path.write_text(
        f"""#!{sys.executable}
import json, sys, time
args = sys.argv[1:]
with open({str(path) + ".runs"!r}, "a") as runs:
    state = json.load(open(args[args.index("--state") + 1])) if "--state" in args else None
    runs.write(json.dumps({{"args": args, "state": state}}) + "\\n")
if "--discover" in args:
    print(json.dumps({{"streams": [{{"tap_stream_id": "public-users", "stream": "public-users",
        "schema": {json.dumps(SCHEMA["schema"])}, "metadata": []}}]}}))
    sys.exit(0)
sys.stdout.write({lines!r} + "\\n")
sys.stdout.flush()
sys.stderr.write({stderr!r})
if {hang!r}:  # a hung tap that ignores SIGTERM as well
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write("hanging\\n")
    sys.stderr.flush()
    time.sleep(3600)  # the hang itself, in the tap's own process: the test waits on the task, not on time
sys.exit({exit_code})
"""
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def runs(tap: str) -> list[dict[str, Any]]:
    path = Path(tap + ".runs")
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class NoContext(ConnectorContext):
    """The connector asks nothing of its context here."""


def task_props(tap: str, **extra: str) -> dict[str, str]:
    connector = SingerSourceConnector()
    connector.initialize(NoContext())
    props = {"name": "singer", "tap": tap, "topic.prefix": "pg.", "poll.interval.ms": "3600000", **extra}
    connector.start(props)
    [config] = connector.task_configs(1)
    return config


def poll_until(task: SingerSourceTask, done, timeout_s: float = 20) -> list:
    records: list = []
    deadline = time.monotonic() + timeout_s
    while not done(records):
        assert time.monotonic() < deadline, f"timed out; got {records}"
        records.extend(task.poll() or [])
    return records


def test_records_carry_the_state_that_follows_them(tmp_path: Path, start_source) -> None:
    tap = write_tap(tmp_path / "tap", [SCHEMA, record(1), record(2), state(2), record(3), state(3)])
    task = start_source(SingerSourceTask, task_props(tap))
    records = poll_until(task, lambda r: len(r) == 3)
    assert [r.topic for r in records] == ["pg.public-users"] * 3
    assert [r.key for r in records] == [{"id": 1}, {"id": 2}, {"id": 3}]
    first = records[0].value
    assert first["name"] == "user-1" and first["score"] == 0.5 and first["tags"] == ["a"]
    assert first["updated_at"] == dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)
    assert first["extra"] == '{"k":1}'  # a free-form object travels as JSON text
    assert [f.name for f in records[0].value_schema.fields] == list(SCHEMA["schema"]["properties"])
    # the offsets: only the last record before each STATE carries it
    assert [(r.source_partition, r.source_offset) for r in records] == [
        (None, None),
        ({"stream": "public-users"}, {"replication_key": "id", "replication_key_value": 2}),
        ({"stream": "public-users"}, {"replication_key": "id", "replication_key_value": 3}),
    ]


def test_a_run_starts_from_the_committed_bookmarks(tmp_path: Path, offsets, start_source) -> None:
    offsets.commit({"stream": "public-users"}, {"replication_key": "id", "replication_key_value": 7})
    tap = write_tap(tmp_path / "tap", [SCHEMA, record(8), state(8)])
    task = start_source(SingerSourceTask, task_props(tap))
    poll_until(task, lambda r: len(r) == 1)
    run = runs(tap)[-1]
    assert run["state"] == {"bookmarks": {"public-users": {"replication_key": "id", "replication_key_value": 7}}}
    catalog = json.loads(Path(run["args"][run["args"].index("--catalog") + 1]).read_text())
    [entry] = catalog["streams"]
    assert entry["tap_stream_id"] == "public-users"
    assert {"breadcrumb": [], "metadata": {"selected": True}} in entry["metadata"]


def test_a_failing_tap_fails_the_task_with_its_stderr(tmp_path: Path, start_source) -> None:
    tap = write_tap(
        tmp_path / "tap",
        [SCHEMA, record(1)],
        stderr="connecting...\npsycopg2.OperationalError: password authentication failed for s3cret\n",
        exit_code=1,
    )
    task = start_source(SingerSourceTask, task_props(tap, **{"tap.config": '{"password": "s3cret"}'}))
    with pytest.raises(ConnectError) as failed:
        poll_until(task, lambda r: False)
    message = str(failed.value)
    assert "exited with code 1" in message
    assert "password authentication failed for [hidden]" in message and "s3cret" not in message


def test_a_hung_tap_is_killed_when_the_task_stops(tmp_path: Path, start_source) -> None:
    tap = write_tap(tmp_path / "tap", [SCHEMA, record(1)], hang=True)
    task = start_source(SingerSourceTask, task_props(tap, **{"tap.stop.timeout.ms": "200"}))
    # once the tap says so, it ignores SIGTERM
    poll_until(task, lambda r: task._process is not None and "hanging" in task._process.stderr_tail())
    pid = task._process.proc.pid
    assert psutil.pid_exists(pid)
    task.stop()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_line_that_is_no_singer_message_fails_the_task(tmp_path: Path, start_source) -> None:
    tap = tmp_path / "tap"
    write_tap(tap, [SCHEMA])
    tap.write_text(tap.read_text().replace("sys.stdout.write(", "print('INFO starting'); sys.stdout.write("))
    task = start_source(SingerSourceTask, task_props(str(tap)))
    with pytest.raises(ConnectError, match="not a Singer message: b'INFO starting'"):
        poll_until(task, lambda r: False)


def test_validate_reports_the_tap_and_its_streams(tmp_path: Path) -> None:
    tap = write_tap(tmp_path / "tap", [])
    connector = SingerSourceConnector()
    values = {
        v.name: v
        for v in connector.validate(
            {"tap": tap, "topic.prefix": "pg.", "streams": "public-nope", "replication.keys": "public-users=nope"}
        )
    }
    assert values["streams"].recommended_values == ["public-users"]
    assert values["streams"].errors == ["The tap has no streams ['public-nope']; its streams: ['public-users']"]
    missing = {v.name: v for v in connector.validate({"tap": "tap-that-is-not-installed", "topic.prefix": "x"})}
    assert "No tap executable 'tap-that-is-not-installed' on the worker's PATH" in missing["tap"].errors[0]
    bad_json = {v.name: v for v in connector.validate({"tap": tap, "topic.prefix": "x", "tap.config": "{nope"})}
    assert bad_json["tap.config"].errors and "{nope" not in bad_json["tap.config"].errors[0]


def test_alter_offsets_accepts_stream_bookmarks_only() -> None:
    connector = SingerSourceConnector()
    assert connector.alter_offsets({}, [({"stream": "public-users"}, None)]) is True
    assert connector.alter_offsets({}, [({"stream": "public-users"}, {"replication_key_value": 3})]) is True
    with pytest.raises(ConnectError, match="exactly one key"):
        connector.alter_offsets({}, [({"table": "x"}, None)])
    with pytest.raises(ConnectError, match="strings, numbers, booleans or null"):
        connector.alter_offsets({}, [({"stream": "s"}, {"nested": {"a": 1}})])


def test_the_tap_config_file_is_private(tmp_path: Path, start_source) -> None:
    tap = write_tap(tmp_path / "tap", [SCHEMA, record(1), state(1)])
    task = start_source(SingerSourceTask, task_props(tap, **{"tap.config": '{"password": "s3cret"}'}))
    poll_until(task, lambda r: len(r) == 1)
    config = Path(runs(tap)[-1]["args"][1])
    assert json.loads(config.read_text()) == {"password": "s3cret"}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600 and stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    task.stop()
    assert not config.exists()


def test_between_runs_the_task_waits_long_only_once_its_records_are_committed(tmp_path: Path, start_source) -> None:
    tap = write_tap(tmp_path / "tap", [SCHEMA, record(1), state(1)])
    task = start_source(SingerSourceTask, task_props(tap))  # the next run is an hour away
    poll_until(task, lambda r: len(r) == 1 and task._process is None)
    # the runtime commits offsets between polls: with the record not committed yet, a poll returns soon
    assert task.poll() is None
    task.commit()
    # once committed, the task waits for the next run, until the runtime wakes it (a stop, a pause)
    waiting = threading.Thread(target=task.poll)
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()
    task._connect_wakeup()
    waiting.join(10)
    assert not waiting.is_alive()
