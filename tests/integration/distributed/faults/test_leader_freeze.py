"""The leader frozen (SIGSTOP) while a connector is created through another worker, then resumed: the
follower forwarded the create to the frozen leader, and routes it again once the group has a new leader, so
it is created while the old leader is still frozen (not refused after the whole forward timeout); the new
connector ends up with its config and running, and the leader's resumption disturbs neither connector."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx

from tests.support.cluster import Cluster

from .workload import Sequence, check_after_fault, frozen, now_ms

TASKS = 6
LEADER = 0  # the worker started first: the group coordinator makes the first member to join the leader
VIA = 1
# how long the create may wait while the leader is frozen: a session timeout and a rebalance are seconds
# (tests/support/cluster.py), the forward timeout it must not wait for is 90 s
WHILE_FROZEN_S = 60


def test_a_connector_created_while_the_leader_is_frozen(
    new_cluster: Callable[..., Cluster], bootstrap_servers: str
) -> None:
    # lowest id first: the connector goes to the leader, which then is frozen owning a connector and tasks
    cluster = new_cluster(bootstrap_servers, lowest_id_first=True).start()
    old = Sequence.create(cluster, bootstrap_servers, TASKS)
    cluster.wait_state(old.name, "RUNNING", TASKS, timeout_s=60)
    assert cluster.status(old.name)["connector"]["worker_id"] == cluster.worker_id(LEADER)
    new = Sequence.define(bootstrap_servers, 3)
    before = {old.name: old.wait_committed_past(cluster, {}), new.name: {}}
    answers: list[httpx.Response | BaseException] = []

    def create() -> None:
        try:
            with httpx.Client(base_url=cluster.workers[VIA].url, timeout=150) as client:
                answers.append(client.post("/connectors", json={"name": new.name, "config": new.config}))
        except BaseException as exc:  # noqa: BLE001 - reported below
            answers.append(exc)

    fault_ms = now_ms()
    process = cluster.workers[LEADER].process
    assert process is not None
    creating = threading.Thread(target=create)
    with frozen(process.pid):
        creating.start()
        # the others notice the leader is gone: its units run elsewhere
        cluster.wait_state(old.name, "RUNNING", TASKS, via=VIA, timeout_s=60, exclude_worker=cluster.worker_id(LEADER))
        # the follower forwarded the create to the frozen leader: it follows the new one
        creating.join(timeout=WHILE_FROZEN_S)
        assert answers, "the create was not answered while the old leader was frozen"
    first = answers[0]
    print(f"create answered: {first if isinstance(first, BaseException) else (first.status_code, first.text[:300])}")
    assert not isinstance(first, BaseException), first
    assert first.status_code == 201, first.text
    # the resumed leader's own status view is checked last: it wrote UNASSIGNED for what it lost after the
    # new owners' RUNNING, which must not hide theirs (KafkaStatusStore orders statuses by generation)
    check_after_fault(cluster, bootstrap_servers, [old, new], [VIA, 2, LEADER], before, fault_ms)
