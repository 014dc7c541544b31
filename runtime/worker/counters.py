"""Plain per-task counters the task threads bump and the metrics layer reads at scrape time.

Kept as bare attributes (no locks, no prometheus objects) so the data plane pays one attribute add per
batch: a scrape reads a slightly stale value, which is what a metrics reader expects. The names follow the
reference's metric groups (`source-task-metrics`, `sink-task-metrics`, `connector-task-metrics`,
`task-error-metrics`); the metrics layer turns them into rates, averages and Prometheus series.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TaskCounters:
    """Throughput and timing of one task instance (monotonic totals; rates are derived by the reader)."""

    # source-task-metrics
    source_records_polled: int = 0
    source_records_written: int = 0
    poll_batches: int = 0
    poll_batch_time_ms_total: float = 0.0
    source_record_active_count: int = 0  # polled, not yet acknowledged by the broker
    # source-task-metrics of an exactly-once task: transaction-size-min/max/avg (records per committed transaction)
    transactional: bool = False
    transactions_committed: int = 0
    transaction_size_total: int = 0
    transaction_size_min: int = 0
    transaction_size_max: int = 0
    # sink-task-metrics
    sink_records_read: int = 0
    sink_records_sent: int = 0  # handed to put() after transforms
    put_batches: int = 0
    put_batch_time_ms_total: float = 0.0
    # connector-task-metrics
    offset_commits: int = 0
    offset_commit_failures: int = 0
    offset_commit_time_ms_total: float = 0.0


@dataclass
class ErrorCounters:
    """KIP-298's task-error-metrics of one task instance."""

    total_record_errors: int = 0  # records that hit an error (each counted once)
    total_record_failures: int = 0  # failed attempts, retries included
    total_records_skipped: int = 0  # dropped under errors.tolerance=all
    total_retries: int = 0
    total_errors_logged: int = 0
    deadletterqueue_produce_requests: int = 0
    deadletterqueue_produce_failures: int = 0
    last_error_timestamp: int = 0  # epoch ms, 0 when none


@dataclass
class WorkerCounters:
    """connect-worker-metrics' start-up totals of one worker."""

    connector_startup_attempts: int = 0
    connector_startup_successes: int = 0
    connector_startup_failures: int = 0
    task_startup_attempts: int = 0
    task_startup_successes: int = 0
    task_startup_failures: int = 0


@dataclass
class RebalanceCounters:
    """connect-worker-rebalance-metrics of a distributed worker (the group member keeps them)."""

    completed_rebalances: int = 0
    epoch: int = -1  # the assignment generation this worker applied
    leader_name: str = ""
    rebalancing: bool = False
    last_rebalance_monotonic: float | None = None
