"""Self-healing's restarts as Prometheus counters (this runtime's extension, in its own namespace):

    connect_runtime_connector_auto_restarts_total{connector}     restarts of a FAILED connector
    connect_runtime_task_auto_restarts_total{connector, task}    restarts of a FAILED task

made by this worker since it started (in a cluster, sum over the workers: a task restarted on one worker and
then on the one it moved to counts on both)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

# (connector, task or None for the connector itself) -> restarts made
RestartCounts = Callable[[], Mapping[tuple[str, int | None], int]]


class AutoRestartCollector(Collector):
    def __init__(self, counts: RestartCounts) -> None:
        self._counts = counts

    def collect(self) -> Iterator[Metric]:
        connectors = CounterMetricFamily(
            "connect_runtime_connector_auto_restarts",
            "Automatic restarts of a FAILED connector made by this worker (self-healing).",
            labels=["connector"],
        )
        tasks = CounterMetricFamily(
            "connect_runtime_task_auto_restarts",
            "Automatic restarts of a FAILED task made by this worker (self-healing).",
            labels=["connector", "task"],
        )
        for (name, task), count in sorted(dict(self._counts()).items(), key=lambda kv: (kv[0][0], kv[0][1] or -1)):
            if task is None:
                connectors.add_metric([name], count)
            else:
                tasks.add_metric([name, str(task)], count)
        yield connectors
        yield tasks
