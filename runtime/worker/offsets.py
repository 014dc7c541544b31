"""Reading, altering and resetting connector offsets (KIP-875).

Source offsets live in the worker's offset store; sink offsets are the committed offsets of the
connector's consumer group, reached through an admin client built with the connector's overrides
(so a connector that targets another Kafka cluster has its offsets read and changed there).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, TypeVar

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from ..api.connector import Connector, SinkConnector, SourceConnector
from ..api.errors import ConnectError, UnsupportedOperationError
from ..api.records import TopicPartition
from ..herder.errors import ServerError
from ..herder.offset_requests import success_message
from ..storage.base import OffsetStore
from ..storage.offset_codec import decode_key, decode_value, encode_key, encode_value
from ..worker_config import WorkerConfig
from . import clients

log = logging.getLogger(__name__)

ADMIN_TIMEOUT_S = 30.0
ADMIN_ATTEMPTS = 3
TRANSIENT_CODES = ("_TRANSPORT", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS",
                   "_TIMED_OUT", "REQUEST_TIMED_OUT")
T = TypeVar("T")


def _call_hook(connector: Connector, name: str, kind: str, config: dict[str, str], offsets: Any) -> bool:
    try:
        result = connector.alter_offsets(dict(config), offsets)  # type: ignore[attr-defined]
    except UnsupportedOperationError:
        raise ServerError(f"Failed to modify offsets for connector {name} because it doesn't support external "
                          "modification of offsets") from None
    except ConnectError as exc:
        raise ServerError(str(exc) or f"Failed to modify offsets for {kind} connector {name}") from exc
    except Exception as exc:  # noqa: BLE001
        raise ServerError(f"Failed to modify offsets for {kind} connector {name}: {exc}") from exc
    return bool(result)


class OffsetsManager:
    def __init__(self, config: WorkerConfig, offset_store: OffsetStore) -> None:
        self.config = config
        self.offset_store = offset_store

    # ---- source ---------------------------------------------------------------------------------

    def _source_partitions(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        result = []
        for raw_key, raw_value in self.offset_store.items():
            decoded = decode_key(raw_key)
            if decoded is None or decoded[0] != name:
                continue
            offset = decode_value(raw_value)
            if offset is not None:
                result.append((decoded[1], offset))
        return result

    def source_offsets(self, name: str) -> list[dict[str, Any]]:
        return [{"partition": p, "offset": o} for p, o in self._source_partitions(name)]

    def alter_source(self, name: str, config: dict[str, str], connector: SourceConnector,
                     entries: list[tuple[dict[str, Any], dict[str, Any] | None]], reset: bool = False) -> str:
        definite = _call_hook(connector, name, "source", config, entries)
        if entries:
            try:
                self.offset_store.set({encode_key(name, p): encode_value(o) for p, o in entries})
            except Exception as exc:  # noqa: BLE001
                raise ServerError(f"Failed to modify offsets for source connector {name}: {exc}") from exc
        return success_message(definite, reset)

    def reset_source(self, name: str, config: dict[str, str], connector: SourceConnector) -> str:
        entries: list[tuple[dict[str, Any], dict[str, Any] | None]] = [(p, None) for p, _ in self._source_partitions(name)]
        return self.alter_source(name, config, connector, entries, reset=True)

    # ---- sink -----------------------------------------------------------------------------------

    def _admin(self, config: dict[str, str]) -> AdminClient:
        return clients.create_client(AdminClient, clients.admin_config(self.config, config, sink=True), "admin client")

    def _group_offsets(self, admin: AdminClient, group: str) -> dict[TopicPartition, int]:
        futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=ADMIN_TIMEOUT_S)
        result = futures[group].result(timeout=ADMIN_TIMEOUT_S)
        return {TopicPartition(tp.topic, tp.partition): tp.offset
                for tp in (result.topic_partitions or []) if tp.offset is not None and tp.offset >= 0 and not tp.error}

    def sink_offsets(self, name: str, config: dict[str, str]) -> list[dict[str, Any]]:
        group = clients.group_id(name, config)
        try:
            offsets = self._group_offsets(self._admin(config), group)
        except (KafkaException, Exception) as exc:  # noqa: BLE001
            if _is_group_missing(exc):
                return []
            raise ServerError(f"Failed to retrieve consumer group offsets for sink connector {name}: {exc}") from exc
        return [{"partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition}, "offset": {"kafka_offset": o}}
                for tp, o in sorted(offsets.items())]

    def alter_sink(self, name: str, config: dict[str, str], connector: SinkConnector,
                   offsets: dict[TopicPartition, int | None]) -> str:
        definite = _call_hook(connector, name, "sink", config, dict(offsets))
        group = clients.group_id(name, config)
        try:
            if any(o is None for o in offsets.values()):
                # The admin API here has no per-partition offset delete: rebuild the group without the
                # deleted partitions. Safe because offsets only change while the connector is STOPPED.
                current = self._retrying(config, lambda admin: self._group_offsets_or_empty(admin, group))
                remaining = {tp: o for tp, o in current.items() if tp not in offsets}
                remaining.update({tp: o for tp, o in offsets.items() if o is not None})
                self._retrying(config, lambda admin: self._delete_group(admin, group))
                self._retrying(config, lambda admin: self._commit(admin, group, remaining))
            else:
                self._retrying(config, lambda admin: self._commit(admin, group, offsets))  # type: ignore[arg-type]
        except ServerError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _group_error(exc, name, "alter", f"Failed to alter consumer group offsets for connector {name}") from exc
        return success_message(definite, reset=False)

    def reset_sink(self, name: str, config: dict[str, str], connector: SinkConnector) -> str:
        group = clients.group_id(name, config)
        try:
            current = self._retrying(config, lambda admin: self._group_offsets_or_empty(admin, group))
        except Exception as exc:  # noqa: BLE001
            raise ServerError(f"Failed to list offsets prior to resetting offsets for sink connector {name}") from exc
        definite = _call_hook(connector, name, "sink", config, {tp: None for tp in current})
        try:
            self._retrying(config, lambda admin: self._delete_group(admin, group))
        except Exception as exc:  # noqa: BLE001
            raise _group_error(exc, name, "reset", f"Failed to reset consumer group offsets for sink connector {name}") from exc
        return success_message(definite, reset=True)

    def _retrying(self, config: dict[str, str], operation: Callable[[AdminClient], T]) -> T:
        """Run an admin operation, again with a fresh client after a transient failure (a dropped
        connection, a coordinator moving): such requests are idempotent while the connector is STOPPED."""
        for attempt in range(ADMIN_ATTEMPTS):
            try:
                return operation(self._admin(config))
            except Exception as exc:  # noqa: BLE001
                if attempt + 1 >= ADMIN_ATTEMPTS or not any(code in str(exc) for code in TRANSIENT_CODES):
                    raise
                log.info("Retrying a consumer group operation after a transient error: %s", exc)
                time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _group_offsets_or_empty(self, admin: AdminClient, group: str) -> dict[TopicPartition, int]:
        try:
            return self._group_offsets(admin, group)
        except Exception as exc:  # noqa: BLE001
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
        except Exception as exc:  # noqa: BLE001
            if not _is_group_missing(exc):
                raise


ZOMBIE_CODES = {"UNKNOWN_MEMBER_ID", "GROUP_SUBSCRIBED_TO_TOPIC", "NON_EMPTY_GROUP", "REBALANCE_IN_PROGRESS",
                "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"}
ZOMBIE_TAIL = ("If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually "
               "succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.")


def _group_error(exc: BaseException, name: str, verb: str, generic: str) -> ServerError:
    """The reference's messages: zombie members (tasks still in the group) get the 'safely retried' text."""
    if any(code in str(exc) for code in ZOMBIE_CODES):
        return ServerError(
            f"Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped "
            f"completely yet or the connector was resumed before the request to {verb} its offsets could be "
            f"successfully completed. {ZOMBIE_TAIL}")
    return ServerError(f"{generic}: {exc}")


def _is_group_missing(exc: BaseException) -> bool:
    error = exc.args[0] if exc.args else None
    if isinstance(error, KafkaError):
        return error.code() in (KafkaError.GROUP_ID_NOT_FOUND, KafkaError._UNKNOWN_GROUP if hasattr(KafkaError, "_UNKNOWN_GROUP") else -99999)
    return "GROUP_ID_NOT_FOUND" in str(exc) or "does not exist" in str(exc)
