"""What the Avro, Protobuf and JSON Schema converters share: subjects, schema ids and the wire format.

Writing a value: its Connect schema becomes a registry schema (once per Connect schema), the subject
comes from the subject name strategy, and the id from the registry as Confluent's serializers get it:
register it (`auto.register.schemas`, the default), take the subject's latest version
(`use.latest.version`, checked with the registry's compatibility endpoint under
`latest.compatibility.strict`), or look it up. The bytes are Confluent's wire format: magic byte 0, the id
as a 4-byte big-endian int, Protobuf's message indexes, then the payload.

Reading: the id picks the writer's schema (fetched once; the client caches it) and with it the Connect
schema the value gets. A registry that does not answer raises RetriableError, so the task's
`errors.retry.timeout` decides how long to wait (KIP-298); an unknown id or a refused schema is a
DataError, which `errors.tolerance=all` sends to the dead letter queue.
"""

from __future__ import annotations

import struct
import threading
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka.schema_registry import RegisteredSchema, SchemaRegistryClient
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.common.serde import SchemaId

from ...api.config import ConfigDef
from ...api.data import Schema
from ...api.errors import ConnectError, DataError, RetriableError
from ..base import Converter
from .client import call_registry, registry_client
from .config import RegistrySettings, parse_settings, registry_converter_config_def

MAGIC_BYTE = 0
_HEADER = struct.Struct(">bI")  # magic byte and schema id, read here without a BytesIO per record


@dataclass(frozen=True)
class WriterSchema:
    """A registry schema made from a Connect schema: its text, type, record name and references."""

    schema: RegistrySchema
    record_name: str | None  # for RecordNameStrategy / TopicRecordNameStrategy


@dataclass
class Writer:
    """Everything needed to write values of one Connect schema to one subject."""

    header: bytes
    encode: Callable[[Any], bytes]


@dataclass
class Reader:
    schema: Schema | None
    decode: Callable[[memoryview], Any]
    # Formats whose records under one schema id may carry different schemas (Protobuf's message
    # indexes) read both at once, from the whole record (what follows the id is theirs to read).
    read: Callable[[memoryview], tuple[Schema | None, Any]] | None = None


class LruCache:
    """A small thread-safe LRU (Kafka's converters use LRUCache of `schemas.cache.size` entries)."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.data: OrderedDict[Any, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            value = self.data.get(key)
            if value is not None:
                self.data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)


def subject_name(strategy: str, topic: str, is_key: bool, record_name: str | None) -> str:
    """Confluent's subject name strategies."""
    if strategy == "TopicNameStrategy":
        return f"{topic}-{'key' if is_key else 'value'}"
    if record_name is None:
        raise DataError(f"{strategy} needs a named record (a Connect schema with a name) to name its subject")
    if strategy == "RecordNameStrategy":
        return record_name
    return f"{topic}-{record_name}"


class SchemaRegistryConverter(Converter):
    """Base of the three Schema Registry converters; subclasses supply the format's own mapping."""

    schema_type: str = ""  # AVRO | PROTOBUF | JSON
    format_name: str = ""  # for messages: Avro | Protobuf | JSON Schema
    schema_format: str | None = None  # the form the registry sends schemas in (Protobuf's "serialized")

    def config(self) -> ConfigDef:
        return registry_converter_config_def()

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        self.settings: RegistrySettings = parse_settings(configs, is_key)
        self.is_key = is_key
        self.client: SchemaRegistryClient = registry_client(self.settings)
        size = self.settings.cache_size
        self._writer_schemas = LruCache(size)  # Connect schema -> WriterSchema
        self._writers = LruCache(size)  # (subject, Connect schema) -> Writer
        self._readers = LruCache(size)  # schema id -> Reader
        self._last_writer: tuple[Schema, str, Writer] | None = None
        self._configure_format(configs)

    def _configure_format(self, configs: dict[str, Any]) -> None:
        """Format-specific settings."""

    # ---- format hooks -------------------------------------------------------------------------------

    @abstractmethod
    def writer_schema(self, schema: Schema) -> WriterSchema:
        """The registry schema written for values of a Connect schema."""

    @abstractmethod
    def make_writer(
        self, schema: Schema, registered: RegistrySchema, writer_schema: WriterSchema
    ) -> tuple[Callable[[Any], bytes], list[int] | None]:
        """An encoder of Connect values into the payload of `registered` (and Protobuf's message indexes)."""

    @abstractmethod
    def make_reader(self, registered: RegistrySchema, version: int | None) -> Reader:
        """The Connect schema and payload decoder of a writer's registry schema."""

    # ---- Converter ------------------------------------------------------------------------------------

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if schema is None:
            raise DataError(
                f"The {self.format_name} converter needs a schema to write a value to topic {topic}; "
                "schemaless data needs a schemaless converter such as JsonConverter"
            )
        last = self._last_writer
        if last is not None and last[0] is schema and last[1] == topic:
            writer = last[2]
        else:
            writer = self._writer(topic, schema)
            self._last_writer = (schema, topic, writer)
        try:
            return writer.header + writer.encode(value)
        except ConnectError:
            raise
        except Exception as exc:  # noqa: BLE001 - codecs raise many kinds on bad data: each is this record's DataError
            raise DataError(
                f"Failed to serialize {self.format_name} data from topic {topic} : {type(exc).__name__}: {exc}"
            ) from None

    def to_connect_data(self, topic: str, value: bytes | None) -> tuple[Schema | None, Any]:
        if value is None:
            return None, None
        view = memoryview(value)
        if len(view) < 5 or view[0] != MAGIC_BYTE:
            raise DataError(f"Failed to deserialize data for topic {topic} to {self.format_name}: Unknown magic byte!")
        schema_id = _HEADER.unpack_from(view)[1]
        reader = self._readers.get(schema_id)
        if reader is None:
            reader = self._load_reader(topic, schema_id)
            self._readers.put(schema_id, reader)
        try:
            if reader.read is not None:
                return reader.read(view)
            return reader.schema, reader.decode(view[5:])
        except ConnectError:
            raise
        except Exception as exc:  # noqa: BLE001 - codecs raise many kinds on corrupt payloads: each is this record's DataError
            raise DataError(
                f"Failed to deserialize data for topic {topic} to {self.format_name}: {type(exc).__name__}: {exc}"
            ) from None

    # ---- ids ------------------------------------------------------------------------------------------

    def _writer(self, topic: str, schema: Schema) -> Writer:
        writer_schema = self._cached_writer_schema(schema)
        subject = subject_name(self.settings.subject_strategy, topic, self.is_key, writer_schema.record_name)
        key = (subject, _cache_key(schema))
        writer = self._writers.get(key)
        if writer is None:
            schema_id, registered = self._schema_id(subject, writer_schema)
            try:
                encode, indexes = self.make_writer(schema, registered, writer_schema)
            except ConnectError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever a codec raises on a registered schema the data cannot be written with
                raise DataError(
                    f"Cannot write {self.format_name} data of subject {subject} with schema id "
                    f"{schema_id}: {type(exc).__name__}: {exc}"
                ) from None
            header = SchemaId(self.schema_type, schema_id, message_indexes=indexes).id_to_bytes()
            writer = Writer(header, encode)
            self._writers.put(key, writer)
        return writer

    def _cached_writer_schema(self, schema: Schema) -> WriterSchema:
        key = _cache_key(schema)
        writer_schema = self._writer_schemas.get(key)
        if writer_schema is None:
            try:
                writer_schema = self.writer_schema(schema)
            except ConnectError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever the mapping raises on a schema the format cannot express is a DataError
                raise DataError(f"Cannot express the Connect schema as {self.format_name}: {exc}") from None
            self._writer_schemas.put(key, writer_schema)
        return writer_schema

    def _schema_id(self, subject: str, writer_schema: WriterSchema) -> tuple[int, RegistrySchema]:
        settings, client, schema = self.settings, self.client, writer_schema.schema
        if settings.auto_register:
            schema_id = call_registry(
                f"register the {self.format_name} schema under subject {subject}",
                lambda: client.register_schema(subject, schema, settings.normalize),
            )
            return schema_id, schema
        if settings.use_latest_version:
            latest: RegisteredSchema = call_registry(
                f"get the latest version of subject {subject}", lambda: client.get_latest_version(subject)
            )
            if settings.latest_compatibility_strict:
                compatible = call_registry(
                    f"check the schema against the latest version of subject {subject}",
                    lambda: client.test_compatibility(subject, schema, version="latest"),
                )
                if not compatible:
                    raise DataError(
                        f"Incompatible schema: the data's {self.format_name} schema is not compatible "
                        f"with the latest version ({latest.version}) of subject {subject}, schema id "
                        f"{latest.schema_id}"
                    )
            return _schema_id(latest, subject), latest.schema
        found: RegisteredSchema = call_registry(
            f"look up the {self.format_name} schema in subject {subject} (auto.register.schemas=false)",
            lambda: client.lookup_schema(subject, schema, settings.normalize),
        )
        return _schema_id(found, subject), schema

    def _load_reader(self, topic: str, schema_id: int) -> Reader:
        registered: RegistrySchema = call_registry(
            f"retrieve the {self.format_name} schema of id {schema_id} (topic {topic})",
            lambda: self.client.get_schema(schema_id, fmt=self.schema_format),
        )
        if (registered.schema_type or "AVRO") != self.schema_type:
            raise DataError(
                f"Failed to deserialize data for topic {topic} to {self.format_name}: schema id "
                f"{schema_id} is a {registered.schema_type} schema"
            )
        version = self._version(topic, schema_id, registered)
        try:
            return self.make_reader(registered, version)
        except ConnectError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever a codec raises on an unreadable writer schema is a DataError
            raise DataError(
                f"Failed to deserialize data for topic {topic} to {self.format_name}: schema id "
                f"{schema_id}: {type(exc).__name__}: {exc}"
            ) from None

    def referenced_schemas(
        self, registered: RegistrySchema, skip: Callable[[str], bool] = lambda name: False
    ) -> list[tuple[str, RegistrySchema]]:
        """The schemas `registered` references, each after those it references itself, with the name it is
        referenced by (Avro's type name, Protobuf's import path); names `skip` accepts are not fetched."""
        found: list[tuple[str, RegistrySchema]] = []
        seen: set[str] = set()

        def visit(schema: RegistrySchema) -> None:
            for reference in schema.references or ():
                name, subject, version = reference.name, reference.subject, reference.version
                if name is None or subject is None or version is None:
                    raise DataError(f"Invalid schema reference {reference}: it needs a name, a subject and a version")
                if name in seen or skip(name):
                    continue
                seen.add(name)
                referenced = self._referenced_schema(name, subject, version)
                visit(referenced)
                found.append((name, referenced))

        visit(registered)
        return found

    def _referenced_schema(self, name: str, subject: str, version: int) -> RegistrySchema:
        # deleted=True: a record written before its schema's reference was soft-deleted still reads
        registered: RegisteredSchema = call_registry(
            f"get the referenced schema {name} ({subject} version {version})",
            lambda: self.client.get_version(subject, version, True, self.schema_format),
        )
        return registered.schema

    def _version(self, topic: str, schema_id: int, registered: RegistrySchema) -> int | None:
        """The registry version of the writer's schema in the topic's subject (the Connect schema version)."""
        if self.settings.subject_strategy != "TopicNameStrategy":
            return None
        subject = subject_name("TopicNameStrategy", topic, self.is_key, None)
        try:
            found = call_registry(
                f"look up schema id {schema_id} in subject {subject}",
                lambda: self.client.lookup_schema(subject, registered),
            )
        except DataError:
            return None  # written under another subject: the Connect schema simply has no version
        except RetriableError:
            raise
        return found.version


def schema_text(registered: RegistrySchema) -> str:
    """The text of a registry schema (a registry always sends one: a schema without is this record's error)."""
    if registered.schema_str is None:
        raise DataError(f"The registry sent a {registered.schema_type or 'AVRO'} schema without its text")
    return registered.schema_str


def _schema_id(registered: RegisteredSchema, subject: str) -> int:
    if registered.schema_id is None:  # a registry that identifies schemas by GUID only
        raise DataError(f"The registry returned a schema of subject {subject} without a schema id")
    return registered.schema_id


def _cache_key(schema: Schema) -> Any:
    try:
        hash(schema)
        return schema
    except TypeError:  # a default that is a dict or list makes the schema unhashable
        return ("id", id(schema))
