"""Connectors blocked in start() or stop() on a distributed worker (issue 10). The tick thread hands a
connector's stop, start and restart to the connector's own thread and goes on: a delete and a restart of
connectors blocked in start() hold up nothing else, and a connector revoked while its stop() blocks is
reported released (so handed to another worker) only once that stop() has returned.

Each blocked connector is SequenceSource whose start() or stop() waits for a file the test creates
(`connector.start.block.until.file`, `connector.stop.block.until.file`)."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

import httpx
import pytest

from tests.integration.scenarios.helpers import SOURCE
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration

CLIENT_TIMEOUT_S = 10  # the connectors' start() blocks until the end of the test, far longer


def test_delete_and_restart_while_the_connector_start_blocks(bootstrap_servers: str, tmp_path: Path) -> None:
    """On a worker alone in its group: the delete and the restart are queued behind the blocked start()s while
    the tick thread starts another connector; once start() returns, the deleted connector's status stays gone
    and the restarted connector runs."""
    cluster = Cluster(tmp_path, bootstrap_servers, 1).start()
    gates = {kind: tmp_path / f"{kind}-gate" for kind in ("deleted", "restarted")}
    names = {kind: unique(kind) for kind in gates}
    try:
        log = cluster.workers[0].log_path

        def create(name: str, **extra: str) -> int:
            config = {"connector.class": SOURCE, "topic": unique("t"), "tasks.max": "1", "throughput": "10", **extra}
            with httpx.Client(base_url=cluster.workers[0].url, timeout=CLIENT_TIMEOUT_S) as client:
                return client.post("/connectors", json={"name": name, "config": config}).status_code

        def request(method: str, path: str) -> int:
            with httpx.Client(base_url=cluster.workers[0].url, timeout=CLIENT_TIMEOUT_S) as client:
                return client.request(method, path).status_code

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            gated = {kind: {"connector.start.block.until.file": str(gate)} for kind, gate in gates.items()}
            assert list(pool.map(lambda kind: create(names[kind], **gated[kind]), gates)) == [201, 201]
        for gate in gates.values():
            wait_for(
                lambda: f"start() waits until {gate} exists" in log.read_text(errors="replace"),
                30,
                0.1,
                f"a start() to block on {gate.name}",
            )

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            # the restart answers once its new start has shown, or after the best-effort wait: not held by start()
            restart = pool.submit(request, "POST", f"/connectors/{names['restarted']}/restart")
            assert request("DELETE", f"/connectors/{names['deleted']}") == 204
            other = unique("other")
            assert create(other) == 201
            cluster.wait_state(other, "RUNNING", 1, timeout_s=30)
            assert restart.result() == 204
        assert cluster.status(names["restarted"])["connector"]["state"] == "RESTARTING"
        assert names["deleted"] not in cluster.api(0).get("/connectors").json()

        for gate in gates.values():
            gate.touch()
        cluster.wait_state(names["restarted"], "RUNNING", 1, timeout_s=30)
        # the deleted connector's start() has returned and its stop() run: what it reported on the way is void
        wait_for(
            lambda: f"Completed shutdown for connector {names['deleted']}" in log.read_text(errors="replace"),
            30,
            0.1,
            "the deleted connector to stop once its start() returned",
        )
        assert cluster.api(0).get(f"/connectors/{names['deleted']}/status").status_code == 404
        assert sorted(cluster.api(0).get("/connectors").json()) == sorted([names["restarted"], other])
    finally:
        for gate in gates.values():
            gate.touch()
        cluster.stop()


def test_a_revoked_connector_is_released_once_its_stop_returns(bootstrap_servers: str, tmp_path: Path) -> None:
    """A second worker joins and the rebalance revokes, from the first, a connector whose stop() blocks and its
    task: the task moves to the newcomer at once, the connector only once its stop() has returned (it is
    never reported released, so never handed out, while it may still run here)."""
    cluster = Cluster(tmp_path, bootstrap_servers, 2)
    gate = tmp_path / "stop-gate"
    # the assignor revokes a worker's surplus from the end of its units in name order
    steady, gated = unique("aa-steady"), unique("zz-gated")
    try:
        cluster.workers[0].start()
        api = cluster.api(0)
        for name, extra in ((steady, {}), (gated, {"connector.stop.block.until.file": str(gate)})):
            assert (
                api.post(
                    "/connectors",
                    json={
                        "name": name,
                        "config": {
                            "connector.class": SOURCE,
                            "topic": unique("t"),
                            "tasks.max": "1",
                            "throughput": "10",
                            **extra,
                        },
                    },
                ).status_code
                == 201
            )
            cluster.wait_state(name, "RUNNING", 1)
        first = cluster.worker_id(0)

        cluster.workers[1].start()
        second = cluster.worker_id(1)
        connector_shown: list[tuple[str, str]] = []

        def task_moved() -> bool:
            body = cluster.status(gated)
            if body is None:
                return False
            connector_shown.append((body["connector"]["state"], body["connector"]["worker_id"]))
            return [(t["state"], t["worker_id"]) for t in body["tasks"]] == [("RUNNING", second)]

        wait_for(task_moved, 60, 0.1, "the revoked task to run on the new worker")
        assert set(connector_shown) == {("RUNNING", first)}, "the connector was released while its stop() blocked"

        gate.touch()
        body = cluster.wait_state(gated, "RUNNING", 1, timeout_s=60, exclude_worker=first)
        assert body["connector"]["worker_id"] == second
    finally:
        gate.touch()
        cluster.stop()
