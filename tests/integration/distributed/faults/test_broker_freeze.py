"""The broker frozen (SIGSTOP of the Tansu process) for 30 s, then resumed: every worker is cut off at
once, then the cluster must come back with every task running once, from its committed offsets, and
nothing lost. Whether the workers stop their tasks meanwhile (the package docs say a worker whose heartbeats go
unanswered for a session timeout does) is not asserted: nobody can take them over while the broker is away.

The broker is one of this test's own (fresh_broker): freezing the session broker would stall every
other test using it."""

from __future__ import annotations

import time
from collections.abc import Callable

from runtime.embedded_broker import EmbeddedBroker
from tests.support.cluster import Cluster

from .workload import Sequence, check_after_fault, frozen, now_ms

TASKS = 6
FREEZE_S = 30  # the fault itself, as specified; nothing waits on it


def broker_pid(broker: EmbeddedBroker) -> int:
    # EmbeddedBroker keeps its process to itself; read it here rather than widen the runtime's API for a test
    process = broker._process
    assert process is not None and process.poll() is None, "the broker is not running"
    return process.pid


def test_the_broker_frozen_for_30_seconds(fresh_broker: EmbeddedBroker, new_cluster: Callable[..., Cluster]) -> None:
    # fresh_broker first: set up first, so torn down after the workers (who would otherwise wait on it to stop)
    bootstrap = fresh_broker.bootstrap_servers
    cluster = new_cluster(bootstrap).start()
    seq = Sequence.create(cluster, bootstrap, TASKS)
    cluster.wait_state(seq.name, "RUNNING", TASKS, timeout_s=60)
    before = seq.wait_committed_past(cluster, {})
    fault_ms = now_ms()
    with frozen(broker_pid(fresh_broker)):
        time.sleep(FREEZE_S)  # the fault itself (a broker away for 30 s), not a wait for anything
    check_after_fault(cluster, bootstrap, [seq], [0, 1, 2], {seq.name: before}, fault_ms)
