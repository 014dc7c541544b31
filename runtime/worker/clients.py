"""Kafka client configs for a connector: worker settings, then worker `producer.*`/`consumer.*`/`admin.*`,
then the connector's `*.override.*` (KIP-458), and clients tolerant of Java-only property names."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from ..worker_config import WorkerConfig
from .admin_statistics import ADMIN_STATISTICS

log = logging.getLogger(__name__)

# Java client settings with no librdkafka meaning: dropped (with a log line) so Java worker files load.
JAVA_ONLY_CLIENT_PROPERTIES = {
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
    "interceptor.classes",
    "max.poll.records",
    "buffer.memory",
    "max.block.ms",
    "default.api.timeout.ms",
    "partition.assignment.strategy",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.sample.window.ms",
    "metrics.recording.level",
    "auto.include.jmx.reporter",
    "exclude.internal.topics",
    "retry.backoff.max.ms",
    "send.buffer.bytes",
    "receive.buffer.bytes",
    "request.timeout.ms",
    "delivery.timeout.ms",
    "ssl.engine.factory.class",
}

# librdkafka's statistics feed the client metrics at /metrics (bytes in and out, consumer lag); one small
# JSON document per client and interval
STATISTICS_INTERVAL = {"statistics.interval.ms": "30000"}

PRODUCER_DEFAULTS = {
    **STATISTICS_INTERVAL,
    "acks": "all",
    "linger.ms": "5",
    "batch.num.messages": "10000",
    "queue.buffering.max.messages": "500000",
    "queue.buffering.max.kbytes": "1048576",
    "compression.type": "none",
}
CONSUMER_DEFAULTS = {
    **STATISTICS_INTERVAL,
    "enable.auto.commit": "false",
    "enable.auto.offset.store": "false",
    "auto.offset.reset": "earliest",
    # measured here: the consumer is ~4x faster with no fetch-queue backoff
    "fetch.queue.backoff.ms": "0",
    "queued.min.messages": "200000",
    # pick up topics created after the subscription (e.g. by a source started later) within seconds
    "topic.metadata.refresh.interval.ms": "5000",
}


def _prefixed(config: dict[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: str(v) for k, v in config.items() if k.startswith(prefix)}


def group_id(connector: str, connector_config: dict[str, str]) -> str:
    return connector_config.get("consumer.override.group.id") or f"connect-{connector}"


def producer_config(worker: WorkerConfig, connector_config: dict[str, str]) -> dict[str, str]:
    config = {"bootstrap.servers": worker.bootstrap_servers or "", **PRODUCER_DEFAULTS}
    config.update(worker.client_configs("producer."))
    config.update(_prefixed(connector_config, "producer.override."))
    return config


def exactly_once_producer_config(config: dict[str, Any], transactional_id: str) -> dict[str, Any]:
    """A source task's producer settings when it runs exactly once: idempotent, with its transactional id
    (whatever the worker's or the connector's overrides say, as the reference insists)."""
    config = dict(config)
    for name, value in (("enable.idempotence", "true"), ("transactional.id", transactional_id)):
        given = config.get(name)
        if given is not None and str(given).strip().lower() != value.lower():
            log.warning(
                "The value '%s' for Kafka client property '%s' will be ignored: '%s' is required for connectors "
                "when exactly-once source support is enabled",
                given,
                name,
                value,
            )
        config[name] = value
    return config


def consumer_config(worker: WorkerConfig, connector: str, connector_config: dict[str, str]) -> dict[str, str]:
    config = {
        "bootstrap.servers": worker.bootstrap_servers or "",
        "group.id": f"connect-{connector}",
        **CONSUMER_DEFAULTS,
    }
    config.update(worker.client_configs("consumer."))
    config.update(_prefixed(connector_config, "consumer.override."))
    # the worker must own commits and offset storage whatever the overrides say
    config["enable.auto.commit"] = "false"
    config["enable.auto.offset.store"] = "false"
    return config


def admin_config(worker: WorkerConfig, connector_config: dict[str, str], sink: bool) -> dict[str, str]:
    config = {"bootstrap.servers": worker.bootstrap_servers or ""}
    config.update(worker.client_configs("admin."))
    client_overrides = _prefixed(connector_config, "consumer.override." if sink else "producer.override.")
    if "bootstrap.servers" in client_overrides:
        # offsets of a connector that targets another cluster live on that cluster
        config["bootstrap.servers"] = client_overrides["bootstrap.servers"]
    config.update(_prefixed(connector_config, "admin.override."))
    return config


def max_poll_records(worker: WorkerConfig, connector_config: dict[str, str]) -> int:
    raw = connector_config.get("consumer.override.max.poll.records") or worker.client_configs("consumer.").get(
        "max.poll.records"
    )
    try:
        return max(1, int(raw)) if raw else 2000
    except ValueError:
        return 2000


C = TypeVar("C")


def create_client(factory: Callable[[dict[str, Any]], C], config: dict[str, Any], what: str) -> C:
    """Build a client, dropping settings librdkafka does not know (Java-only names) with a warning."""
    config = dict(config)
    for name in list(config):
        if name in JAVA_ONLY_CLIENT_PROPERTIES:
            log.info("Ignoring %s setting %s: it only applies to the Java client", what, name)
            del config[name]
    statistics_key = None
    if isinstance(factory, type) and issubclass(factory, AdminClient):
        # an admin client's statistics reach /metrics through ADMIN_STATISTICS, which polls it
        statistics_key, config = ADMIN_STATISTICS.configure(config)
    for _ in range(len(config) + 1):
        try:
            client = factory(config)
            if statistics_key is not None:
                ADMIN_STATISTICS.watch(statistics_key, client)
            return client
        except KafkaException as exc:
            message = str(exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else exc)
            marker = "No such configuration property: "
            if marker in message:
                name = message.split(marker, 1)[1].strip().strip('"')
                if name in config:
                    log.warning("Ignoring %s setting %s: not a librdkafka property", what, name)
                    del config[name]
                    continue
            raise
    raise RuntimeError(f"could not create {what}")  # pragma: no cover
