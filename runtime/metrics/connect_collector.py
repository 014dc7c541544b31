"""The worker's metrics as Prometheus series, read from the worker at scrape time.

Names and labels are what Strimzi's JMX exporter rules for Kafka Connect
(`packaging/examples/metrics/kafka-connect-metrics.yaml`: lower-case names, `-` as `_`) make of the
reference's MBeans, so Strimzi's Grafana dashboard and alert rules work unchanged:

    connect-worker-metrics                      kafka_connect_worker_<attr>[{connector}]
    connector-metrics      status / class ...   kafka_connect_connector_<attr>{connector, <attr>=value} = 1
    connector-task-metrics status               kafka_connect_connector_task_status{connector, task, status} = 1
    <group>-metrics of a task                   kafka_connect_<group>_<attr>{connector, task}
    connect-coordinator-metrics                 kafka_connect_coordinator_<attr>{clientId}
    producer- / consumer- / admin-client-metrics kafka_<client>_<attr>{clientId} (librdkafka's statistics)

plus prometheus-client's process, platform and GC collectors (`process_cpu_seconds_total`, ...).

Task threads only bump plain counters (runtime/worker/counters.py); this collector derives rates (over the
reference's 30 s sample window), averages and percentages when Prometheus scrapes, so the data plane does
no metrics work of its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.core import CollectorRegistry, CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..plugins import class_name
from ..storage.base import InstanceStatus
from ..worker.admin_statistics import ADMIN_STATISTICS
from ..worker.counters import RebalanceCounters, TaskCounters
from ..worker.worker import ConnectorInstance, Worker
from .auto_restarts import AutoRestartCollector, RestartCounts

WINDOW_S = 30.0  # the reference's metrics.sample.window.ms
TASK_STATES = ("running", "paused", "failed", "unassigned", "restarting", "destroyed")
UNDEFINED_VERSION = "undefined"  # the reference's version of a plugin that cannot say its own

# (assigned connectors, assigned tasks) of this worker in its group; None in standalone mode
AssignedCounts = Callable[[], tuple[int, int] | None]


class _Rates:
    """Per-second rates of monotonic totals over a window of at least WINDOW_S (two samples, as the
    reference's rate stats keep)."""

    def __init__(self) -> None:
        self._samples: dict[Any, tuple[float, float, float, float]] = {}  # key -> (t0, v0, t1, v1)

    def rate(self, key: Any, value: float, since: float, now: float) -> float:
        t0, v0, t1, v1 = self._samples.get(key, (since, 0.0, since, 0.0))
        if now - t1 >= WINDOW_S:  # the newer sample becomes the window's start
            t0, v0 = t1, v1
            t1, v1 = now, value
        self._samples[key] = (t0, v0, t1, v1)
        elapsed = now - t0
        return (value - v0) / elapsed if elapsed > 0 else 0.0

    def forget(self, live: set[Any]) -> None:
        for key in [k for k in self._samples if k[0] not in live]:
            del self._samples[key]


def _avg(total: float, count: int) -> float:
    return total / count if count else 0.0


def _percentage(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


class ConnectCollector(Collector):
    """Collects from the worker the herder runs (found at scrape time: a distributed herder attaches its
    worker after the REST server starts)."""

    def __init__(self, worker_of: Callable[[], Worker | None], assigned_counts: AssignedCounts | None = None) -> None:
        self._worker_of = worker_of
        self._assigned_counts = assigned_counts
        self._rates = _Rates()

    def collect(self) -> Iterator[Metric]:
        worker = self._worker_of()
        if worker is None:
            return iter(())
        return iter(list(self._collect(worker)))

    def _collect(self, worker: Worker) -> Iterable[Metric]:
        now = time.monotonic()
        me = worker.worker_id
        connector_statuses, task_statuses = worker.statuses.all_statuses()
        mine = {name for name, status in connector_statuses.items() if status.worker_id == me} | set(worker.connectors)
        my_tasks = {key: status for key, status in task_statuses.items() if status.worker_id == me}
        runners = dict(worker.tasks)  # a copy: the herder changes the dict meanwhile

        yield from self._worker_metrics(worker, my_tasks)
        if worker.rebalance is not None:
            yield from self._rebalance_metrics(worker.rebalance, now)
        yield from self._coordinator_metrics(worker)
        yield from self._connector_metrics(worker, mine, connector_statuses)
        yield from self._task_status(my_tasks)
        yield from self._task_metrics(runners, now)
        yield from _transaction_metrics(runners)
        yield from self._client_metrics(runners)
        yield from self._connection_counts(runners)
        self._rates.forget(set(runners))

    # ---- connect-worker-metrics -----------------------------------------------------------------

    def _worker_metrics(self, worker: Worker, my_tasks: dict[tuple[str, int], InstanceStatus]) -> Iterable[Metric]:
        c = worker.counters
        yield GaugeMetricFamily(
            "kafka_connect_worker_connector_count",
            "The number of connectors run in this worker.",
            value=len(worker.connectors),
        )
        yield GaugeMetricFamily(
            "kafka_connect_worker_task_count", "The number of tasks run in this worker.", value=len(worker.tasks)
        )
        for kind, attempts, successes, failures in (
            ("connector", c.connector_startup_attempts, c.connector_startup_successes, c.connector_startup_failures),
            ("task", c.task_startup_attempts, c.task_startup_successes, c.task_startup_failures),
        ):
            for what, value in (("attempts", attempts), ("success", successes), ("failure", failures)):
                yield CounterMetricFamily(
                    f"kafka_connect_worker_{kind}_startup_{what}_total",
                    f"The total number of {kind} startups of this worker ({what}).",
                    value=value,
                )
            yield GaugeMetricFamily(
                f"kafka_connect_worker_{kind}_startup_success_percentage",
                f"The average percentage of this worker's {kind} starts that succeeded.",
                value=_percentage(successes, attempts),
            )
            yield GaugeMetricFamily(
                f"kafka_connect_worker_{kind}_startup_failure_percentage",
                f"The average percentage of this worker's {kind} starts that failed.",
                value=_percentage(failures, attempts),
            )
        per_connector: dict[str, dict[str, int]] = {}
        for (name, _), status in my_tasks.items():
            counts = per_connector.setdefault(name, dict.fromkeys(TASK_STATES, 0))
            state = status.state.value.lower()
            if state in counts:
                counts[state] += 1
        for name in worker.connectors:
            per_connector.setdefault(name, dict.fromkeys(TASK_STATES, 0))
        for state in TASK_STATES:
            family = GaugeMetricFamily(
                f"kafka_connect_worker_connector_{state}_task_count",
                f"The number of {state} tasks of the connector on the worker.",
                labels=["connector"],
            )
            for name, counts in per_connector.items():
                family.add_metric([name], counts[state])
            yield family
        total = GaugeMetricFamily(
            "kafka_connect_worker_connector_total_task_count",
            "The number of tasks of the connector on the worker.",
            labels=["connector"],
        )
        for name, counts in per_connector.items():
            total.add_metric([name], sum(counts.values()))
        yield total

    def _rebalance_metrics(self, r: RebalanceCounters, now: float) -> Iterable[Metric]:
        """connect-worker-rebalance-metrics (distributed mode)."""
        yield CounterMetricFamily(
            "kafka_connect_worker_rebalance_completed_rebalances_total",
            "The total number of rebalances completed by this worker.",
            value=r.completed_rebalances,
        )
        yield GaugeMetricFamily(
            "kafka_connect_worker_rebalance_epoch", "The epoch or generation number of this worker.", value=r.epoch
        )
        yield GaugeMetricFamily(
            "kafka_connect_worker_rebalance_rebalancing",
            "Whether this worker is currently rebalancing.",
            value=int(r.rebalancing),
        )
        since = -1.0 if r.last_rebalance_monotonic is None else (now - r.last_rebalance_monotonic) * 1000
        yield GaugeMetricFamily(
            "kafka_connect_worker_rebalance_time_since_last_rebalance_ms",
            "The time in milliseconds since this worker completed the most recent rebalance.",
            value=since,
        )
        leader = GaugeMetricFamily(
            "kafka_connect_worker_rebalance_leader_name", "The name of the group leader.", labels=["leader_name"]
        )
        leader.add_metric([r.leader_name], 1)
        yield leader

    def _coordinator_metrics(self, worker: Worker) -> Iterable[Metric]:
        """connect-coordinator-metrics (distributed mode): what the group's current assignment gives this
        worker, read through the herder. Tagged, as the reference's, with the worker's `client.id` or the
        first id the reference gives a worker without one."""
        counts = self._assigned_counts() if self._assigned_counts is not None else None
        if counts is None:
            return
        client = str(worker.config.originals.get("client.id") or "connect-1")
        for attr, value, what in (
            ("assigned_connectors", counts[0], "connector instances"),
            ("assigned_tasks", counts[1], "tasks"),
        ):
            family = GaugeMetricFamily(
                f"kafka_connect_coordinator_{attr}",
                f"The number of {what} currently assigned to this consumer",
                labels=["clientId"],
            )
            family.add_metric([client], value)
            yield family

    # ---- connector-metrics ----------------------------------------------------------------------

    def _connector_metrics(
        self, worker: Worker, names: set[str], statuses: dict[str, InstanceStatus]
    ) -> Iterable[Metric]:
        status_family = GaugeMetricFamily(
            "kafka_connect_connector_status", "Kafka Connect JMX Connector status", labels=["connector", "status"]
        )
        class_family = GaugeMetricFamily(
            "kafka_connect_connector_connector_class",
            "Kafka Connect connector-class JMX metric type connector",
            labels=["connector", "connector_class"],
        )
        type_family = GaugeMetricFamily(
            "kafka_connect_connector_connector_type",
            "Kafka Connect connector-type JMX metric type connector",
            labels=["connector", "connector_type"],
        )
        version_family = GaugeMetricFamily(
            "kafka_connect_connector_connector_version",
            "Kafka Connect connector-version JMX metric type connector",
            labels=["connector", "connector_version"],
        )
        for name in sorted(names):
            status = statuses.get(name)
            if status is not None:
                status_family.add_metric([name, status.state.value.lower()], 1)
            instance = worker.connectors.get(name)
            if instance is not None:
                # the class itself, as the reference's (an alias in the config names the class it stands for)
                class_family.add_metric([name, class_name(type(instance.connector))], 1)
                type_family.add_metric([name, worker.connector_type(instance.config)], 1)
                version_family.add_metric([name, _connector_version(instance)], 1)
        yield status_family
        yield class_family
        yield type_family
        yield version_family

    def _task_status(self, my_tasks: dict[tuple[str, int], InstanceStatus]) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "kafka_connect_connector_task_status",
            "Kafka Connect JMX Connector task status",
            labels=["connector", "task", "status"],
        )
        for (name, index), status in sorted(my_tasks.items()):
            family.add_metric([name, str(index), status.state.value.lower()], 1)
        yield family

    # ---- per-task groups ------------------------------------------------------------------------

    def _task_metrics(self, runners: dict[tuple[str, int], Any], now: float) -> Iterable[Metric]:
        labels = ["connector", "task"]
        families: dict[str, CounterMetricFamily | GaugeMetricFamily] = {}

        def add(name: str, value: float, key: tuple[str, int], counter: bool = False) -> None:
            family = families.get(name)
            if family is None:
                family = (CounterMetricFamily if counter else GaugeMetricFamily)(
                    name, _HELP.get(name, name), labels=labels
                )
                families[name] = family
            family.add_metric([key[0], str(key[1])], value)

        rate = self._rates.rate
        for key, runner in sorted(runners.items()):
            c: TaskCounters = runner.counters
            since = runner.created_at
            commits = c.offset_commits + c.offset_commit_failures
            add(
                "kafka_connect_connector_task_offset_commit_avg_time_ms",
                _avg(c.offset_commit_time_ms_total, c.offset_commits),
                key,
            )
            add(
                "kafka_connect_connector_task_offset_commit_failure_percentage",
                _percentage(c.offset_commit_failures, commits),
                key,
            )
            add(
                "kafka_connect_connector_task_offset_commit_success_percentage",
                _percentage(c.offset_commits, commits),
                key,
            )
            if runner.is_source:
                add("kafka_connect_source_task_source_record_poll_total", c.source_records_polled, key, counter=True)
                add(
                    "kafka_connect_source_task_source_record_poll_rate",
                    rate((key, "poll"), c.source_records_polled, since, now),
                    key,
                )
                add("kafka_connect_source_task_source_record_write_total", c.source_records_written, key, counter=True)
                add(
                    "kafka_connect_source_task_source_record_write_rate",
                    rate((key, "write"), c.source_records_written, since, now),
                    key,
                )
                add(
                    "kafka_connect_source_task_poll_batch_avg_time_ms",
                    _avg(c.poll_batch_time_ms_total, c.poll_batches),
                    key,
                )
                add("kafka_connect_source_task_source_record_active_count", runner.active_records(), key)
            else:
                add("kafka_connect_sink_task_sink_record_read_total", c.sink_records_read, key, counter=True)
                add(
                    "kafka_connect_sink_task_sink_record_read_rate",
                    rate((key, "read"), c.sink_records_read, since, now),
                    key,
                )
                add("kafka_connect_sink_task_sink_record_send_total", c.sink_records_sent, key, counter=True)
                add(
                    "kafka_connect_sink_task_sink_record_send_rate",
                    rate((key, "send"), c.sink_records_sent, since, now),
                    key,
                )
                add(
                    "kafka_connect_sink_task_put_batch_avg_time_ms", _avg(c.put_batch_time_ms_total, c.put_batches), key
                )
                add("kafka_connect_sink_task_offset_commit_completion_total", c.offset_commits, key, counter=True)
                add(
                    "kafka_connect_sink_task_offset_commit_completion_rate",
                    rate((key, "commit"), c.offset_commits, since, now),
                    key,
                )
            e = runner.error_counters
            for attr in (
                "total_record_failures",
                "total_record_errors",
                "total_records_skipped",
                "total_retries",
                "total_errors_logged",
                "deadletterqueue_produce_requests",
                "deadletterqueue_produce_failures",
                "last_error_timestamp",
            ):
                add(f"kafka_connect_task_error_{attr}", getattr(e, attr), key)
        yield from families.values()

    # ---- Kafka clients, from librdkafka's statistics ---------------------------------------------

    def _client_metrics(self, runners: dict[tuple[str, int], Any]) -> Iterable[Metric]:
        """As Strimzi renders the Java clients' producer-metrics / producer-topic-metrics / consumer-metrics /
        consumer-fetch-manager-metrics (librdkafka's totals: bytes to and from the brokers, lag per partition).
        A task's byte totals read 0 until its client's first statistics (`statistics.interval.ms` after it
        was created; 30 s by default), as a Java client's read 0 when it starts, so rates show at once."""
        out_bytes = CounterMetricFamily(
            "kafka_producer_outgoing_byte_total", "The total number of bytes sent to all brokers.", labels=["clientId"]
        )
        topic_bytes = CounterMetricFamily(
            "kafka_producer_topic_byte_total",
            "The total number of bytes sent for a topic.",
            labels=["clientId", "topic"],
        )
        in_bytes = CounterMetricFamily(
            "kafka_consumer_incoming_byte_total",
            "The total number of bytes received from all brokers.",
            labels=["clientId"],
        )
        lag = GaugeMetricFamily(
            "kafka_consumer_fetch_manager_records_lag",
            "The latest lag of the partition.",
            labels=["clientId", "topic", "partition"],
        )
        for key, runner in sorted(runners.items()):
            stats = runner.client_stats or {}
            client = _task_client_id(key, runner.is_source, stats)
            if runner.is_source:
                out_bytes.add_metric([client], stats.get("tx_bytes", 0))
                for topic, info in (stats.get("topics") or {}).items():
                    sent = sum(p.get("txbytes", 0) for pid, p in (info.get("partitions") or {}).items() if pid != "-1")
                    topic_bytes.add_metric([client, topic], sent)
            else:
                in_bytes.add_metric([client], stats.get("rx_bytes", 0))
                for topic, info in (stats.get("topics") or {}).items():
                    for pid, p in (info.get("partitions") or {}).items():
                        if pid != "-1" and p.get("consumer_lag", -1) >= 0:
                            lag.add_metric([client, topic, pid], p["consumer_lag"])
        yield from (out_bytes, topic_bytes, in_bytes, lag)

    def _connection_counts(self, runners: dict[tuple[str, int], Any]) -> Iterable[Metric]:
        """producer-metrics / consumer-metrics / admin-client-metrics `connection-count` of the tasks'
        clients and the worker's admin clients, from each one's latest statistics."""
        families = {
            kind: GaugeMetricFamily(
                f"kafka_{kind}_connection_count", "The current number of active connections.", labels=["clientId"]
            )
            for kind in ("producer", "consumer", "admin_client")
        }
        for key, runner in sorted(runners.items()):
            stats = runner.client_stats
            if stats:
                kind = "producer" if runner.is_source else "consumer"
                families[kind].add_metric([_task_client_id(key, runner.is_source, stats)], _connections(stats))
        admin: dict[str, int] = {}  # clients sharing a client.id (librdkafka's default "rdkafka") add up
        for stats in ADMIN_STATISTICS.latest():
            client = str(stats.get("client_id") or "")
            admin[client] = admin.get(client, 0) + _connections(stats)
        for client, count in sorted(admin.items()):
            families["admin_client"].add_metric([client], count)
        yield from families.values()


def _task_client_id(key: tuple[str, int], source: bool, stats: dict[str, Any]) -> str:
    """The client's own id once it has reported, else the one the worker gives a task's client (the
    reference's `connector-producer-<task>` / `connector-consumer-<task>`)."""
    default = f"connector-{'producer' if source else 'consumer'}-{key[0]}-{key[1]}"
    return str(stats.get("client_id") or default)


def _connections(stats: dict[str, Any]) -> int:
    """A client's open connections: its brokers in state UP, the group coordinator's own connection
    included (the Java clients count it too), not librdkafka's internal queue broker."""
    brokers = stats.get("brokers") or {}
    return sum(1 for b in brokers.values() if b.get("state") == "UP" and b.get("source") != "internal")


def _connector_version(instance: ConnectorInstance) -> str:
    try:
        return str(instance.connector.version())
    except Exception:  # noqa: BLE001 - a connector that cannot say its version still shows in the table
        return UNDEFINED_VERSION


def _transaction_metrics(runners: dict[tuple[str, int], Any]) -> Iterable[Metric]:
    """source-task-metrics' transaction-size-min/max/avg of the tasks that run exactly once (KIP-618): records
    per committed transaction, NaN before the first commit (as the reference's Min, Max and Avg)."""
    labels = ["connector", "task"]
    families = {
        stat: GaugeMetricFamily(
            f"kafka_connect_source_task_transaction_size_{stat}",
            f"The {word} number of records in the transactions the task has committed.",
            labels=labels,
        )
        for stat, word in (("min", "minimum"), ("max", "maximum"), ("avg", "average"))
    }
    for (name, index), runner in sorted(runners.items()):
        c: TaskCounters = runner.counters
        if not runner.is_source or not c.transactional:
            continue
        committed = c.transactions_committed
        values = {
            "min": c.transaction_size_min if committed else math.nan,
            "max": c.transaction_size_max if committed else math.nan,
            "avg": c.transaction_size_total / committed if committed else math.nan,
        }
        for stat, family in families.items():
            family.add_metric([name, str(index)], values[stat])
    yield from families.values()


_HELP = {
    "kafka_connect_source_task_source_record_poll_rate": "The average per-second number of records produced/polled "
    "(before transformation) by this task.",
    "kafka_connect_source_task_source_record_write_rate": "The average per-second number of records written to "
    "Kafka for this task (after transformations).",
    "kafka_connect_source_task_source_record_active_count": "The number of records produced by this task but not "
    "yet completely written to Kafka.",
    "kafka_connect_sink_task_sink_record_read_rate": "The average per-second number of records read from Kafka for "
    "this task (before transformations).",
    "kafka_connect_sink_task_sink_record_send_rate": "The average per-second number of records output from the "
    "transformations and sent/put to this task.",
    "kafka_connect_task_error_total_record_failures": "The number of record processing failures in this task.",
    "kafka_connect_task_error_total_record_errors": "The number of record processing errors in this task.",
    "kafka_connect_task_error_total_records_skipped": "The number of records skipped due to errors.",
    "kafka_connect_task_error_deadletterqueue_produce_requests": "The number of attempted writes to the dead letter queue.",
    "kafka_connect_task_error_deadletterqueue_produce_failures": "The number of failed writes to the dead letter queue.",
    "kafka_connect_task_error_last_error_timestamp": "The epoch timestamp when this task last encountered an error.",
}


def metrics_registry(
    worker_of: Callable[[], Worker | None],
    assigned_counts: AssignedCounts | None = None,
    auto_restarts: RestartCounts | None = None,
) -> CollectorRegistry:
    """The worker's registry: its metrics, self-healing's restarts (`auto_restarts`: this worker's counts),
    and the process's (CPU, memory, file descriptors, Python's version and garbage collections) from
    prometheus-client's own collectors."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConnectCollector(worker_of, assigned_counts))
    if auto_restarts is not None:
        registry.register(AutoRestartCollector(auto_restarts))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry


__all__ = ["ConnectCollector", "metrics_registry"]
