"""Reading, altering and resetting connector offsets (KIP-875).

Source offsets live in the worker's offset store or, in distributed mode for a connector with
`offsets.storage.topic` (KIP-618), in that topic with a copy in the worker's store
(`SourceOffsetStores`, as the reference's Worker.offsetStoreForRegularSource*). Sink offsets are the
committed offsets of the connector's consumer group, reached through an admin client built with the
connector's overrides (so a connector that targets another Kafka cluster has its offsets read and changed there).

On an exactly-once worker a source connector's offsets are altered and reset in one transaction under the
transactional id `<group.id>-<connector>` (KIP-875), in its primary offsets topic (its own when it has one,
else the worker's), after the herder has fenced its earlier tasks; the copy in the worker's topic, when that
is not the primary, is written without a transaction (tombstones before, the rest after, as KAFKA-15018).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from ..api.connector import SinkConnector, SourceConnector
from ..api.errors import ConnectError, UnsupportedOperationError
from ..api.records import TopicPartition
from ..control.errors import ServerError
from ..control.offset_requests import success_message
from ..storage.base import OffsetStore
from ..storage.connector_offset_store import ConnectorOffsetStore
from ..storage.kafka_log import PRODUCER_SETTINGS, TopicSpec
from ..storage.kafka_offset_store import KafkaOffsetStore
from ..storage.offset_codec import decode_key, decode_value, encode_key, encode_value
from ..worker_config import WorkerConfig
from . import clients

log = logging.getLogger(__name__)

ADMIN_TIMEOUT_S = 30.0
ADMIN_ATTEMPTS = 3
TRANSIENT_CODES = (
    "_TRANSPORT",
    "COORDINATOR_NOT_AVAILABLE",
    "NOT_COORDINATOR",
    "COORDINATOR_LOAD_IN_PROGRESS",
    "_TIMED_OUT",
    "REQUEST_TIMED_OUT",
)
T = TypeVar("T")


def _call_hook(
    connector: SourceConnector | SinkConnector, name: str, kind: str, config: dict[str, str], offsets: Any
) -> bool:
    try:
        result = connector.alter_offsets(dict(config), offsets)
    except UnsupportedOperationError:
        raise ServerError(
            f"Failed to modify offsets for connector {name} because it doesn't support external modification of offsets"
        ) from None
    except ConnectError as exc:
        raise ServerError(str(exc) or f"Failed to modify offsets for {kind} connector {name}") from exc
    except Exception as exc:
        raise ServerError(f"Failed to modify offsets for {kind} connector {name}: {exc}") from exc
    return bool(result)


OFFSETS_TOPIC_KEY = "offsets.storage.topic"


def connector_offsets_topic(connector_config: dict[str, str]) -> str | None:
    """The connector's own offsets topic, if it names one (the key is a non-empty string)."""
    topic = (connector_config.get(OFFSETS_TOPIC_KEY) or "").strip()
    return topic or None


def _prefixed(config: dict[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: str(v) for k, v in config.items() if k.startswith(prefix)}


_ACCEPTED: dict[tuple[str, frozenset[tuple[str, str]]], dict[str, str]] = {}


def _librdkafka_settings(factory: Callable[[dict[str, Any]], Any], settings: dict[str, str]) -> dict[str, str]:
    """`settings` without what librdkafka refuses (Java-only names such as max.request.size), as the
    connector's own clients drop them: found once per distinct config by building a throwaway client."""
    settings = {k: v for k, v in settings.items() if k not in ("group.id", "client.id")}
    key = (getattr(factory, "__name__", str(factory)), frozenset(settings.items()))
    if key not in _ACCEPTED:
        accepted: dict[str, str] = {}

        def probe(config: dict[str, Any]) -> None:
            client = factory({**config, "group.id": "probe"} if factory is Consumer else config)
            accepted.update(config)
            if isinstance(client, Consumer):
                client.close()

        clients.create_client(probe, settings, f"offsets store {key[0].lower()}")
        _ACCEPTED[key] = accepted
    return dict(_ACCEPTED[key])


def _servers(value: str | None) -> set[str]:
    return {s.strip() for s in (value or "").split(",") if s.strip()}


class SourceOffsetStores:
    """Builds the offset store of one source connector (its tasks and its offsets requests).

    `worker_topic` is the worker's offsets topic when per-connector topics are permitted (distributed
    mode), None otherwise (standalone: the key is ignored, as the reference ignores it). The connector
    topic lives on the cluster the connector's producer writes to; its admin and consumer take the
    connector's `admin.override.*` / `consumer.override.*` on top. A connector topic that is the worker's
    own topic on the worker's own cluster is just the worker store.
    """

    def __init__(
        self,
        config: WorkerConfig,
        worker_store: OffsetStore,
        worker_topic: TopicSpec | None = None,
        base_client_config: dict[str, str] | None = None,
        read_strategy: str = "watermark",
        resolve: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> None:
        self.config = config
        self.worker_store = worker_store
        self.worker_topic = worker_topic
        self.base_client_config = {k: v for k, v in (base_client_config or {}).items() if k != "group.id"}
        self.read_strategy = read_strategy
        self.resolve = resolve

    def uses_connector_store(self, connector_config: dict[str, str]) -> bool:
        return self.worker_topic is not None and connector_offsets_topic(connector_config) is not None

    def _connector_topic(self, connector_config: dict[str, str]) -> tuple[str, str, dict[str, str]] | None:
        """The connector's own offsets topic (resolved config), its bootstrap servers and producer settings;
        None when it has none, or names the worker's topic on the worker's cluster."""
        topic = connector_offsets_topic(connector_config)
        if self.worker_topic is None or topic is None:
            return None
        producer = clients.producer_config(self.config, connector_config)
        bootstrap = producer.get("bootstrap.servers") or self.config.bootstrap_servers or ""
        if topic == self.worker_topic.name and _servers(bootstrap) == _servers(self.config.bootstrap_servers):
            return None
        return topic, bootstrap, producer

    def primary_topic_producer(self, connector_config: dict[str, str]) -> tuple[str, dict[str, str]]:
        """The primary offsets topic of a source connector (its own, else the worker's) and the producer
        settings that reach it: where exactly-once writes of its offsets go."""
        own = self._connector_topic(connector_config)
        if own is not None:
            topic, bootstrap, producer = own
            return topic, {**_librdkafka_settings(Producer, producer), "bootstrap.servers": bootstrap}
        assert self.worker_topic is not None, "exactly-once offsets writes need distributed mode"
        return self.worker_topic.name, dict(self.base_client_config)

    def for_connector(
        self, name: str, connector_config: dict[str, str], client_id: str | None = None
    ) -> ConnectorOffsetStore:
        """A store to start() before use and stop() after; only a connector-specific part is really started.
        `connector_config` is resolved (config provider references replaced)."""
        own = self._connector_topic(connector_config)
        if own is None:
            return ConnectorOffsetStore.worker_only(self.worker_store)
        assert self.worker_topic is not None
        topic, bootstrap, producer = own
        spec = TopicSpec(
            topic,
            self.worker_topic.partitions,
            self.worker_topic.replication_factor,
            OFFSETS_TOPIC_KEY,
            "source connector offsets",
        )
        consumer = {
            "bootstrap.servers": bootstrap,
            "isolation.level": "read_committed",
            **self.config.client_configs("consumer."),
            **_prefixed(connector_config, "consumer.override."),
        }
        admin = {
            "bootstrap.servers": bootstrap,
            **self.config.client_configs("admin."),
            **_prefixed(connector_config, "admin.override."),
        }
        # KafkaBasedLog names its own clients and adds acks=all, one request in flight and murmur2 (the
        # partition a Java worker picks for a key); Java-only names would make librdkafka refuse the config
        producer, consumer, admin = (
            _librdkafka_settings(factory, settings)
            for factory, settings in ((Producer, producer), (Consumer, consumer), (AdminClient, admin))
        )
        store = KafkaOffsetStore(
            spec,
            {**self.base_client_config, "bootstrap.servers": bootstrap},
            read_strategy=self.read_strategy,
            producer_config=producer,
            consumer_config=consumer,
            admin_config=admin,
            client_id=client_id or f"connector-offsets-{name}",
        )
        return ConnectorOffsetStore(self.worker_store, store, topic)


class TransactionalOffsetWriter(OffsetStore):
    """Writes offsets to one topic in one transaction of a producer with `transactional_id` (initialising it
    fences any earlier producer with that id). Write-only: reads go through the offset stores."""

    def __init__(
        self, producer_config: dict[str, str], topic: str, transactional_id: str, timeout_s: float = ADMIN_TIMEOUT_S
    ) -> None:
        self.producer_config = {
            **producer_config,
            **PRODUCER_SETTINGS,  # Java's partitioner: keys land where every reader looks for them
            "max.in.flight.requests.per.connection": "5",
            "enable.idempotence": "true",
            "transactional.id": transactional_id,
        }
        self.topic = topic
        self.timeout_s = timeout_s

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        if not entries:
            return
        producer = clients.create_client(Producer, self.producer_config, "offsets producer")
        failures: list[KafkaError] = []

        def delivered(err: KafkaError | None, _msg: object) -> None:
            if err is not None:
                failures.append(err)

        producer.init_transactions(self.timeout_s)
        producer.begin_transaction()
        for key, value in entries.items():
            producer.produce(self.topic, key=key, value=value, on_delivery=delivered)
        producer.commit_transaction(self.timeout_s)  # flushes: every delivery callback has run
        producer.close()  # only once committed: closing with a transaction open would wait for it to end
        if failures:
            raise KafkaException(failures[0])

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        raise NotImplementedError("write-only")

    def items(self) -> list[tuple[bytes, bytes]]:
        raise NotImplementedError("write-only")


class OffsetsManager:
    """`stores` (distributed mode) gives source connectors with their own offsets topic their combined
    store; `connector_config` looks up a connector's stored config for reads that are given only its name."""

    def __init__(
        self,
        config: WorkerConfig,
        offset_store: OffsetStore,
        stores: SourceOffsetStores | None = None,
        connector_config: Callable[[str], dict[str, str] | None] | None = None,
    ) -> None:
        self.config = config
        self.offset_store = offset_store
        self.stores = stores
        self.connector_config = connector_config

    # ---- source ---------------------------------------------------------------------------------

    def _open(self, name: str, config: dict[str, str] | None) -> OffsetStore | None:
        """A started connector-specific store for `name`, or None when the worker store is all there is."""
        if self.stores is None:
            return None
        if config is None and self.connector_config is not None:
            config = self.connector_config(name)
        if config is None or not self.stores.uses_connector_store(config):
            return None
        if self.stores.resolve is not None:  # stored configs keep config provider references
            config = self.stores.resolve(config)
        store = self.stores.for_connector(name, config, client_id=f"connector-offsets-request-{name}")
        if not store.has_connector_store:
            return None
        store.start()
        return store

    def _source_partitions(
        self, name: str, store: OffsetStore | None = None
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Partitions of `name` with a live offset in any store, each with the offset a task would read:
        None for one known only to the worker topic when the connector has its own topic (as the reference)."""
        entries = []
        for raw_key, raw_value in (store or self.offset_store).items():
            decoded = decode_key(raw_key)
            if decoded is not None and decoded[0] == name:
                entries.append((decoded[1], raw_key, raw_value))
        current = store.get([k for _, k, _ in entries]) if store is not None else {k: v for _, k, v in entries}
        result: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for partition, raw_key, _ in entries:
            stored = current.get(raw_key)
            if stored is None:
                result.append((partition, None))
                continue
            offset = decode_value(stored)
            if offset is not None:
                result.append((partition, offset))
        return result

    def source_offsets(self, name: str, config: dict[str, str] | None = None) -> list[dict[str, Any]]:
        try:
            store = self._open(name, config)
        except Exception as exc:
            raise ServerError(f"Failed to retrieve offsets for source connector {name}: {exc}") from exc
        try:
            return [{"partition": p, "offset": o} for p, o in self._source_partitions(name, store)]
        finally:
            if store is not None:
                store.stop()

    def alter_source(
        self,
        name: str,
        config: dict[str, str],
        connector: SourceConnector,
        entries: list[tuple[dict[str, Any], dict[str, Any] | None]],
        reset: bool = False,
        transactional_id: str | None = None,
    ) -> str:
        """`transactional_id`: write in one transaction under it (an exactly-once worker; see the module docs)."""
        try:
            store = self._open(name, config)
        except Exception as exc:
            raise ServerError(f"Failed to modify offsets for source connector {name}: {exc}") from exc
        try:
            return self._alter_source(name, config, connector, entries, reset, store, transactional_id)
        finally:
            if store is not None:
                store.stop()

    def _alter_source(
        self,
        name: str,
        config: dict[str, str],
        connector: SourceConnector,
        entries: list[tuple[dict[str, Any], dict[str, Any] | None]],
        reset: bool,
        store: OffsetStore | None,
        transactional_id: str | None,
    ) -> str:
        definite = _call_hook(connector, name, "source", config, entries)
        if entries:
            target = store or self.offset_store
            if transactional_id is not None:
                target = self._transactional_target(config, transactional_id, store is not None)
            try:
                target.set({encode_key(name, p): encode_value(o) for p, o in entries})
            except Exception as exc:
                raise ServerError(f"Failed to modify offsets for source connector {name}: {exc}") from exc
        return success_message(definite, reset)

    def _transactional_target(self, config: dict[str, str], transactional_id: str, own_topic: bool) -> OffsetStore:
        """The primary offsets topic written in one transaction, with the worker's store as the copy when
        the connector has a topic of its own."""
        assert self.stores is not None, "exactly-once offsets writes need distributed mode"
        resolved = self.stores.resolve(config) if self.stores.resolve is not None else config
        topic, producer = self.stores.primary_topic_producer(resolved)
        writer = TransactionalOffsetWriter(producer, topic, transactional_id)
        if own_topic:
            return ConnectorOffsetStore(self.offset_store, writer, topic)
        return writer

    def reset_source(
        self, name: str, config: dict[str, str], connector: SourceConnector, transactional_id: str | None = None
    ) -> str:
        try:
            store = self._open(name, config)
        except Exception as exc:
            raise ServerError(f"Failed to modify offsets for source connector {name}: {exc}") from exc
        try:
            entries: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
                (p, None) for p, _ in self._source_partitions(name, store)
            ]
            return self._alter_source(name, config, connector, entries, True, store, transactional_id)
        finally:
            if store is not None:
                store.stop()

    # ---- sink -----------------------------------------------------------------------------------

    def _admin(self, config: dict[str, str]) -> AdminClient:
        return clients.create_client(AdminClient, clients.admin_config(self.config, config, sink=True), "admin client")

    def _group_offsets(self, admin: AdminClient, group: str) -> dict[TopicPartition, int]:
        futures = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=ADMIN_TIMEOUT_S
        )
        result = futures[group].result(timeout=ADMIN_TIMEOUT_S)
        return {
            TopicPartition(tp.topic, tp.partition): tp.offset
            for tp in (result.topic_partitions or [])
            if tp.offset is not None and tp.offset >= 0 and not tp.error
        }

    def sink_offsets(self, name: str, config: dict[str, str]) -> list[dict[str, Any]]:
        group = clients.group_id(name, config)
        try:
            offsets = self._group_offsets(self._admin(config), group)
        except (KafkaException, Exception) as exc:
            if _is_group_missing(exc):
                return []
            raise ServerError(f"Failed to retrieve consumer group offsets for sink connector {name}: {exc}") from exc
        return [
            {"partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition}, "offset": {"kafka_offset": o}}
            for tp, o in sorted(offsets.items())
        ]

    def alter_sink(
        self, name: str, config: dict[str, str], connector: SinkConnector, offsets: dict[TopicPartition, int | None]
    ) -> str:
        definite = _call_hook(connector, name, "sink", config, dict(offsets))
        group = clients.group_id(name, config)
        altered = {tp: o for tp, o in offsets.items() if o is not None}
        try:
            if len(altered) < len(offsets):
                # The admin API here has no per-partition offset delete: rebuild the group without the
                # deleted partitions. Safe because offsets only change while the connector is STOPPED.
                current = self._retrying(config, lambda admin: self._group_offsets_or_empty(admin, group))
                remaining = {tp: o for tp, o in current.items() if tp not in offsets}
                remaining.update(altered)
                self._retrying(config, lambda admin: self._delete_group(admin, group))
                self._retrying(config, lambda admin: self._commit(admin, group, remaining))
            else:
                self._retrying(config, lambda admin: self._commit(admin, group, altered))
        except ServerError:
            raise
        except Exception as exc:
            raise _group_error(
                exc, name, "alter", f"Failed to alter consumer group offsets for connector {name}"
            ) from exc
        return success_message(definite, reset=False)

    def reset_sink(self, name: str, config: dict[str, str], connector: SinkConnector) -> str:
        group = clients.group_id(name, config)
        try:
            current = self._retrying(config, lambda admin: self._group_offsets_or_empty(admin, group))
        except Exception as exc:
            raise ServerError(f"Failed to list offsets prior to resetting offsets for sink connector {name}") from exc
        definite = _call_hook(connector, name, "sink", config, {tp: None for tp in current})
        try:
            self._retrying(config, lambda admin: self._delete_group(admin, group))
        except Exception as exc:
            raise _group_error(
                exc, name, "reset", f"Failed to reset consumer group offsets for sink connector {name}"
            ) from exc
        return success_message(definite, reset=True)

    def _retrying(self, config: dict[str, str], operation: Callable[[AdminClient], T]) -> T:
        """Run an admin operation, again with a fresh client after a transient failure (a dropped
        connection, a coordinator moving): such requests are idempotent while the connector is STOPPED."""
        for attempt in range(ADMIN_ATTEMPTS):
            try:
                return operation(self._admin(config))
            except Exception as exc:
                if attempt + 1 >= ADMIN_ATTEMPTS or not any(code in str(exc) for code in TRANSIENT_CODES):
                    raise
                log.info("Retrying a consumer group operation after a transient error: %s", exc)
                time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _group_offsets_or_empty(self, admin: AdminClient, group: str) -> dict[TopicPartition, int]:
        try:
            return self._group_offsets(admin, group)
        except Exception as exc:
            if _is_group_missing(exc):
                return {}
            raise

    @staticmethod
    def _commit(admin: AdminClient, group: str, offsets: dict[TopicPartition, int]) -> None:
        if not offsets:
            return
        request = ConsumerGroupTopicPartitions(group, [KafkaTopicPartition(t, p, o) for (t, p), o in offsets.items()])
        futures = admin.alter_consumer_group_offsets([request], request_timeout=ADMIN_TIMEOUT_S)
        result = futures[group].result(timeout=ADMIN_TIMEOUT_S)
        errors = [tp for tp in (result.topic_partitions or []) if tp.error]
        if errors:
            raise ConnectError(f"partition errors: {[(tp.topic, tp.partition, str(tp.error)) for tp in errors]}")

    @staticmethod
    def _delete_group(admin: AdminClient, group: str) -> None:
        futures = admin.delete_consumer_groups([group], request_timeout=ADMIN_TIMEOUT_S)
        try:
            futures[group].result(timeout=ADMIN_TIMEOUT_S)
        except Exception as exc:
            if not _is_group_missing(exc):
                raise


ZOMBIE_CODES = {
    "UNKNOWN_MEMBER_ID",
    "GROUP_SUBSCRIBED_TO_TOPIC",
    "NON_EMPTY_GROUP",
    "REBALANCE_IN_PROGRESS",
    "ILLEGAL_GENERATION",
    "FENCED_INSTANCE_ID",
}
ZOMBIE_TAIL = (
    "If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually "
    "succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."
)


def _group_error(exc: BaseException, name: str, verb: str, generic: str) -> ServerError:
    """The reference's messages: zombie members (tasks still in the group) get the 'safely retried' text."""
    if any(code in str(exc) for code in ZOMBIE_CODES):
        return ServerError(
            f"Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped "
            f"completely yet or the connector was resumed before the request to {verb} its offsets could be "
            f"successfully completed. {ZOMBIE_TAIL}"
        )
    return ServerError(f"{generic}: {exc}")


def _is_group_missing(exc: BaseException) -> bool:
    error = exc.args[0] if exc.args else None
    if isinstance(error, KafkaError):
        return error.code() in (
            KafkaError.GROUP_ID_NOT_FOUND,
            KafkaError._UNKNOWN_GROUP if hasattr(KafkaError, "_UNKNOWN_GROUP") else -99999,
        )
    return "GROUP_ID_NOT_FOUND" in str(exc) or "does not exist" in str(exc)
