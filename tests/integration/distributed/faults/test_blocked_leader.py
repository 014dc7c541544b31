"""A connector blocking in start() on the leader while a follower is killed (kill -9): the dead follower's
connector and tasks must run on the survivors without waiting for that start() to return (one slow
connector must not stall failover for the whole group), and the slow connector runs in the end.

The blocking connector is SequenceSource with `connector.start.block.until.file`: its start() blocks until
the test has seen the failover through (up to the issue's 60 s and more), then the test lets it go on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.cluster import Cluster
from tests.support.worker import wait_for

from .workload import Sequence, check_after_fault, now_ms, wait_all_running

FAILOVER_TIMEOUT_S = 90  # the slow start stays blocked all along
LEADER, VIA, VICTIM = 0, 1, 2


def test_a_follower_killed_while_the_leader_blocks_in_a_connector_start(
    new_cluster: Callable[..., Cluster], bootstrap_servers: str, tmp_path: Path
) -> None:
    # worker 0 starts first (so leads) and has the lowest id: the assignor gives a new unit to the least
    # loaded worker with the lowest id, so once each worker runs one connector the next goes to the leader
    cluster = new_cluster(bootstrap_servers, lowest_id_first=True).start()
    steady = []
    for _ in range(3):
        steady.append(Sequence.create(cluster, bootstrap_servers, 2, via=VIA))
        cluster.wait_state(steady[-1].name, "RUNNING", 2, timeout_s=60)
    owners = {cluster.status(s.name)["connector"]["worker_id"] for s in steady}
    assert owners == {cluster.worker_id(i) for i in range(3)}, f"one connector a worker expected: {owners}"
    before = {s.name: s.wait_committed_past(cluster, {}) for s in steady}

    release = tmp_path / "release-the-slow-start"
    slow = Sequence.create(cluster, bootstrap_servers, 1, via=VIA, **{"connector.start.block.until.file": str(release)})
    leader_log = cluster.workers[LEADER].log_path
    # nothing in the REST status tells a start() under way; the leader's log does
    wait_for(
        lambda: f"Creating connector {slow.name}" in leader_log.read_text(errors="replace"),
        30,
        0.25,
        "the slow connector starting on the leader",
    )
    fault_ms = now_ms()
    victim_id = cluster.worker_id(VICTIM)
    cluster.workers[VICTIM].kill()

    for seq in steady:
        cluster.wait_state(
            seq.name, "RUNNING", seq.tasks, via=VIA, timeout_s=FAILOVER_TIMEOUT_S, exclude_worker=victim_id
        )
    slow_when_moved = cluster.status(slow.name, VIA)
    release.touch()
    assert not wait_all_running(cluster, [slow], [VIA], timeout_s=60)
    check_after_fault(cluster, bootstrap_servers, [*steady, slow], [VIA, LEADER], {**before, slow.name: {}}, fault_ms)
    # asserted last, so that the checks above still run when it fails
    assert slow_when_moved is None or slow_when_moved["connector"]["state"] != "RUNNING", (
        f"failover waited for the leader's connector start() to return: {slow_when_moved}"
    )
