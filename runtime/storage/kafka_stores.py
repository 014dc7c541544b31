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

from dataclasses import dataclass
from typing import Any, Mapping

from ..api.errors import ConfigError
from .kafka_config_store import (
    ClusterConfig, ConfigUpdateListener, KafkaConfigStore, RestartRequest, SessionKey,
)
from .kafka_log import KafkaBasedLog, KafkaStoreError, TopicConfigError, TopicSpec
from .kafka_offset_store import KafkaOffsetStore
from .kafka_status_store import KafkaStatusStore
from .status_codec import TopicStatus

# librdkafka names that mean the same in Java worker files; anything else Java-specific is left out.
_CLIENT_SETTINGS = ("security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password",
                    "ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.key.password",
                    "ssl.endpoint.identification.algorithm", "client.rack")


@dataclass(frozen=True)
class KafkaStoreSettings:
    client_config: dict[str, str]
    config_topic: TopicSpec
    offset_topic: TopicSpec
    status_topic: TopicSpec
    read_strategy: str = "watermark"

    @classmethod
    def from_worker(cls, props: Mapping[str, Any] | Any) -> "KafkaStoreSettings":
        """From worker properties (a mapping, or a WorkerConfig whose `originals` are used)."""
        originals: Mapping[str, Any] = getattr(props, "originals", props)

        def required(name: str) -> str:
            value = str(originals.get(name) or "").strip()
            if not value:
                raise ConfigError(f'Missing required configuration "{name}" which has no default value.')
            return value

        def integer(name: str, default: int) -> int:
            raw = originals.get(name, default)
            try:
                return int(str(raw).strip())
            except ValueError:
                raise ConfigError(name, raw, "Not a number") from None

        client = {"bootstrap.servers": required("bootstrap.servers"), "group.id": required("group.id")}
        client.update({k: str(originals[k]) for k in _CLIENT_SETTINGS if k in originals})
        strategy = str(originals.get("internal.log.read.strategy", "watermark"))
        if strategy not in ("watermark", "sentinel"):
            raise ConfigError("internal.log.read.strategy", strategy, "Must be 'watermark' or 'sentinel'")
        return cls(
            client_config=client,
            config_topic=TopicSpec(required("config.storage.topic"), 1, integer("config.storage.replication.factor", 3),
                                   "config.storage.topic", "connector configurations", single_partition=True),
            offset_topic=TopicSpec(required("offset.storage.topic"), integer("offset.storage.partitions", 25),
                                   integer("offset.storage.replication.factor", 3), "offset.storage.topic",
                                   "source connector offsets"),
            status_topic=TopicSpec(required("status.storage.topic"), integer("status.storage.partitions", 5),
                                   integer("status.storage.replication.factor", 3), "status.storage.topic",
                                   "connector and task statuses"),
            read_strategy=strategy,
        )

    def _client(self, kind: str) -> dict[str, str]:
        return {**self.client_config, "client.id": f"{self.client_config['group.id']}-{kind}"}

    def config_store(self, listener: ConfigUpdateListener | None = None) -> KafkaConfigStore:
        return KafkaConfigStore(self.config_topic, self._client("configs"), listener=listener,
                                read_strategy=self.read_strategy)

    def offset_store(self) -> KafkaOffsetStore:
        return KafkaOffsetStore(self.offset_topic, self._client("offsets"), read_strategy=self.read_strategy)

    def status_store(self) -> KafkaStatusStore:
        return KafkaStatusStore(self.status_topic, self._client("statuses"), read_strategy=self.read_strategy)


__all__ = [
    "ClusterConfig", "ConfigUpdateListener", "KafkaBasedLog", "KafkaConfigStore", "KafkaOffsetStore",
    "KafkaStatusStore", "KafkaStoreError", "KafkaStoreSettings", "RestartRequest", "SessionKey",
    "TopicConfigError", "TopicSpec", "TopicStatus",
]
