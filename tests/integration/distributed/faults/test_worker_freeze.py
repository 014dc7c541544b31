"""A worker frozen (SIGSTOP) longer than the session timeout, then resumed: the others take its tasks over
while it is frozen; once resumed it must stop them rather than run them beside their new owners, and it
rejoins the group."""

from __future__ import annotations

from collections.abc import Callable

from tests.support.cluster import Cluster
from tests.support.worker import wait_for

from .workload import Sequence, check_after_fault, frozen, now_ms

TASKS = 3  # a connector: two connectors of three tasks, so two tasks a worker
VICTIM = 1  # a follower, owning the second connector (see below) and two tasks


def test_a_worker_frozen_past_the_session_timeout_hands_over_and_rejoins(
    new_cluster: Callable[..., Cluster], bootstrap_servers: str
) -> None:
    # lowest id first: the first connector goes to worker 0 (the leader), the second to worker 1 (the victim)
    cluster = new_cluster(bootstrap_servers, lowest_id_first=True).start()
    seqs = []
    for _ in range(2):
        seqs.append(Sequence.create(cluster, bootstrap_servers, TASKS))
        cluster.wait_state(seqs[-1].name, "RUNNING", TASKS, timeout_s=60)
    victim_id = cluster.worker_id(VICTIM)
    assert cluster.status(seqs[1].name)["connector"]["worker_id"] == victim_id
    assert sum(s.owners(cluster).get(victim_id, 0) for s in seqs) > 0, "the victim runs none of the tasks"
    before = {s.name: s.wait_committed_past(cluster, {}) for s in seqs}
    fault_ms = now_ms()
    process = cluster.workers[VICTIM].process
    assert process is not None
    with frozen(process.pid):
        # frozen until the others have run its work for a while: it resumes holding work that now runs elsewhere
        for seq in seqs:
            cluster.wait_state(seq.name, "RUNNING", TASKS, timeout_s=60, exclude_worker=victim_id)
        for seq in seqs:
            seq.wait_committed_past(cluster, seq.committed(cluster))
    # back in the group: the balanced assignment gives the resumed worker tasks again
    wait_for(
        lambda: sum(s.owners(cluster).get(victim_id, 0) for s in seqs),
        60,
        0.25,
        "the resumed worker running tasks again",
    )
    # the resumed worker's own status view is checked last: it wrote UNASSIGNED for what it lost after the
    # new owners' RUNNING, which must not hide theirs (KafkaStatusStore orders statuses by generation)
    check_after_fault(cluster, bootstrap_servers, seqs, [0, 2, VICTIM], before, fault_ms)
