"""A stop request during a broker outage ends a source task's loop: a task whose producer queue is full
(the broker is frozen, SIGSTOP) must not spin on it after the stop, and commits no offset of what it
never sent."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from runtime.embedded_broker import EmbeddedBroker
from tests.integration.scenarios.helpers import Api, source_config
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration


def test_a_stop_during_a_broker_outage_returns(fresh_broker: EmbeddedBroker, tmp_path: Path) -> None:
    # a small producer queue, so the outage fills it at once
    props = {"producer.queue.buffering.max.messages": 1000, "task.shutdown.graceful.timeout.ms": 20000}
    with WorkerProcess(tmp_path, fresh_broker.bootstrap_servers, props=props) as worker:
        api = Api(worker.url, timeout_s=60)
        pid = fresh_broker._process.pid  # type: ignore[union-attr]
        try:
            name = unique("outage")
            assert api.post("/connectors", {"name": name, "config": source_config(unique("t"))}).status_code == 201
            api.wait_state(name, "RUNNING", 1, "RUNNING")
            os.kill(pid, signal.SIGSTOP)
            try:
                response = api.put(f"/connectors/{name}/stop")
                assert response.status_code == 204, response.text
                log_text = worker.log_path.read_text()
                # the loop ended by itself, within the graceful timeout: the task was not abandoned
                assert "Graceful stop of task" not in log_text
                assert api.get(f"/connectors/{name}/status").json()["connector"]["state"] == "STOPPED"
            finally:
                os.kill(pid, signal.SIGCONT)
            assert "could not queue" in worker.log_path.read_text()  # the outage did fill the queue
            wait_for(lambda: api.get("/health").status_code == 200, 60, what="a healthy worker after the outage")
        finally:
            api.close()
            worker.stop()
