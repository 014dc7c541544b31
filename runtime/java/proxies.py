"""Java plugins as this runtime's plugin classes: a Python class per Java class, named as the Java class,
whose instances forward their calls to the instance of the Java class in this process's JVM host
(client.py). The worker, its runners and its herders use them as any connector or task: converters,
transforms, offsets, statuses and the REST API are the runtime's.

Records cross as batches: a source task's poll() is one call answering every record of the batch, keys and
values as columns in Kafka's JsonConverter envelope (source_batch.py), which this runtime's JsonConverter (a
byte-exact port) reads back into the same Connect data; a sink task's put() is one call the other way, each
key, value and header in its own envelope.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import orjson

from ..api.config import NO_DEFAULT, ConfigDef, ConfigKey, ConfigValue, Importance, Type, Width
from ..api.connector import Connector, SinkConnector, SourceConnector, SourceConnectorContext
from ..api.errors import ConnectError, UnsupportedOperationError
from ..api.records import RecordMetadata, SinkRecord, SourceRecord, SourceRecordBatch, TopicPartition
from ..api.task import SinkTask, SourceTask, SourceTaskContext, Task
from ..api.transforms import Predicate, Transformation
from ..converters.base import Converter, HeaderConverter
from ..converters.json import JsonConverter
from .client import JvmHost, RetriableJavaError
from .protocol import InstanceKind
from .source_batch import decode

# what a Java source connector's or task's offsets questions are answered from
SOURCE_CONTEXTS = (SourceConnectorContext, SourceTaskContext)

log = logging.getLogger(__name__)

_names = itertools.count(1)


@dataclass(frozen=True)
class JavaPlugin:
    """A Java plugin found in plugin.path."""

    class_name: str
    type: str  # sink | source | transformation | predicate | converter | header_converter
    version: str | None
    location: str


def plugin_locations(plugin_path: Iterable[str]) -> list[str]:
    """Kafka Connect's plugin locations: each folder, jar or zip inside a plugin.path entry that holds jars."""
    found = []
    for entry in plugin_path:
        top = Path(entry)
        if not top.is_dir():
            continue
        for child in sorted(top.iterdir()):
            if child.suffix in (".jar", ".zip") and child.is_file():
                found.append(str(child))
            elif child.is_dir() and any(child.rglob("*.jar")):
                found.append(str(child))
    return found


def _envelope_converter() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    return converter


def _java_name(cls: type, class_name: str) -> None:
    """Show `cls` under the Java class's name (in /connector-plugins, task.class, logs)."""
    module, _, simple = class_name.rpartition(".")
    cls.__module__ = module
    cls.__qualname__ = cls.__name__ = simple


# ---- configuration --------------------------------------------------------------------------------


def _config_def(host: JvmHost, class_name: str) -> ConfigDef:
    """The Java plugin's ConfigDef, as the reference renders it (its defaults already rendered by Java)."""
    rendered = orjson.loads(host.call(None, "configDef", class_name))
    definition = ConfigDef()
    if rendered.get("keys") is None:
        return None  # type: ignore[return-value]  # config() returned null: the herder answers as the reference
    for key in rendered["keys"]:
        definition.define_key(
            ConfigKey(
                name=key["name"],
                type=Type(key["type"]),
                default=NO_DEFAULT if key["required"] else key["default"],
                importance=Importance(key["importance"]) if key["importance"] else Importance.MEDIUM,
                documentation=key["documentation"],
                group=key["group"],
                order_in_group=key["order"],
                width=Width(key["width"]) if key["width"] else Width.NONE,
                display_name=key["display_name"],
                dependents=list(key["dependents"]),
                internal=key["internal"],
            )
        )
    definition.groups = list(rendered["groups"])
    return definition


def _validate(host: JvmHost, class_name: str, configs: dict[str, str]) -> list[ConfigValue]:
    rendered = orjson.loads(host.call(None, "validate", class_name, orjson.dumps(configs).decode()))
    if rendered is None:
        return None  # type: ignore[return-value]  # validate() returned null
    return [
        ConfigValue(v["name"], v["value"], list(v["recommended_values"]), list(v["errors"]), v["visible"])
        for v in rendered
    ]


# ---- connectors ---------------------------------------------------------------------------------------


class _JavaConnector(Connector):
    java_class: ClassVar[str]
    java_version: ClassVar[str | None]
    java_host: ClassVar[JvmHost]
    java_kind: ClassVar[str]

    def __init__(self) -> None:
        self._handle: int | None = None
        self._name = f"connector-{next(_names)}"
        self._task_class: type[Task] | None = None
        self._lost: str | None = None

    def version(self) -> str:
        return self.java_version or "undefined"

    def config(self) -> ConfigDef:
        return _config_def(self.java_host, self.java_class)

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        return _validate(self.java_host, self.java_class, connector_configs)

    def _open(self) -> int:
        if self._handle is None:
            self._handle = self.java_host.create("connector", self.java_class, self.java_class, self, self._name)
        return self._handle

    def _call(self, method: str, *args: Any) -> Any:
        if self._lost is not None:
            raise ConnectError(self._lost)
        return self.java_host.call(self._open(), method, *args)

    def _on_fresh_instance(self, method: str, *args: Any) -> Any:
        """A call the reference makes on an instance it never starts (validation, KIP-875's alterOffsets)."""
        opened = self._handle is None
        try:
            return self._call(method, *args)
        finally:
            if opened:
                self._release()

    def _release(self) -> None:
        if self._handle is not None:
            self.java_host.release(self._handle, self._name)
            self._handle = None

    def start(self, props: dict[str, str]) -> None:
        self._call("initialize")
        self._call("start", orjson.dumps(props).decode())
        self._task_class = java_task_class(self.java_host, self.java_class, self._call("taskClass"), self.java_kind)

    def task_class(self) -> type[Task]:
        if self._task_class is None:
            raise ConnectError(f"Connector {self.java_class} is not started")
        return self._task_class

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return orjson.loads(self._call("taskConfigs", max_tasks))

    def stop(self) -> None:
        if self._handle is None:
            return  # never created (its start failed first), or its JVM host is gone
        try:
            self._call("stop")
        finally:
            self._release()

    # ---- what the JVM host reports ----

    def offsets(self, partitions_json: str) -> str:
        context = self.context
        if not isinstance(context, SOURCE_CONTEXTS):  # only a source's asks: a sink's has no offsets reader
            raise ConnectError(f"{self.java_class} asked for source offsets outside a source context")
        reader = context.offset_storage_reader
        return orjson.dumps([[p, o] for p, o in reader.offsets(orjson.loads(partitions_json))]).decode()

    def on_reconfigure(self) -> None:
        self.context.request_task_reconfiguration()

    def on_error(self, trace: str) -> None:
        self.context.raise_error(ConnectError(trace.rstrip()))

    def on_host_exit(self, reason: str) -> None:
        self._lost = reason
        self._handle = None
        context = getattr(self, "context", None)
        if context is not None:
            context.raise_error(ConnectError(reason))


class JavaSourceConnector(_JavaConnector, SourceConnector):
    java_kind = "source"

    def exactly_once_support(self, connector_config: dict[str, str]) -> str | None:
        return self._on_fresh_instance("exactlyOnceSupport", orjson.dumps(connector_config).decode())

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        pairs = orjson.dumps([[p, o] for p, o in offsets]).decode()
        return bool(self._on_fresh_instance("alterSourceOffsets", orjson.dumps(connector_config).decode(), pairs))


class JavaSinkConnector(_JavaConnector, SinkConnector):
    java_kind = "sink"

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        rows = orjson.dumps([[tp.topic, tp.partition, o] for tp, o in offsets.items()]).decode()
        return bool(self._on_fresh_instance("alterSinkOffsets", orjson.dumps(connector_config).decode(), rows))


# ---- tasks ------------------------------------------------------------------------------------------


class _JavaTask:
    java_plugin: ClassVar[str]  # the connector class, whose plugin loader loads the task class
    java_class: ClassVar[str]
    java_host: ClassVar[JvmHost]
    kind: ClassVar[InstanceKind]
    context: Any  # the task's context, set by SourceTask's or SinkTask's initialize()

    def __init__(self) -> None:
        self._handle: int | None = None
        self._name = f"task-{next(_names)}"
        self._lost: str | None = None
        self._envelopes = _envelope_converter()

    def _call(self, method: str, *args: Any) -> Any:
        return self._submit(method, *args).result()

    def _submit(self, method: str, *args: Any) -> Future[Any]:
        if self._lost is not None:
            raise ConnectError(self._lost)
        if self._handle is None:
            self._handle = self.java_host.create(self.kind, self.java_plugin, self.java_class, self, self._name)
        return self.java_host.submit(self._handle, method, *args)

    def _release(self) -> None:
        if self._handle is not None:
            self.java_host.release(self._handle, self._name)
            self._handle = None

    def offsets(self, partitions_json: str) -> str:
        context = self.context
        if not isinstance(context, SOURCE_CONTEXTS):  # only a source's asks: a sink's has no offsets reader
            raise ConnectError(f"{self.java_class} asked for source offsets outside a source context")
        reader = context.offset_storage_reader
        return orjson.dumps([[p, o] for p, o in reader.offsets(orjson.loads(partitions_json))]).decode()

    def on_reconfigure(self) -> None:
        pass  # tasks have no such request

    def on_error(self, trace: str) -> None:
        pass

    def on_host_exit(self, reason: str) -> None:
        self._lost = reason  # the next call fails the task with it


class JavaSourceTask(_JavaTask, SourceTask):
    kind = "source_task"
    # a batch may come as columns (SourceRecordBatch): no record is handed back, so none needs its identity
    batches_as_columns = True
    # The next poll() is asked of the JVM as soon as a batch is answered: the JVM host process polls while
    # this one converts and sends the batch (two processes on two cores, where they took turns), as the
    # reference's task thread polls again while its producer sends. Calls after it (commit()) queue
    # behind it in the JVM; a batch polled ahead when the task stops is dropped, its offsets never committed.
    polls_ahead = True

    def __init__(self) -> None:
        super().__init__()
        self._next_batch: Future[Any] | None = None
        self._stopping = False

    def start(self, props: dict[str, str]) -> None:
        self._call("start", orjson.dumps(props).decode())

    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        asked, self._next_batch = self._next_batch, None
        try:
            batch = (asked if asked is not None else self._submit("poll")).result()
        except RetriableJavaError as exc:  # as the reference: logged, and polled again
            log.warning(
                "%s.poll() threw a retriable exception; polling again: %s", self.java_class, exc.failure.message
            )
            return None
        if self.polls_ahead and not self._stopping and self._handle is not None:
            self._next_batch = self._submit("poll")
        if batch is None:
            return None
        first, records = decode(batch, self._envelopes, columns_allowed=self.batches_as_columns)
        self._polled(first, records)
        return records

    def _polled(self, first: int, records: list[SourceRecord] | SourceRecordBatch) -> None:
        """A task that does not override commitRecord() needs nothing of its records back."""

    def commit(self) -> None:
        self._call("commit")

    def stop(self) -> None:
        self._stopping = True
        if self._handle is None:
            return  # never created (its start failed first), or its JVM host is gone
        try:
            self._call("stop")
        finally:
            self._release()


class JavaSourceTaskCommittingRecords(JavaSourceTask):
    """A Java source task that overrides commitRecord(): the runtime hands back each record as the broker
    acknowledges it; the acknowledgements go to Java in one call before the next poll() or commit()."""

    batches_as_columns = False  # each record as polled is handed back to commit_record, known by its id()
    polls_ahead = False  # the records acknowledged reach commitRecord() before the next poll(), as before

    def __init__(self) -> None:
        super().__init__()
        self._sequences: dict[int, int] = {}  # id(record as polled) -> its sequence number in the JVM
        self._acknowledged: list[list[Any]] = []
        self._lock = threading.Lock()  # delivery callbacks may run on the producer's thread

    def _polled(self, first: int, records: list[SourceRecord] | SourceRecordBatch) -> None:
        with self._lock:
            for offset, record in enumerate(records):
                self._sequences[id(record)] = first + offset

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        with self._lock:
            sequence = self._sequences.pop(id(record), None)
            if sequence is not None:
                row = [sequence, None, None, None] if metadata is None else [sequence, *metadata[:3]]
                self._acknowledged.append(row)

    def _hand_back(self) -> None:
        with self._lock:
            rows, self._acknowledged = self._acknowledged, []
        if rows:
            self._call("commitRecords", orjson.dumps(rows).decode())

    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        self._hand_back()
        return super().poll()

    def commit(self) -> None:
        self._hand_back()
        super().commit()

    def stop(self) -> None:
        if self._handle is not None:
            try:
                self._hand_back()
            except ConnectError as exc:
                log.warning("%s: acknowledged records not handed back before stop(): %s", self.java_class, exc)
        super().stop()


class JavaSinkTask(_JavaTask, SinkTask):
    kind = "sink_task"

    def start(self, props: dict[str, str]) -> None:
        self._apply(self._call("start", orjson.dumps(props).decode()))

    def _envelope(self, topic: str, schema: Any, value: Any) -> str | None:
        data = self._envelopes.from_connect_data(topic, schema, value)
        return None if data is None else data.decode()

    def put(self, records: Sequence[SinkRecord]) -> None:
        rows = []
        for r in records:
            headers = None
            if r.headers:
                headers = [[h.key, self._envelope(r.topic, h.schema, h.value)] for h in r.headers]
            rows.append(
                [
                    r.topic,
                    r.kafka_partition,
                    r.kafka_offset,
                    r.timestamp,
                    r.timestamp_type,
                    self._envelope(r.topic, r.key_schema, r.key),
                    self._envelope(r.topic, r.value_schema, r.value),
                    headers,
                ]
            )
        self._apply(self._call("put", orjson.dumps(rows)))

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        rows = orjson.dumps([[tp.topic, tp.partition, o] for tp, o in current_offsets.items()]).decode()
        answer = orjson.loads(self._call("preCommit", rows))
        self._apply_requests(answer["context"])
        return {TopicPartition(t, p): o for t, p, o in answer["offsets"]}

    def open(self, partitions: list[TopicPartition]) -> None:
        self._apply(self._call("open", orjson.dumps([[tp.topic, tp.partition] for tp in partitions]).decode()))

    def close(self, partitions: list[TopicPartition]) -> None:
        self._apply(self._call("close", orjson.dumps([[tp.topic, tp.partition] for tp in partitions]).decode()))

    def stop(self) -> None:
        if self._handle is None:
            return  # never created (its start failed first), or its JVM host is gone
        try:
            self._call("stop")
        finally:
            self._release()

    def _apply(self, requests_json: str) -> None:
        self._apply_requests(orjson.loads(requests_json))

    def _apply_requests(self, requests: dict[str, Any]) -> None:
        """What the Java task asked of its SinkTaskContext, done on this runtime's context."""
        context = self.context
        if requests["offsets"]:
            context.offsets({TopicPartition(t, p): o for t, p, o in requests["offsets"]})
        if requests["timeout"] is not None:
            context.timeout(requests["timeout"])
        if requests["pause"]:
            context.pause(*(TopicPartition(t, p) for t, p in requests["pause"]))
        if requests["resume"]:
            context.resume(*(TopicPartition(t, p) for t, p in requests["resume"]))
        if requests["commit"]:
            context.request_commit()


# ---- plugins that run only in Java pipelines (listed, not yet usable here) ----------------------------


class _JavaOnly:
    java_class: ClassVar[str]
    java_version: ClassVar[str | None]
    java_host: ClassVar[JvmHost]

    def version(self) -> str:
        return self.java_version or "undefined"

    def config(self) -> ConfigDef:
        return _config_def(self.java_host, self.java_class)

    def configure(self, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedOperationError(
            f"{self.java_class} is a Java plugin: this runtime lists it but runs only Java connectors and their "
            "tasks; use the runtime's converters, transforms and predicates of the same names"
        )


_BASES: dict[str, type] = {
    "source": JavaSourceConnector,
    "sink": JavaSinkConnector,
    "converter": Converter,
    "header_converter": HeaderConverter,
    "transformation": Transformation,
    "predicate": Predicate,
}


def plugin_class(host: JvmHost, plugin: JavaPlugin) -> type:
    """The Python class standing for a Java plugin class (named as it)."""
    base = _BASES[plugin.type]
    bases: tuple[type, ...] = (base,) if plugin.type in ("source", "sink") else (_JavaOnly, base)
    namespace: dict[str, Any] = {"java_class": plugin.class_name, "java_version": plugin.version, "java_host": host}
    if plugin.type not in ("source", "sink"):
        # abstract methods of the Python plugin API: a Java-only plugin fails in configure() first
        for name in getattr(base, "__abstractmethods__", ()):
            namespace.setdefault(name, _JavaOnly.configure)
    cls = type(plugin.class_name, bases, namespace)
    _java_name(cls, plugin.class_name)
    return cls


_task_classes: dict[tuple[int, str, str], type[Task]] = {}


def java_task_class(host: JvmHost, connector_class: str, task_class: str, kind: str) -> type[Task]:
    """The Python class standing for a Java connector's task class (one per host, connector and task class)."""
    cache_key = (id(host), connector_class, task_class)
    cls = _task_classes.get(cache_key)
    if cls is None:
        base: type[Task]
        if kind == "sink":
            base = JavaSinkTask
        elif host.call(None, "commitsRecords", connector_class, task_class):
            base = JavaSourceTaskCommittingRecords
        else:
            base = JavaSourceTask
        cls = type(task_class, (base,), {"java_plugin": connector_class, "java_class": task_class, "java_host": host})
        _java_name(cls, task_class)
        _task_classes[cache_key] = cls
    return cls


def is_java_connector(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, _JavaConnector)


def describe(host: JvmHost) -> list[JavaPlugin]:
    """The Java plugins of the host's plugin locations (starts the JVM host)."""
    return [
        JavaPlugin(p["class"], p["type"], p["version"], p["location"])
        for p in orjson.loads(host.call(None, "describe"))
    ]


__all__ = [
    "JavaPlugin",
    "JavaSinkConnector",
    "JavaSinkTask",
    "JavaSourceConnector",
    "JavaSourceTask",
    "describe",
    "is_java_connector",
    "java_task_class",
    "plugin_class",
    "plugin_locations",
]
