"""The broker monitor behind /health's 'Kafka unreachable' answer."""
from __future__ import annotations

import time

from runtime.worker.broker_monitor import BrokerMonitor


def test_reports_an_outage_only_after_the_grace_period_and_clears_on_recovery() -> None:
    state = {"up": True}

    def probe(timeout: float) -> None:
        if not state["up"]:
            raise RuntimeError("all brokers are down")

    monitor = BrokerMonitor(probe, "127.0.0.1:9", interval_s=0.02, grace_s=0.3).start()
    try:
        time.sleep(0.1)
        assert monitor.problem() is None
        state["up"] = False
        time.sleep(0.1)
        assert monitor.problem() is None  # within the grace period
        time.sleep(0.4)
        problem = monitor.problem()
        assert problem is not None and "127.0.0.1:9 has been unreachable since" in problem
        assert "all brokers are down" in problem
        state["up"] = True
        time.sleep(0.1)
        assert monitor.problem() is None
    finally:
        monitor.stop()
