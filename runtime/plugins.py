"""Plugin discovery and class resolution.

Plugins come from Python entry-point groups (bundled ones are registered in pyproject.toml the same
way third-party packages register theirs), from any importable dotted path, and from the Java plugins in
`plugin.path` (a folder of jars, or a jar, per plugin, as Kafka Connect lays them out: runtime/java), which
are found on first use, in a JVM host process of this process. A name resolves as
Kafka Connect resolves `connector.class`: the full class name, the simple class name, or the simple
name without its `Connector` suffix; the reference's Java class names of the bundled plugins are
aliases of ours so that worker and connector files written for Apache Kafka Connect load unchanged.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from importlib.metadata import entry_points
from typing import Any

from .api.connector import Connector, SinkConnector, SourceConnector
from .api.errors import ConnectError
from .api.transforms import Predicate, Transformation
from .converters.base import Converter, HeaderConverter
from .java import jvm
from .java.client import JvmHost
from .java.proxies import describe, is_java_connector, java_task_class, plugin_class, plugin_locations
from .transforms import BUILTIN_PREDICATES, BUILTIN_TRANSFORMS
from .transforms import REFERENCE_ALIASES as TRANSFORM_ALIASES

log = logging.getLogger(__name__)

ENTRY_POINT_GROUPS = {
    "connector": "kafka_connect_runtime.connectors",
    "converter": "kafka_connect_runtime.converters",
    "header_converter": "kafka_connect_runtime.header_converters",
    "transformation": "kafka_connect_runtime.transforms",
    "predicate": "kafka_connect_runtime.predicates",
}

BUILTIN_CONVERTERS = (
    "runtime.converters.json:JsonConverter",
    "runtime.converters.string:StringConverter",
    "runtime.converters.bytearray:ByteArrayConverter",
)
# Bundled converters known by name and imported at their first use: their modules import Confluent's Schema
# Registry client (with httpx, authlib, protobuf), 0.5 s of CPU that every worker and task process paid at
# start, of about 2 s, whether or not any connector used a schema registry.
DEFERRED_CONVERTERS = (
    "runtime.converters.schema_registry.avro:AvroConverter",
    "runtime.converters.schema_registry.json_schema:JsonSchemaConverter",
    "runtime.converters.schema_registry.protobuf:ProtobufConverter",
)
BUILTIN_HEADER_CONVERTERS = ("runtime.converters.headers:SimpleHeaderConverter",)

# The reference's class names of plugins we bundle, mapped to our classes.
JAVA_ALIASES = {
    "org.apache.kafka.connect.file.FileStreamSourceConnector": "runtime.connectors.file.FileStreamSourceConnector",
    "org.apache.kafka.connect.file.FileStreamSinkConnector": "runtime.connectors.file.FileStreamSinkConnector",
    "org.apache.kafka.connect.file.FileStreamSourceTask": "runtime.connectors.file.FileStreamSourceTask",
    "org.apache.kafka.connect.file.FileStreamSinkTask": "runtime.connectors.file.FileStreamSinkTask",
    "org.apache.kafka.connect.json.JsonConverter": "runtime.converters.json.JsonConverter",
    "org.apache.kafka.connect.storage.StringConverter": "runtime.converters.string.StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter": "runtime.converters.bytearray.ByteArrayConverter",
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": "runtime.converters.headers.SimpleHeaderConverter",
    # Confluent's Schema Registry converters, which most deployments configure by these names.
    "io.confluent.connect.avro.AvroConverter": "runtime.converters.schema_registry.avro.AvroConverter",
    "io.confluent.connect.json.JsonSchemaConverter": "runtime.converters.schema_registry.json_schema.JsonSchemaConverter",
    "io.confluent.connect.protobuf.ProtobufConverter": "runtime.converters.schema_registry.protobuf.ProtobufConverter",
    **TRANSFORM_ALIASES,
}

# Ports of the reference's plugins are shown under the reference's names (in /connector-plugins and
# task.class), so clients and runbooks that look for them find them.
REFERENCE_NAMES = {python: java for java, python in JAVA_ALIASES.items()}

TYPE_ORDER = ("sink", "source", "transformation", "predicate", "converter", "header_converter")


@dataclass(frozen=True)
class PluginDesc:
    cls: type
    type: str  # sink | source | converter | header_converter

    @property
    def class_name(self) -> str:
        return class_name(self.cls)

    @property
    def simple_name(self) -> str:
        return self.cls.__name__

    def version(self) -> str | None:
        try:
            instance = self.cls()
            version = instance.version() if hasattr(instance, "version") else None
        except Exception:  # noqa: BLE001 - a plugin that cannot even say its version is listed without one
            return None
        return None if version in (None, "undefined") else str(version)

    def info(self) -> dict[str, Any]:
        body: dict[str, Any] = {"class": self.class_name, "type": self.type}
        version = self.version()
        if version is not None:
            body["version"] = version
        return body


class DeferredPluginDesc(PluginDesc):
    """A bundled plugin known by its `module:Class` path and type; its module is imported when `cls` is first
    read (to make one, to show its version or its config definition)."""

    path: str

    def __init__(self, path: str, type: str) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "type", type)

    @cached_property  # writes the instance's __dict__ directly, which a frozen dataclass allows
    def cls(self) -> type:
        return import_object(self.path)

    @property
    def class_name(self) -> str:
        python = self.path.replace(":", ".")
        return REFERENCE_NAMES.get(python, python)

    @property
    def simple_name(self) -> str:
        return self.path.rpartition(":")[2]


def class_name(cls: type) -> str:
    """The name a class is shown under: the reference's for its ports, else the dotted Python path."""
    python = f"{cls.__module__}.{cls.__qualname__}"
    return REFERENCE_NAMES.get(python, python)


def plugin_type(cls: type) -> str | None:
    if not isinstance(cls, type):
        return None
    if issubclass(cls, SinkConnector):
        return "sink"
    if issubclass(cls, SourceConnector):
        return "source"
    if issubclass(cls, Transformation):
        return "transformation"
    if issubclass(cls, Predicate):
        return "predicate"
    if issubclass(cls, HeaderConverter):
        return "header_converter"
    if issubclass(cls, Converter):
        return "converter"
    return None


def import_object(path: str) -> Any:
    """Import `pkg.mod:Attr` or `pkg.mod.Attr`."""
    path = JAVA_ALIASES.get(path, path)
    if ":" in path:
        module_name, _, attr = path.partition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name:
        raise ImportError(f"{path} is not a dotted path")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Plugins:
    """The plugins this worker knows, discovered once and resolvable by any of their names."""

    def __init__(self, plugin_path: Iterable[str] = (), find_java_now: bool = True) -> None:
        """`find_java_now`: look for the Java plugins of plugin.path at once, on a thread of their own (a
        worker), rather than at their first use (a task process, which may never run one)."""
        for folder in plugin_path or ():
            if folder and folder not in sys.path:
                sys.path.append(folder)
        self._lock = threading.Lock()
        self._descs: dict[str, PluginDesc] = {}
        self._discover()
        self._java_locations = tuple(plugin_locations(plugin_path or ()))
        self._java_lock = threading.Lock()
        self._java_found = not self._java_locations  # nothing to find: found
        if self._java_locations:
            try:  # Java 17 and the runtime's jars, checked at start: a clear message now, not at first use
                jvm.find_java()
                jvm.runtime_jars()
            except jvm.JavaUnavailable as exc:
                log.error("The Java plugins in plugin.path (%s) cannot run: %s", ", ".join(self._java_locations), exc)
                self._java_found = True
            else:
                if find_java_now:  # the JVM starts while the worker does: the first request need not wait for it
                    threading.Thread(target=self._find_java_plugins, name="java-plugins", daemon=True).start()

    def _add(self, cls: Any, origin: str) -> None:
        kind = plugin_type(cls)
        if kind is None or getattr(cls, "__abstractmethods__", None):
            log.warning("Ignoring plugin %s: not a concrete connector or converter class", origin)
            return
        desc = PluginDesc(cls, kind)
        self._descs[desc.class_name] = desc

    def _discover(self) -> None:
        for path in DEFERRED_CONVERTERS:
            desc = DeferredPluginDesc(path, "converter")
            self._descs[desc.class_name] = desc
        for path in (*BUILTIN_CONVERTERS, *BUILTIN_HEADER_CONVERTERS, *BUILTIN_TRANSFORMS, *BUILTIN_PREDICATES):
            try:
                self._add(import_object(path), path)
            except Exception as exc:  # noqa: BLE001 - one broken plugin must not stop the worker
                log.warning("Could not load bundled plugin %s: %s", path, exc)
        for group in ENTRY_POINT_GROUPS.values():
            for ep in entry_points(group=group):
                try:
                    self._add(ep.load(), f"{group}:{ep.name}")
                except Exception as exc:  # noqa: BLE001 - a third-party plugin's import may raise anything: it is skipped
                    log.warning("Could not load plugin %s from entry point group %s: %s", ep.value, group, exc)

    def _find_java_plugins(self) -> None:
        """The Java plugins of plugin.path, once (this starts the JVM host process)."""
        if self._java_found:
            return
        with self._java_lock:
            if self._java_found:
                return
            try:
                host = JvmHost.for_locations(self._java_locations)
                found = describe(host)
            except Exception as exc:  # noqa: BLE001 - Python plugins still work without them
                log.error("Could not load the Java plugins in %s: %s", ", ".join(self._java_locations), exc)
                found = []
            with self._lock:
                for plugin in found:
                    # A Java connector in plugin.path is there on purpose: it takes the name from the runtime's
                    # port of it (Kafka's FileStream connectors). Java converters, transforms and predicates
                    # run only in Java pipelines: the runtime's own keep their names.
                    if plugin.class_name in self._descs and plugin.type not in ("source", "sink"):
                        log.debug("Java plugin %s is shadowed by the runtime's own", plugin.class_name)
                        continue
                    self._descs[plugin.class_name] = PluginDesc(plugin_class(host, plugin), plugin.type)
            log.info("Found %d Java plugins in plugin.path", len(found))
            self._java_found = True

    # ---- listing --------------------------------------------------------------------------------

    def all(self) -> list[PluginDesc]:
        self._find_java_plugins()
        with self._lock:
            descs = list(self._descs.values())
        return sorted(descs, key=lambda d: (TYPE_ORDER.index(d.type), d.class_name))

    def connectors(self) -> list[PluginDesc]:
        return [d for d in self.all() if d.type in ("sink", "source")]

    # ---- resolution -----------------------------------------------------------------------------

    def _lookup(self, name: str, kinds: tuple[str, ...]) -> PluginDesc | None:
        candidates = [d for d in self.all() if d.type in kinds]
        for desc in candidates:  # the reference's name of a port, or of a Java plugin that took it
            if desc.class_name == name:
                return desc
        name = JAVA_ALIASES.get(name, name).replace(":", ".")
        for desc in candidates:
            if desc.class_name == name:
                return desc
        for matcher in (
            lambda d: d.simple_name == name or d.class_name.rsplit(".", 1)[-1] == name,
            lambda d: d.simple_name.endswith("Connector") and d.simple_name[: -len("Connector")] == name,
        ):
            hits = [d for d in candidates if matcher(d)]
            if len(hits) == 1:
                return hits[0]
        if "." in name:
            try:
                cls = import_object(name)
            except Exception:  # noqa: BLE001 - not importable: not found
                return None
            kind = plugin_type(cls)
            if kind in kinds and not getattr(cls, "__abstractmethods__", None):
                desc = PluginDesc(cls, kind)
                with self._lock:
                    self._descs.setdefault(desc.class_name, desc)
                return desc
        return None

    def find(self, name: str) -> PluginDesc | None:
        """Any plugin by name (for `/connector-plugins/{p}/config`)."""
        return self._lookup(name, TYPE_ORDER)

    def connector_desc(self, name: str) -> PluginDesc:
        desc = self._lookup(name.strip(), ("source", "sink"))
        if desc is None:
            available = ", ".join(d.class_name for d in self.connectors())
            raise ConnectError(
                f"Failed to find any class that implements Connector and which name matches {name}, "
                f"available connectors are: {available}"
            )
        return desc

    def task_class(self, name: str, connector: PluginDesc) -> type:
        """A connector's task class by its `task.class` name (a Java connector's: its Java task class)."""
        if is_java_connector(connector.cls):
            java: Any = connector.cls
            return java_task_class(java.java_host, java.java_class, name, connector.type)
        return import_object(name)

    def new_connector(self, name: str) -> Connector:
        return self.connector_desc(name).cls()

    def resolve(self, name: str, kind: str) -> type | None:
        """A transformation or predicate class by name (for transform chains); None when unknown."""
        desc = self._lookup(name.strip(), (kind,))
        return desc.cls if desc else None

    def converter_class(self, name: str, header: bool = False) -> type:
        kinds = ("header_converter", "converter") if header else ("converter",)
        desc = self._lookup(name.strip(), kinds)
        if desc is None:
            raise ConnectError(f"Class {name} cannot be found or is not a {'header ' if header else ''}converter")
        return desc.cls
