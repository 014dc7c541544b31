"""source-task-metrics' transaction-size-min/max/avg under Strimzi's names, for exactly-once tasks only."""

from __future__ import annotations

import math
from types import SimpleNamespace

from runtime.metrics.connect_collector import _transaction_metrics
from runtime.worker.counters import TaskCounters


def runner(counters: TaskCounters, source: bool = True) -> SimpleNamespace:
    return SimpleNamespace(counters=counters, is_source=source)


def samples(runners) -> dict[tuple[str, str, str], float]:
    return {
        (s.name, s.labels["connector"], s.labels["task"]): s.value
        for family in _transaction_metrics(runners)
        for s in family.samples
    }


def test_sizes_of_committed_transactions_for_exactly_once_tasks_only() -> None:
    done = TaskCounters(
        transactional=True,
        transactions_committed=4,
        transaction_size_total=100,
        transaction_size_min=5,
        transaction_size_max=45,
    )
    found = samples(
        {
            ("eos", 0): runner(done),
            ("eos", 1): runner(TaskCounters(transactional=True)),  # nothing committed yet
            ("plain", 0): runner(TaskCounters()),
        }
    )
    prefix = "kafka_connect_source_task_transaction_size_"
    assert found[(prefix + "min", "eos", "0")] == 5
    assert found[(prefix + "max", "eos", "0")] == 45
    assert found[(prefix + "avg", "eos", "0")] == 25
    assert all(math.isnan(found[(prefix + stat, "eos", "1")]) for stat in ("min", "max", "avg"))
    assert not any(connector == "plain" for _, connector, _ in found)
