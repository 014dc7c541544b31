"""The broker monitor behind /health's 'Kafka unreachable' answer."""

from __future__ import annotations

import threading

from runtime.worker.broker_monitor import BrokerMonitor


def test_reports_an_outage_only_after_the_grace_period_and_clears_on_recovery() -> None:
    state = {"up": True}
    now = [1_800_000_000.0]
    probes = threading.Semaphore(0)

    def probe(timeout: float) -> None:
        probes.release()
        if not state["up"]:
            raise RuntimeError("all brokers are down")

    def after_next_probes() -> None:
        # probes run one after the other on the monitor's thread: once two more have begun, the monitor
        # has taken in the answer of one made after the change (probes begun before it do not count)
        while probes.acquire(blocking=False):
            pass
        for _ in range(2):
            assert probes.acquire(timeout=30), "the monitor stopped probing"

    monitor = BrokerMonitor(probe, "127.0.0.1:9", interval_s=0.01, grace_s=10.0, clock=lambda: now[0]).start()
    try:
        after_next_probes()
        assert monitor.problem() is None
        state["up"] = False
        after_next_probes()
        assert monitor.problem() is None  # down, but within the grace period
        now[0] += 9.9
        assert monitor.problem() is None
        now[0] += 0.2
        problem = monitor.problem()
        assert problem is not None and "127.0.0.1:9 has been unreachable since 2027-01-15T08:00:00" in problem
        assert "all brokers are down" in problem
        state["up"] = True
        after_next_probes()
        assert monitor.problem() is None
    finally:
        monitor.stop()
