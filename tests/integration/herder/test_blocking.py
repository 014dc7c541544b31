"""Tasks and connectors that do not stop in time (scenario 81): the herder carries on without them."""

from __future__ import annotations

import importlib
import logging
import threading

import pytest

from runtime.control.errors import NotFound

from .conftest import new_name, settle, source_config, states

pytestmark = pytest.mark.integration


def task_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(f"task-{name}-")]


def test_delete_and_stop_with_a_task_stuck_in_stop(make_herder, caplog):
    harness = make_herder(**{"task.shutdown.graceful.timeout.ms": "300"})
    h = harness.herder
    stuck, other = new_name("stuck"), new_name("other")
    h.put_connector_config(other, source_config(other, tasks=1), False)
    h.put_connector_config(stuck, source_config(stuck, tasks=2, **{"task.stop.block.ms": "1500"}), False)

    with caplog.at_level(logging.ERROR, logger="runtime.worker.task_runner"):
        h.stop_connector(stuck)
    assert states(h, stuck) == ("STOPPED", [])
    # both tasks were left in their stop(), after one graceful timeout for all of them, not one each: the waits
    # the worker gave them (it logs each) add up to one timeout
    waits = {r.args[0]: r.args[1] for r in caplog.records if r.getMessage().startswith("Graceful stop of task")}
    assert sorted(waits) == [f"{stuck}-0", f"{stuck}-1"], caplog.text
    assert sum(waits.values()) <= 0.3 + 1e-6, waits

    h.resume_connector(stuck)
    assert states(h, stuck) == ("RUNNING", ["RUNNING", "RUNNING"])
    h.delete_connector(stuck)
    with pytest.raises(NotFound):
        h.connector_status(stuck)
    for thread in task_threads(stuck):  # the abandoned tasks finish their stop(): they must not write statuses back
        thread.join(10)
        assert not thread.is_alive()
    with pytest.raises(NotFound):
        h.connector_status(stuck)
    assert h.statuses.tasks(stuck) == {}
    assert states(h, other) == ("RUNNING", ["RUNNING"])


GATED = "tests.integration.herder.gated_connectors.StopBlockingConnector"


def stop_blocking_setup(make_herder):
    """(the class name, its module with the STOP_ENTERED / STOP_RELEASED events cleared, a herder whose
    graceful timeout is far longer than any test may take)."""
    # the module the worker loads the class from (pytest imports this folder under another name)
    gated_connectors = importlib.import_module(GATED.rpartition(".")[0])
    gated_connectors.STOP_ENTERED.clear()
    gated_connectors.STOP_RELEASED.clear()
    harness = make_herder(**{"task.shutdown.graceful.timeout.ms": "600000", "rest.request.timeout.ms": "600000"})
    return GATED, gated_connectors, harness


def test_a_connector_stuck_in_stop_holds_up_no_other_request(make_herder):
    """The stop runs on the connector's own thread: the herder thread answers the next requests while
    stop() still blocks (the graceful timeout is far longer than the test may take)."""
    gated, gated_connectors, harness = stop_blocking_setup(make_herder)
    h = harness.herder
    stuck, other = new_name("stuck"), new_name("other")
    try:
        h.put_connector_config(stuck, source_config(stuck, tasks=1, **{"connector.class": gated}), False)
        assert states(h, stuck) == ("RUNNING", ["RUNNING"])

        h.delete_connector(stuck)
        assert gated_connectors.STOP_ENTERED.wait(30), "the connector's stop() was never called"
        h.put_connector_config(other, source_config(other, tasks=1), False)
        assert states(h, other) == ("RUNNING", ["RUNNING"])
        h.restart_connector(other)
        assert stuck not in h.connector_names()
        assert not gated_connectors.STOP_RELEASED.is_set()  # all of the above while stop() still blocked
    finally:
        gated_connectors.STOP_RELEASED.set()


def test_pause_stop_and_restart_answer_while_the_connector_stop_blocks(make_herder):
    """Issue 10: a pause, a stop and a restart hand the change to the connector's own thread. With stop() blocked
    (and a graceful timeout far longer than the test) each call answers promptly, the herder serves another
    connector meanwhile, and each connector reaches its state once stop() returns."""
    gated, gated_connectors, harness = stop_blocking_setup(make_herder)
    h = harness.herder
    paused, stopped, restarted = new_name("paused"), new_name("stopped"), new_name("restarted")
    other = new_name("other")
    try:
        for name in (paused, stopped, restarted):
            h.put_connector_config(name, source_config(name, tasks=1, **{"connector.class": gated}), False)
        calls = {paused: h.pause_connector, stopped: h.stop_connector, restarted: h.restart_connector}
        answered: set[str] = set()
        callers = [
            threading.Thread(target=lambda name=name, call=call: (call(name), answered.add(name)))
            for name, call in calls.items()
        ]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(10)  # the REST clients' timeout in the integration tests; stop() blocks far longer
        assert answered == set(calls)
        assert gated_connectors.STOP_ENTERED.is_set(), "no connector's stop() was called"

        h.put_connector_config(other, source_config(other, tasks=1), False)
        assert states(h, other) == ("RUNNING", ["RUNNING"])
        # while stop() blocks, no connector shows its new state yet
        assert [h.connector_status(n)["connector"]["state"] for n in calls] == ["RUNNING", "RUNNING", "RESTARTING"]
        assert not gated_connectors.STOP_RELEASED.is_set()
    finally:
        gated_connectors.STOP_RELEASED.set()
    settle(h, paused, ("PAUSED", ["PAUSED"]))
    settle(h, stopped, ("STOPPED", []))
    settle(h, restarted, ("RUNNING", ["RUNNING"]))
