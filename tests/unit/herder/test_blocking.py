"""Tasks that do not stop in time (scenario 81): the herder carries on without them."""
from __future__ import annotations

import time

import pytest

from runtime.control.errors import NotFound

from .conftest import new_name, source_config, states


def test_delete_and_stop_with_a_task_stuck_in_stop(make_herder):
    harness = make_herder(**{"task.shutdown.graceful.timeout.ms": "300"})
    h = harness.herder
    stuck, other = new_name("stuck"), new_name("other")
    h.put_connector_config(other, source_config(other, tasks=1), False)
    h.put_connector_config(stuck, source_config(stuck, tasks=2, **{"task.stop.block.ms": "1500"}), False)

    started = time.monotonic()
    h.stop_connector(stuck)
    assert time.monotonic() - started < 1.4  # one graceful timeout for all tasks, not one each
    assert states(h, stuck) == ("STOPPED", [])

    h.resume_connector(stuck)
    assert states(h, stuck) == ("RUNNING", ["RUNNING", "RUNNING"])
    h.delete_connector(stuck)
    with pytest.raises(NotFound):
        h.connector_status(stuck)
    time.sleep(1.6)  # the abandoned task threads finish their stop(): they must not write statuses back
    with pytest.raises(NotFound):
        h.connector_status(stuck)
    assert h.statuses.tasks(stuck) == {}
    assert states(h, other) == ("RUNNING", ["RUNNING"])
