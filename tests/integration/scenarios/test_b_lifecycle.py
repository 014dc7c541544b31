"""Section 4 group B: pause, resume, stop (KIP-52, KIP-875) on a standalone worker.

This project promises that a state change is visible in the status as soon as the request that made it
returns, so these tests read the status right after each request instead of polling for it.
"""

from __future__ import annotations

import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess

from .helpers import Api, assert_error, source_config

pytestmark = pytest.mark.integration


def states(api: Api, name: str) -> tuple[str, list[str]]:
    status = api.status(name)
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def assert_stopped(api: Api, name: str) -> None:
    assert states(api, name) == ("STOPPED", [])
    assert api.get(f"/connectors/{name}").json()["tasks"] == []
    assert api.get(f"/connectors/{name}/tasks").json() == []


def test_pause_stop_resume_cycle(api, name) -> None:
    # 25: four tasks running
    api.create(name, source_config(unique("topic"), tasks=4, throughput=20))
    api.wait_state(name, "RUNNING", 4)

    # 26: stop twice -> 204 both, STOPPED with no tasks anywhere
    for _ in range(2):
        response = api.put(f"/connectors/{name}/stop")
        assert response.status_code == 204 and response.content == b""
        assert_stopped(api, name)

    # 27: resume twice -> 202 both, RUNNING with 4 RUNNING tasks
    for _ in range(2):
        response = api.put(f"/connectors/{name}/resume")
        assert response.status_code == 202 and response.content == b""
        assert states(api, name)[0] == "RUNNING"  # visible as soon as the request returns
    api.wait_state(name, "RUNNING", 4)

    # 28: pause twice -> 202, PAUSED with 4 PAUSED tasks, visible at once
    for _ in range(2):
        assert api.put(f"/connectors/{name}/pause").status_code == 202
        assert states(api, name) == ("PAUSED", ["PAUSED"] * 4)

    # 29: PAUSED -> stop
    api.stop(name)
    assert_stopped(api, name)

    # 30: STOPPED -> pause gives PAUSED with zero tasks
    assert api.put(f"/connectors/{name}/pause").status_code == 202
    assert states(api, name) == ("PAUSED", [])
    assert api.get(f"/connectors/{name}/tasks").json() == []

    # 31: resume regenerates the 4 tasks; then delete
    api.resume(name)
    api.wait_state(name, "RUNNING", 4)
    assert len(api.get(f"/connectors/{name}/tasks").json()) == 4
    assert api.delete(f"/connectors/{name}").status_code == 204
    assert_error(api.get(f"/connectors/{name}/status"), 404)


def test_pause_resume_stop_unknown_connector_are_404(api) -> None:
    c = unique("missing")
    assert_error(api.put(f"/connectors/{c}/pause"), 404, f"Unknown connector {c}")
    assert_error(api.put(f"/connectors/{c}/resume"), 404, f"Unknown connector {c}")
    assert_error(api.put(f"/connectors/{c}/stop"), 404, f"Unknown connector {c}")
    assert c not in api.get("/connectors").json()


def test_failed_connector_can_be_stopped_fixed_and_resumed(api, name) -> None:
    # 33
    topic = unique("topic")
    api.create(name, source_config(topic, tasks=2, messages_per_task=0, **{"connector.start.fail": "true"}))
    status = api.wait_state(name, "FAILED", 0)
    assert status["connector"]["trace"], status  # section 8: a FAILED instance carries its trace
    # pause/resume answer 202 but a FAILED connector only moves to STOPPED
    assert api.put(f"/connectors/{name}/pause").status_code == 202
    assert states(api, name)[0] == "FAILED"
    api.stop(name)
    assert_stopped(api, name)
    # 36: a config update keeps the STOPPED target state
    assert api.put(f"/connectors/{name}/config", source_config(topic, tasks=2, messages_per_task=0)).status_code == 200
    assert_stopped(api, name)
    api.resume(name)
    api.wait_state(name, "RUNNING", 2)


def test_connector_throwing_on_stop_still_reports_stopped(api, name) -> None:
    # 34
    api.create(name, source_config(unique("topic"), tasks=2, messages_per_task=0, **{"connector.stop.fail": "true"}))
    api.wait_state(name, "RUNNING", 2)
    api.stop(name)
    assert_stopped(api, name)
    api.resume(name)
    api.wait_state(name, "RUNNING", 2)


def test_stopped_connector_can_be_deleted(api, name) -> None:
    # 35
    api.create(name, source_config(unique("topic"), messages_per_task=0))
    api.wait_state(name, "RUNNING", 1)
    api.stop(name)
    assert api.delete(f"/connectors/{name}").status_code == 204
    assert name not in api.get("/connectors").json()
    assert_error(api.get(f"/connectors/{name}"), 404)


def test_config_update_keeps_paused_state(api, name) -> None:
    topic = unique("topic")
    api.create(name, source_config(topic, tasks=1, messages_per_task=0))
    api.wait_state(name, "RUNNING", 1)
    assert api.put(f"/connectors/{name}/pause").status_code == 202
    assert api.put(f"/connectors/{name}/config", source_config(topic, tasks=3, messages_per_task=0)).status_code == 200
    assert states(api, name)[0] == "PAUSED"
    # the edit made while paused takes effect on resume
    api.resume(name)
    api.wait_state(name, "RUNNING", 3)


def test_target_states_survive_a_worker_restart(bootstrap_servers, tmp_path) -> None:
    # 37 (and section 0: standalone persists connectors created over REST and their target states)
    paused, stopped, running = unique("paused"), unique("stopped"), unique("running")
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers)
    with worker:
        api = Api(worker.url)
        for n in (paused, stopped, running):
            api.create(n, source_config(unique("topic"), tasks=2, messages_per_task=0))
        for n in (paused, stopped, running):
            api.wait_state(n, "RUNNING", 2)
        assert api.put(f"/connectors/{paused}/pause").status_code == 202
        api.stop(stopped)
        api.close()
    worker.start()
    try:
        api = Api(worker.url)
        assert sorted(api.get("/connectors").json()) == sorted([paused, stopped, running])
        api.wait_state(paused, "PAUSED", 2, "PAUSED")
        api.wait_state(stopped, "STOPPED", 0)
        api.wait_state(running, "RUNNING", 2)
        api.close()
    finally:
        worker.stop()
