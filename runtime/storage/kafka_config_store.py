"""Connector configs, task configs, target states and cluster records in the config topic (contract 3.1).

Record formats and the KIP-915 reading rules come from `config_codec`; this module adds the records a
distributed worker needs beyond a snapshot (restart requests, task-count records, the session key,
cluster logger levels), the writes in the reference's order, and a listener the distributed herder
implements to hear about changes. Listeners are called on the reader thread, only after `start()`
has replayed the topic (historic records build state, they are not events), and must not block.

With exactly-once source support `preparing` or `enabled` (KIP-618), the leader's writes (connector and
task configs, restart requests, task count records, the session key, placements) go through a
transactional producer with the id `connect-cluster-<group.id>`, as the reference's: the leader claims it
when it becomes leader (InitProducerId), which fences the producer of any earlier leader, so a leader that
lost leadership can no longer write (PrivilegedWriteError). Target states and logger levels may be written
by any worker, and are not. The topic is then read `read_committed` (the bootstrap says so).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import orjson
from confluent_kafka import KafkaError, KafkaException, Producer

from .base import ConfigStore
from .config_codec import (
    COMMIT_PREFIX,
    CONNECTOR_PREFIX,
    LOGGER_CLUSTER_PREFIX,
    RESTART_PREFIX,
    SESSION_KEY,
    TARGET_STATE_PREFIX,
    TASKS_FENCING_PREFIX,
    ConfigSnapshot,
    ConnectorState,
    apply_record,
    commit_record,
    connector_record,
    parse_target_state,
    target_state_record,
    task_record,
)
from .kafka_log import PRODUCER_SETTINGS, KafkaBasedLog, KafkaStoreError, TopicSpec
from .states import TargetState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    only_failed: bool = False
    include_tasks: bool = False


@dataclass(frozen=True)
class SessionKey:
    key: str  # base64, as stored
    algorithm: str
    creation_timestamp: int


@dataclass
class ClusterConfig:
    """Everything read from the config topic so far."""

    connectors: dict[str, ConnectorState] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    task_count_records: dict[str, int] = field(default_factory=dict)
    session_key: SessionKey | None = None
    logger_levels: dict[str, str] = field(default_factory=dict)
    offset: int = -1  # offset of the last record applied (the reference's "config offset")
    # per connector: offset of its latest connector- record and of its latest applied commit- record, so
    # readers can tell whether its config changed since its task configs were last committed
    config_offsets: dict[str, int] = field(default_factory=dict)
    commit_offsets: dict[str, int] = field(default_factory=dict)
    # KIP-618: connectors whose latest task configs came after their latest task count record: the tasks of
    # the earlier generation must be fenced out (and a task count record written) before these start
    pending_fencing: set[str] = field(default_factory=set)


class PrivilegedWriteError(KafkaStoreError):
    """A leader-only write failed on the transactional producer (typically: fenced by a newer leader's), or
    was attempted without write privileges."""


class ConfigUpdateListener:
    """What the distributed herder hears from the config topic; every method defaults to doing nothing."""

    def on_connector_config_update(self, connector: str) -> None: ...
    def on_connector_config_remove(self, connector: str) -> None: ...
    def on_task_config_update(self, connector: str, task_ids: list[int]) -> None: ...
    def on_target_state_change(self, connector: str, state: TargetState) -> None: ...
    def on_restart_request(self, request: RestartRequest) -> None: ...
    def on_session_key_update(self, key: SessionKey) -> None: ...
    def on_logger_level(self, namespace: str, level: str) -> None: ...
    def on_task_count_record(self, connector: str, count: int) -> None: ...


# ---- records the codec does not cover (extend config_codec with these when convenient) ------------


def restart_record(request: RestartRequest) -> tuple[str, dict[str, Any]]:
    return RESTART_PREFIX + request.connector, {
        "include-tasks": request.include_tasks,
        "only-failed": request.only_failed,
    }


def task_count_record(connector: str, count: int) -> tuple[str, dict[str, Any]]:
    return TASKS_FENCING_PREFIX + connector, {"task-count": count}


def session_key_record(key: SessionKey) -> tuple[str, dict[str, Any]]:
    return SESSION_KEY, {"key": key.key, "algorithm": key.algorithm, "creation-timestamp": key.creation_timestamp}


def logger_level_record(namespace: str, level: str) -> tuple[str, dict[str, Any]]:
    return LOGGER_CLUSTER_PREFIX + namespace, {"level": level}


def parse_restart(key: str, value: Any) -> RestartRequest | None:
    if not isinstance(value, dict):
        log.error("Ignoring restart request record %s with invalid value %r", key, value)
        return None
    flags = {}
    for name in ("include-tasks", "only-failed"):
        raw = value.get(name)
        if not isinstance(raw, bool):
            log.warning(
                "Invalid data for restart request '%s' field should be a Boolean but is %r; defaulting to false",
                name,
                raw,
            )
            raw = False
        flags[name] = raw
    return RestartRequest(key[len(RESTART_PREFIX) :], flags["only-failed"], flags["include-tasks"])


def parse_session_key(value: Any) -> SessionKey | None:
    if not isinstance(value, dict):
        return None
    key, algorithm, created = value.get("key"), value.get("algorithm"), value.get("creation-timestamp")
    if (
        not isinstance(key, str)
        or not isinstance(algorithm, str)
        or not isinstance(created, int)
        or isinstance(created, bool)
    ):
        return None
    return SessionKey(key, algorithm, created)


def encode_value(value: Any) -> bytes | None:
    return None if value is None else orjson.dumps(value)


class KafkaConfigStore(ConfigStore):
    """The config topic (1 partition) as a ConfigStore plus the distributed herder's extra records."""

    def __init__(
        self,
        spec: TopicSpec,
        client_config: dict[str, str],
        *,
        listener: ConfigUpdateListener | None = None,
        read_strategy: str = "watermark",
        read_timeout_s: float = 30.0,
        transactional_id: str | None = None,
        **log_options: Any,
    ) -> None:
        """`transactional_id`: the leader writes through a transactional producer with this id (exactly-once
        source support `preparing` or `enabled`); None: plain writes, as with `disabled`."""
        self.listener = listener or ConfigUpdateListener()
        self._lock = threading.RLock()
        self._snapshot = ConfigSnapshot()
        self._cluster = ClusterConfig()
        self._view: ClusterConfig | None = None  # snapshot() of the records read so far, until the next one
        self._started = False
        self._read_timeout_s = read_timeout_s
        self._extra: dict[str, Any] = {}  # key prefix -> handler(key, value, started), for records of our own
        self._next_offset = 0  # see next_offset()
        spec = TopicSpec(
            spec.name,
            1,
            spec.replication_factor,
            spec.setting or "config.storage.topic",
            "connector configurations",
            single_partition=True,
        )
        self.log = KafkaBasedLog(spec, client_config, self._on_record, read_strategy=read_strategy, **log_options)
        self._topic = spec.name
        self._fencable_config: dict[str, str] | None = None
        if transactional_id is not None:
            base = {k: str(v) for k, v in client_config.items() if k != "group.id"}
            client_id = base.get("client.id") or f"connect-{spec.name}"
            self._fencable_config = {
                **base,
                **PRODUCER_SETTINGS,
                "max.in.flight.requests.per.connection": "5",  # idempotent: no reordering
                "enable.idempotence": "true",
                "transactional.id": transactional_id,
                "client.id": f"{client_id}-leader",
            }
        self._fencable: Producer | None = None
        self._fencable_lock = threading.Lock()  # one transaction at a time

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        """The distributed herder's listener (it is built after the store, as in the reference)."""
        self.listener = listener

    def register_prefix(self, prefix: str, handler: Any) -> None:
        """Send records whose key starts with `prefix` to `handler(key, decoded_value, started)` (on the
        reader thread, replay included) instead of the reference's rules. For records this project adds
        to the topic (e.g. the distributed herder's assignments); the Java reference skips them with a log line."""
        self._extra[prefix] = handler

    def write_raw(self, records: list[tuple[str, Any]]) -> None:
        """Write records of registered prefixes, in order, as the leader; durable and read back on return."""
        self._write(records, privileged=True)

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self.log.start(self._read_timeout_s)
        with self._lock:
            self._started = True  # from now on records are events for the listener

    def stop(self) -> None:
        self.relinquish_write_privileges()
        self.log.stop()

    # ---- the leader's write privileges (KIP-618) -------------------------------------------------

    @property
    def uses_fencable_writer(self) -> bool:
        return self._fencable_config is not None

    def has_write_privileges(self) -> bool:
        return self._fencable_config is None or self._fencable is not None

    def claim_write_privileges(self) -> None:
        """As the leader: initialise the transactional producer (fencing any earlier leader's). Idempotent;
        KafkaStoreError when it cannot."""
        if self._fencable_config is None:
            return
        with self._fencable_lock:
            if self._fencable is not None:
                return
            producer = Producer(self._fencable_config)
            try:
                producer.init_transactions(self._read_timeout_s)
            except KafkaException as exc:
                raise KafkaStoreError(
                    f"Failed to create and initialize fencable producer for config topic: {_message(exc)}"
                ) from exc
            self._fencable = producer
        log.info("Claimed write privileges for the config topic %s", self._topic)

    def relinquish_write_privileges(self) -> None:
        with self._fencable_lock:
            producer, self._fencable = self._fencable, None
        if producer is not None:
            producer.close()  # no transaction is open between writes (each is one, under the lock)

    # ---- ConfigStore ---------------------------------------------------------------------------

    def load(self) -> dict[str, ConnectorState]:
        return self.snapshot().connectors

    def save(self, name: str, state: ConnectorState | None) -> None:
        """Write what differs from the stored state, in the reference's order; durable and visible on return."""
        current = self.snapshot().connectors.get(name)
        if state is None:
            if current is not None:
                self.remove_connector_config(name)
            return
        if current is None:
            initial = None if state.target_state is TargetState.STARTED else state.target_state
            self.put_connector_config(name, state.config, initial)
            if state.task_configs:
                self.put_task_configs(name, state.task_configs)
            return
        if state.config != current.config:
            self.put_connector_config(name, state.config)
        if state.task_configs != current.task_configs:
            self.put_task_configs(name, state.task_configs)
        if state.target_state is not current.target_state:
            self.put_target_state(name, state.target_state)

    # ---- writes (each returns once acknowledged and read back) ---------------------------------

    # Leader-only writes are "privileged": with a fencable writer they need write privileges (see above).

    def put_connector_config(self, name: str, config: dict[str, str], target_state: TargetState | None = None) -> None:
        records = [target_state_record(name, target_state)] if target_state is not None else []
        records.append(connector_record(name, config))
        self._write(records, privileged=True)

    def remove_connector_config(self, name: str) -> None:
        self._write([connector_record(name, None), target_state_record(name, None)], privileged=True)

    def put_task_configs(self, name: str, task_configs: list[dict[str, str]], privileged: bool = True) -> None:
        """`privileged=False`: written by the connector's owner that is not the leader (this project's workers
        write the task configs of the connectors they run; the reference's forward them to the leader)."""
        self._write(
            [*(task_record(name, i, c) for i, c in enumerate(task_configs)), commit_record(name, len(task_configs))],
            privileged,
        )

    def put_target_state(self, name: str, state: TargetState) -> None:
        self._write([target_state_record(name, state)], privileged=False)

    def put_restart_request(self, request: RestartRequest) -> None:
        self._write([restart_record(request)], privileged=True)

    def put_task_count_record(self, name: str, count: int) -> None:
        self._write([task_count_record(name, count)], privileged=True)

    def put_session_key(self, key: SessionKey) -> None:
        self._write([session_key_record(key)], privileged=True)

    def put_logger_level(self, namespace: str, level: str) -> None:
        self._write([logger_level_record(namespace, level)], privileged=False)

    def _write(self, records: list[tuple[str, Any]], privileged: bool) -> None:
        raw = [(key.encode("utf-8"), encode_value(value)) for key, value in records]
        if privileged and self._fencable_config is not None:
            positions = self._send_privileged(raw)
        else:
            positions = self.log.send(raw, self._read_timeout_s)
        self.log.wait_until_consumed(positions, self._read_timeout_s)

    def _send_privileged(self, raw: list[tuple[bytes, bytes | None]]) -> list[tuple[int, int]]:
        """The records in one transaction of the leader's producer; on any failure it is given up (a fenced
        producer is fenced for good) and PrivilegedWriteError raised: the leader claims again if it still is."""
        with self._fencable_lock:
            producer = self._fencable
            if producer is None:
                raise PrivilegedWriteError("Cannot produce to config topic without claiming write privileges first")
            positions: list[tuple[int, int]] = []
            errors: list[KafkaError] = []

            def delivered(err: KafkaError | None, msg: Any) -> None:
                if err is not None:
                    errors.append(err)
                else:
                    positions.append((msg.partition(), msg.offset()))

            try:
                producer.begin_transaction()
                for key, value in raw:
                    producer.produce(self._topic, value=value, key=key, partition=0, on_delivery=delivered)
                producer.commit_transaction(self._read_timeout_s)  # flushes: every delivery callback has run
                if errors:
                    raise KafkaException(errors[0])
            except KafkaException as exc:
                self._fencable = None
                log.warning("Failed to perform fencable send to config topic: %s", _message(exc))
                raise PrivilegedWriteError(f"Failed to perform fencable send to config topic: {_message(exc)}") from exc
        return positions

    def refresh(self) -> None:
        """Read the topic to its end (records other workers wrote)."""
        self.log.read_to_end(self._read_timeout_s)

    # ---- reads ---------------------------------------------------------------------------------

    def next_offset(self) -> int:
        """The config offset of the group protocol, as reference workers count it (the offset after the last
        record read, whatever its key: also the placements this runtime writes, which they skip): what a
        member advertises and the leader assigns at. A reference member reads to the end and takes up an
        assignment only when its own count equals the assignment's."""
        with self._lock:
            return self._next_offset

    def snapshot(self) -> ClusterConfig:
        """What has been read so far, as a view shared by every caller until the next record: read it,
        never change it. Taking one is O(1) while nothing changes (the herder's tick and every REST read
        take one) and a shallow copy otherwise, because the codec replaces a changed ConnectorState
        instead of changing it in place."""
        with self._lock:
            if self._view is None:
                cluster = self._cluster
                self._view = ClusterConfig(
                    dict(self._snapshot.connectors),
                    set(self._snapshot.inconsistent),
                    dict(cluster.task_count_records),
                    cluster.session_key,
                    dict(cluster.logger_levels),
                    cluster.offset,
                    dict(cluster.config_offsets),
                    dict(cluster.commit_offsets),
                    set(cluster.pending_fencing),
                )
            return self._view

    def _on_record(self, raw_key: bytes | None, raw_value: bytes | None, partition: int, offset: int) -> None:
        try:
            key = raw_key.decode("utf-8") if raw_key is not None else None
        except UnicodeDecodeError:
            key = None
        if key is None:
            log.error("Discarding config update record with invalid key: %r", raw_key)
            return
        value: Any = None
        if raw_value is not None:
            try:
                value = orjson.loads(raw_value)
            except orjson.JSONDecodeError:
                log.error("Failed to convert config data to Kafka Connect format for record %s; ignoring it", key)
                return
        with self._lock:
            self._next_offset = offset + 1
        for prefix, handler in self._extra.items():
            if key.startswith(prefix):
                try:
                    handler(key, value, self._started)
                except Exception:
                    log.exception("Handler of config record %s failed", key)
                return
        with self._lock:
            self._cluster.offset = offset
            self._view = None
            events = self._apply(key, value)
            started = self._started
        if started:
            for event in events:
                try:
                    event()
                except Exception:
                    log.exception("Config update listener failed on record %s", key)

    def _apply(self, key: str, value: Any) -> list:
        """Update state from one record; return the listener calls it implies (made after the lock)."""
        listener = self.listener
        if key.startswith(TARGET_STATE_PREFIX):
            name = key[len(TARGET_STATE_PREFIX) :]
            apply_record(self._snapshot, key, value)
            # a removed target state is announced by the connector's removal, as in the reference; a state
            # written before its connector (creation with an initial state) is announced too
            state = parse_target_state(value) if value is not None else None
            return [lambda: listener.on_target_state_change(name, state)] if state is not None else []
        if key.startswith(CONNECTOR_PREFIX):
            name = key[len(CONNECTOR_PREFIX) :]
            existed = name in self._snapshot.connectors
            apply_record(self._snapshot, key, value)
            if value is None:
                self._cluster.task_count_records.pop(name, None)
                self._cluster.config_offsets.pop(name, None)
                self._cluster.commit_offsets.pop(name, None)
                self._cluster.pending_fencing.discard(name)
                return [lambda: listener.on_connector_config_remove(name)] if existed else []
            if name in self._snapshot.connectors:
                self._cluster.config_offsets[name] = self._cluster.offset
            if name in self._snapshot.connectors:
                return [lambda: listener.on_connector_config_update(name)]
            return []
        if key.startswith(COMMIT_PREFIX):
            name = key[len(COMMIT_PREFIX) :]
            apply_record(self._snapshot, key, value)
            tasks = value.get("tasks") if isinstance(value, dict) else None
            count = tasks if isinstance(tasks, int) and not isinstance(tasks, bool) and tasks >= 0 else None
            valid = count is not None
            if valid and name in self._snapshot.connectors:
                # task configs after the latest task count record: a round of zombie fencing is due (KIP-618)
                self._cluster.pending_fencing.add(name)
            if valid and name in self._snapshot.connectors and name not in self._snapshot.inconsistent:
                self._cluster.commit_offsets[name] = self._cluster.offset
                ids = list(range(count or 0))  # count is set: valid
                return [lambda: listener.on_task_config_update(name, ids)]
            return []
        if key.startswith(RESTART_PREFIX):
            request = parse_restart(key, value) if value is not None else None
            return [lambda: listener.on_restart_request(request)] if request is not None else []
        if key.startswith(TASKS_FENCING_PREFIX):
            name = key[len(TASKS_FENCING_PREFIX) :]
            count = value.get("task-count") if isinstance(value, dict) else None
            if isinstance(count, int) and not isinstance(count, bool):
                self._cluster.task_count_records[name] = count
                # the task configs before it are fenced: their tasks may start
                self._cluster.pending_fencing.discard(name)
                return [lambda: listener.on_task_count_record(name, count)]
            if value is not None:
                log.error("Ignoring task count record %s with invalid value %r", key, value)
            return []
        if key == SESSION_KEY:
            session = parse_session_key(value)
            if session is None:
                log.error("Ignoring session key record with invalid value %r", value)
                return []
            self._cluster.session_key = session
            return [lambda: listener.on_session_key_update(session)]
        if key.startswith(LOGGER_CLUSTER_PREFIX):
            namespace = key[len(LOGGER_CLUSTER_PREFIX) :]
            level = value.get("level") if isinstance(value, dict) else None
            if not isinstance(level, str):
                log.error("Ignoring logger level record %s with invalid value %r", key, value)
                return []
            self._cluster.logger_levels[namespace] = level
            return [lambda: listener.on_logger_level(namespace, level)]
        apply_record(self._snapshot, key, value)  # task- records are buffered; unknown keys are logged
        return []


def _message(exc: BaseException) -> str:
    error = exc.args[0] if exc.args else None
    return error.str() if isinstance(error, KafkaError) else str(exc)
