"""The worker's /metrics registry read directly (no broker): the series Strimzi's dashboard needs from the first
scrape, the connection counts librdkafka's statistics give, the coordinator's assignment, the process metrics,
and the admin clients' statistics registry."""

from __future__ import annotations

import gc
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CollectorRegistry

from runtime.metrics import metrics_registry
from runtime.plugins import Plugins
from runtime.storage.base import StatusStore
from runtime.storage.files import MemoryOffsetStore
from runtime.storage.states import State
from runtime.version import __version__
from runtime.worker.admin_statistics import AdminStatistics
from runtime.worker.counters import ErrorCounters, TaskCounters
from runtime.worker.worker import ConnectorInstance, Worker
from runtime.worker_config import WorkerConfig
from tests.support.worker import wait_for


@dataclass
class TaskView:
    """What the collector reads of a task runner (a thread's or a task process's)."""

    is_source: bool
    client_stats: dict[str, Any] | None = None
    counters: TaskCounters = field(default_factory=TaskCounters)
    error_counters: ErrorCounters = field(default_factory=ErrorCounters)
    created_at: float = field(default_factory=time.monotonic)

    def active_records(self) -> int:
        return 0


def make_worker(**props: str) -> Worker:
    config = WorkerConfig({"bootstrap.servers": "127.0.0.1:1", **props})
    return Worker(config, Plugins([]), MemoryOffsetStore(), StatusStore(), "w:1")


def scrape(registry: CollectorRegistry) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Sample name -> labels -> value."""
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in registry.collect():
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def broker(state: str, source: str = "learned") -> dict[str, str]:
    return {"state": state, "source": source}


def test_task_byte_totals_show_from_the_first_scrape_and_connections_from_the_first_statistics() -> None:
    worker = make_worker()
    worker.tasks[("src", 0)] = TaskView(is_source=True)
    worker.tasks[("snk", 0)] = TaskView(is_source=False)
    registry = metrics_registry(lambda: worker)

    before = scrape(registry)
    assert before["kafka_producer_outgoing_byte_total"] == {(("clientId", "connector-producer-src-0"),): 0.0}
    assert before["kafka_consumer_incoming_byte_total"] == {(("clientId", "connector-consumer-snk-0"),): 0.0}
    assert "kafka_producer_connection_count" not in before  # no statistics yet: no count rather than a false 0

    worker.tasks[("src", 0)].client_stats = {
        "client_id": "connector-producer-src-0",
        "tx_bytes": 512,
        "brokers": {
            "127.0.0.1:9092/1": broker("UP"),
            "127.0.0.1:9093/2": broker("DOWN"),
            ":0/internal": broker("UP", "internal"),
        },
    }
    worker.tasks[("snk", 0)].client_stats = {
        "client_id": "my-consumer",  # a consumer.override.client.id
        "rx_bytes": 64,
        "brokers": {"127.0.0.1:9092/1": broker("UP"), "GroupCoordinator": broker("UP", "logical")},
    }
    after = scrape(registry)
    assert after["kafka_producer_outgoing_byte_total"] == {(("clientId", "connector-producer-src-0"),): 512.0}
    assert after["kafka_producer_connection_count"] == {(("clientId", "connector-producer-src-0"),): 1.0}
    # the group coordinator's connection counts, as the Java consumer's does
    assert after["kafka_consumer_connection_count"] == {(("clientId", "my-consumer"),): 2.0}


def test_coordinator_metrics_come_from_the_herders_assignment_in_distributed_mode_only() -> None:
    worker = make_worker(**{"client.id": "worker-a"})
    assert not any(name.startswith("kafka_connect_coordinator") for name in scrape(metrics_registry(lambda: worker)))
    assert not any(
        name.startswith("kafka_connect_coordinator") for name in scrape(metrics_registry(lambda: worker, lambda: None))
    )
    found = scrape(metrics_registry(lambda: worker, lambda: (3, 7)))
    assert found["kafka_connect_coordinator_assigned_connectors"] == {(("clientId", "worker-a"),): 3.0}
    assert found["kafka_connect_coordinator_assigned_tasks"] == {(("clientId", "worker-a"),): 7.0}


def test_connector_version_class_and_type_as_strimzis_connector_status_table_joins_them() -> None:
    worker = make_worker()
    config = {"connector.class": "SequenceSource", "tasks.max": "1", "topic": "t"}
    connector = worker.plugins.new_connector(config["connector.class"])
    worker.connectors["seq"] = ConnectorInstance("seq", connector, config, config, State.PAUSED, 0)
    found = scrape(metrics_registry(lambda: worker))
    assert found["kafka_connect_connector_connector_version"] == {
        (("connector", "seq"), ("connector_version", __version__)): 1.0
    }
    # the class the alias stands for, as the reference names the class itself
    assert found["kafka_connect_connector_connector_class"] == {
        (("connector", "seq"), ("connector_class", "runtime.connectors.testing.SequenceSourceConnector")): 1.0
    }
    assert found["kafka_connect_connector_connector_type"] == {
        (("connector", "seq"), ("connector_type", "source")): 1.0
    }


def test_the_process_metrics_are_on_the_workers_registry() -> None:
    found = scrape(metrics_registry(lambda: None))
    assert found["process_cpu_seconds_total"][()] > 0
    assert found["process_resident_memory_bytes"][()] > 0
    assert "python_info" in found
    assert "python_gc_collections_total" in found


class FakeAdminClient:
    """Stands in for confluent-kafka's AdminClient: poll() serves the statistics librdkafka emitted."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.pending: list[str] = []
        self.lock = threading.Lock()

    def emit(self, document: dict[str, Any]) -> None:
        with self.lock:
            self.pending.append(json.dumps(document))

    def poll(self, _timeout: float) -> int:
        with self.lock:
            served, self.pending = self.pending, []
        for raw in served:
            self.config["stats_cb"](raw)
        return len(served)


def test_admin_statistics_are_polled_kept_while_the_client_lives_and_forgotten_after() -> None:
    statistics = AdminStatistics(poll_interval_s=0.01)
    key, config = statistics.configure({"bootstrap.servers": "b:1", "statistics.interval.ms": "5000"})
    assert config["statistics.interval.ms"] == "5000"  # a user's interval is kept
    assert statistics.configure({})[1]["statistics.interval.ms"] == "30000"
    client = FakeAdminClient(config)
    statistics.watch(key, client)
    client.emit({"client_id": "admin-1", "brokers": {"b:1/1": broker("UP")}})
    wait_for(lambda: statistics.latest() == [{"client_id": "admin-1", "brokers": {"b:1/1": broker("UP")}}], 10)
    del client  # the poller may hold it for the rest of one round
    wait_for(lambda: gc.collect() >= 0 and statistics.latest() == [], 10, what="the dropped client forgotten")
