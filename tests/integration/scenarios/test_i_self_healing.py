"""Self-healing (this runtime's extension) on a standalone worker, on the real clock: a connector that sets
`runtime.auto.restart.enabled` has its FAILED tasks restarted with Strimzi's backoff, counted in units of
`runtime.auto.restart.backoff.unit.ms` (a minute by default; UNIT_MS here): at once, then 2 and 6 units after
the previous restart. A task instance fails after FAIL_AFTER records, the first three instances only
(`task.fail.times`), so the fourth runs on.

What the runtime decided is read from what it shows: each restart's log line (its number and the backoff it
waited), the status's `auto_restart` (count, last and next restart), the metric; never the test's own clock.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.support.broker import unique
from tests.support.worker import wait_for

from .helpers import Api, Kafka, assert_error, source_config, values_by_key

pytestmark = pytest.mark.integration

UNIT_MS = 400
FAIL_AFTER = 3
BACKOFF_UNITS = {1: 2, 2: 6, 3: 12}  # after the n-th restart, the next waits this many units


def healing(topic: str, **settings: Any) -> dict[str, str]:
    return source_config(
        topic,
        tasks=1,
        throughput=20,
        **{
            "task.fail.after.records": FAIL_AFTER,
            "task.fail.times": 3,
            "runtime.auto.restart.enabled": "true",
            "runtime.auto.restart.backoff.unit.ms": UNIT_MS,
            **settings,
        },
    )


def task0(api: Api, name: str) -> dict[str, Any] | None:
    response = api.get(f"/connectors/{name}/status")
    tasks = response.json()["tasks"] if response.status_code == 200 else []
    return tasks[0] if tasks else None


def ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def restart_lines(log: str, name: str) -> list[str]:
    return [
        line.split("Auto-restart ", 1)[1]
        for line in log.splitlines()
        if "Auto-restart " in line and f"task {name}-0" in line
    ]


def test_a_task_failing_three_times_recovers_with_the_backoff_then_its_count_resets(
    api: Api, kafka: Kafka, name: str, worker, mode: str
) -> None:
    topic = kafka.create_topic(unique("healing"))
    api.create(name, healing(topic))
    seen: list[dict[str, Any]] = []  # every distinct auto_restart view while FAILED

    def recovered() -> bool:
        task = task0(api, name)
        view = (task or {}).get("auto_restart")
        if task and task["state"] == "FAILED" and view and view not in seen:
            seen.append(view)
        return bool(task and task["state"] == "RUNNING" and view and view["count"] == 3)

    wait_for(recovered, 60, 0.02, "task 0 RUNNING after its third automatic restart")
    # while it waited, the status said when the next restart would come: 2, then 6 units after the last
    waits = {
        v["count"]: ms(v["next_restart"]) - ms(v["last_restart"]) for v in seen if v["count"] and v["next_restart"]
    }
    assert waits and all(waits[n] == BACKOFF_UNITS[n] * UNIT_MS for n in waits), waits
    assert all(v["max_restarts"] is None and not v["exhausted"] for v in seen)
    lines = restart_lines(worker.log_tail(5000), name)
    assert [line.split(", answering")[0] for line in lines] == [
        f"1 of task {name}-0 (backoff 0 ms after the previous one)",
        f"2 of task {name}-0 (backoff {2 * UNIT_MS} ms after the previous one)",
        f"3 of task {name}-0 (backoff {6 * UNIT_MS} ms after the previous one)",
    ]
    assert all(f"made task {name}-0 fail after {FAIL_AFTER} records" in line for line in lines)  # the failure answered
    # four instances: three made FAIL_AFTER records each, the fourth goes on
    wait_for(lambda: len(values_by_key(kafka.read_all(topic)).get(f"{name}-0", [])) > 3 * FAIL_AFTER, 30, 0.5)
    if mode == "standalone":  # a cluster's metrics are the owner's: tests/integration/distributed covers them
        metrics = api.get("/metrics").text
        assert f'connect_runtime_task_auto_restarts_total{{connector="{name}",task="0"}} 3.0' in metrics

    # healthy for more than 12 units since its last restart: the count starts again, and the status shows none
    wait_for(lambda: "auto_restart" not in (task0(api, name) or {"auto_restart": 1}), 30, 0.1, "the count reset")
    assert task0(api, name)["state"] == "RUNNING"


def test_it_stops_after_the_maximum(api: Api, kafka: Kafka, name: str, worker) -> None:
    api.create(name, healing(kafka.create_topic(unique("healing")), **{"runtime.auto.restart.max.restarts": 2}))

    def exhausted() -> dict[str, Any] | None:
        task = task0(api, name)
        return task if task and (task.get("auto_restart") or {}).get("exhausted") else None

    task = wait_for(exhausted, 60, 0.1, "task 0 FAILED for good after 2 automatic restarts")
    assert task["state"] == "FAILED" and f"made task {name}-0 fail" in task["trace"]
    assert {k: task["auto_restart"][k] for k in ("count", "max_restarts", "next_restart")} == {
        "count": 2,
        "max_restarts": 2,
        "next_restart": None,
    }
    given_up = f"Not restarting task {name}-0 again: it failed after 2 automatic restart(s), the maximum"
    log = wait_for(lambda: (lambda text: text if given_up in text else None)(worker.log_tail(5000)), 10, 0.1)
    assert len(restart_lines(log, name)) == 2 and log.count(given_up) == 1


def test_self_healing_settings_are_validated_and_off_by_default(api: Api, kafka: Kafka, name: str) -> None:
    bad = healing("t", **{"runtime.auto.restart.max.restarts": "many"})
    assert_error(
        api.post("/connectors", {"name": name, "config": bad}),
        400,
        "Invalid value many for configuration runtime.auto.restart.max.restarts: Not a number of type INT",
    )
    plain = source_config(kafka.create_topic(unique("plain")), tasks=1, **{"task.fail.after.records": FAIL_AFTER})
    api.create(name, plain)
    task = wait_for(lambda: (lambda t: t if t and t["state"] == "FAILED" else None)(task0(api, name)), 30, 0.1)
    assert set(task) == {"id", "state", "worker_id", "trace"}  # the reference's body, exactly
