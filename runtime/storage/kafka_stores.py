"""Kafka-backed stores for distributed mode, built from worker properties with the reference's names.

    config.storage.topic  (1 partition)       config.storage.replication.factor  (default 3, -1 = broker default)
    offset.storage.topic  offset.storage.partitions (25)  offset.storage.replication.factor (3)
    status.storage.topic  status.storage.partitions (5)   status.storage.replication.factor (3)

Internal clients get `bootstrap.servers` and the worker's top-level security settings (as the reference
passes the worker's originals to its internal clients), never the connector-facing `producer.*`/`consumer.*`.
`internal.log.read.strategy` (this project's own) picks how logs are read to the end: `watermark`
(default) or `sentinel` (see kafka_log).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api.errors import ConfigError
from ..worker_config import WorkerConfig
from .kafka_config_store import (
    ClusterConfig,
    ConfigUpdateListener,
    KafkaConfigStore,
    RestartRequest,
    SessionKey,
)
from .kafka_log import KafkaBasedLog, KafkaStoreError, TopicConfigError, TopicSpec
from .kafka_offset_store import KafkaOffsetStore
from .kafka_status_store import KafkaStatusStore
from .status_codec import TopicStatus

# librdkafka names that mean the same in Java worker files; anything else Java-specific is left out.
_CLIENT_SETTINGS = (
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "client.rack",
)


@dataclass(frozen=True)
class KafkaStoreSettings:
    client_config: dict[str, str]
    config_topic: TopicSpec
    offset_topic: TopicSpec
    status_topic: TopicSpec
    read_strategy: str = "watermark"
    # exactly.once.source.support=enabled: the worker's offsets topic is read read_committed, as the reference's
    read_committed_offsets: bool = False

    @classmethod
    def from_worker(cls, props: Mapping[str, Any] | WorkerConfig) -> KafkaStoreSettings:
        """From worker properties (a WorkerConfig, or a mapping parsed as one); ConfigError when one of the
        settings distributed mode requires is missing."""
        config = props if isinstance(props, WorkerConfig) else WorkerConfig(props)

        def required(name: str) -> str:
            value = config.get(name)
            value = ",".join(value) if isinstance(value, list) else str(value or "").strip()
            if not value:
                raise ConfigError(f'Missing required configuration "{name}" which has no default value.')
            return value

        client = {"bootstrap.servers": required("bootstrap.servers"), "group.id": required("group.id")}
        # top-level client settings keep their originals' text: they go to librdkafka as written
        client.update({k: str(config.originals[k]) for k in _CLIENT_SETTINGS if k in config.originals})
        return cls(
            client_config=client,
            config_topic=TopicSpec(
                required("config.storage.topic"),
                1,
                config.get_int("config.storage.replication.factor"),
                "config.storage.topic",
                "connector configurations",
                single_partition=True,
            ),
            offset_topic=TopicSpec(
                required("offset.storage.topic"),
                config.get_int("offset.storage.partitions"),
                config.get_int("offset.storage.replication.factor"),
                "offset.storage.topic",
                "source connector offsets",
            ),
            status_topic=TopicSpec(
                required("status.storage.topic"),
                config.get_int("status.storage.partitions"),
                config.get_int("status.storage.replication.factor"),
                "status.storage.topic",
                "connector and task statuses",
            ),
            read_strategy=str(config.get("internal.log.read.strategy")),
            read_committed_offsets=config.exactly_once_source_enabled(),
        )

    def _client(self, kind: str) -> dict[str, str]:
        return {**self.client_config, "client.id": f"{self.client_config['group.id']}-{kind}"}

    def config_store(self, listener: ConfigUpdateListener | None = None) -> KafkaConfigStore:
        return KafkaConfigStore(
            self.config_topic, self._client("configs"), listener=listener, read_strategy=self.read_strategy
        )

    def offset_store(self) -> KafkaOffsetStore:
        isolation = {"isolation.level": "read_committed"} if self.read_committed_offsets else None
        return KafkaOffsetStore(
            self.offset_topic, self._client("offsets"), read_strategy=self.read_strategy, consumer_config=isolation
        )

    def status_store(self) -> KafkaStatusStore:
        return KafkaStatusStore(self.status_topic, self._client("statuses"), read_strategy=self.read_strategy)


__all__ = [
    "ClusterConfig",
    "ConfigUpdateListener",
    "KafkaBasedLog",
    "KafkaConfigStore",
    "KafkaOffsetStore",
    "KafkaStatusStore",
    "KafkaStoreError",
    "KafkaStoreSettings",
    "RestartRequest",
    "SessionKey",
    "TopicConfigError",
    "TopicSpec",
    "TopicStatus",
]
