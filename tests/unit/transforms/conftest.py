"""Shared record and schema builders for the transform tests."""

from __future__ import annotations

from typing import Any

from runtime.api.data import Schema, SchemaBuilder
from runtime.api.records import SinkRecord, SourceRecord


def make(cls: type, **config: Any) -> Any:
    """An instance of `cls` configured with `config` (keys may use `_` for `.`)."""
    transform = cls()
    transform.configure({k.replace("__", "."): v for k, v in config.items()})
    return transform


def sink(
    value: Any = None,
    value_schema: Schema | None = None,
    key: Any = None,
    key_schema: Schema | None = None,
    topic: str = "orders",
    partition: int = 3,
    offset: int = 42,
    timestamp: int | None = 1_700_000_000_123,
    headers: list | None = None,
) -> SinkRecord:
    return SinkRecord(topic, partition, key, value, offset, key_schema, value_schema, timestamp, headers=headers)


def source(
    value: Any = None,
    value_schema: Schema | None = None,
    key: Any = None,
    key_schema: Schema | None = None,
    topic: str = "orders",
    timestamp: int | None = None,
    headers: list | None = None,
) -> SourceRecord:
    return SourceRecord(
        {"file": "f"}, {"pos": 1}, topic, None, key, value, key_schema, value_schema, timestamp, headers
    )


def struct(*fields: tuple[str, Schema], name: str | None = None, optional: bool = False) -> Schema:
    builder = SchemaBuilder.struct()
    if name:
        builder.name(name)
    if optional:
        builder.optional()
    for field_name, schema in fields:
        builder.field(field_name, schema)
    return builder.build()
