"""Connect records -> dlt rows and column hints: the one mapping between Connect's data model and dlt's.

A STRUCT value becomes one row, a column per field, typed from the field's schema: integers keep their width
(dlt's bigint with a precision: smallint/integer/bigint), float32 and float64 become double (dlt has no
32-bit float), Decimal keeps its precision (`connect.decimal.precision`, else 38) and scale, Date, Time and
Timestamp become date, time and timestamp with time zone, bytes binary, and nested structs, arrays and maps
json columns (dlt's `json`: jsonb in PostgreSQL, JSON in DuckDB). An optional field is a nullable column.
Any other value with a schema is one column, `value`. Schemaless values carry no hints: dlt infers the
columns of a map (nested data in json columns) or of a `value` column.

Every row's `_dlt_id` (dlt's row key, kept when a row brings its own; unique where the destination has
constraints) is `<topic>/<partition>/<offset>/<epoch>`: offsets.py finds the rows a crashed load left behind
by it, and a record loaded again after its offsets were altered (a new epoch) is a new row.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...api.data import Schema
from ...api.errors import DataError
from ...api.records import TopicPartition

TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
DECIMAL = "org.apache.kafka.connect.data.Decimal"

ROW_ID = "_dlt_id"
DELETED = "_connect_deleted"  # dlt's hard_delete column: true on the row a tombstone sends
VALUE_COLUMN = "value"

_EPOCH = dt.date(1970, 1, 1)
_INTEGER_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_SIMPLE_TYPES = {"float32": "double", "float64": "double", "boolean": "bool", "string": "text", "bytes": "binary"}

Convert = Callable[[Any], Any]


def row_id(topic: str, partition: int, offset: int, epoch: int) -> str:
    return f"{topic}/{partition}/{offset}/{epoch}"


def row_id_prefix(topic: str, partition: int) -> str:
    return f"{topic}/{partition}/"


def row_position(row_id: str) -> tuple[TopicPartition, int]:
    """The partition and offset of the record a row id names (Kafka topic names hold no '/')."""
    topic, partition, offset, _epoch = row_id.rsplit("/", 3)
    return TopicPartition(topic, int(partition)), int(offset)


# ---- column hints ---------------------------------------------------------------------------------


def column_hint(schema: Schema) -> dict[str, Any]:
    """dlt's column schema (without the name) for a value of `schema`."""
    hint: dict[str, Any] = {"nullable": bool(schema.optional)}
    name = schema.name
    if name == TIMESTAMP:
        hint.update(data_type="timestamp", timezone=True)
    elif name == DATE:
        hint["data_type"] = "date"
    elif name == TIME:
        hint["data_type"] = "time"
    elif name == DECIMAL:
        params = dict(schema.parameters or ())
        scale = int(params.get("scale", "0"))
        precision = int(params.get("connect.decimal.precision", "38"))
        hint.update(data_type="decimal", precision=max(precision, scale, 1), scale=scale)
    elif schema.type in _INTEGER_BITS:
        hint.update(data_type="bigint", precision=_INTEGER_BITS[schema.type])
    elif schema.type in _SIMPLE_TYPES:
        hint["data_type"] = _SIMPLE_TYPES[schema.type]
    else:  # struct, array, map
        hint["data_type"] = "json"
    return hint


# ---- values ---------------------------------------------------------------------------------------


def _timestamp(value: Any) -> Any:
    if isinstance(value, int):
        return dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC)
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)  # Connect's timestamps are UTC instants
    return value


def _date(value: Any) -> Any:
    return _EPOCH + dt.timedelta(days=value) if isinstance(value, int) else value


def _time(value: Any) -> Any:
    if isinstance(value, int):
        return (dt.datetime.min + dt.timedelta(milliseconds=value)).time()
    return value


def _decimal(scale: int) -> Convert:
    def convert(value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return decimal.Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
        return value

    return convert


def _json_safe(value: Any) -> Any:
    """Inside a json column: bytes as base64 text (as Connect's JsonConverter writes them), map keys as text."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def value_converter(schema: Schema, nested: bool = False) -> Convert | None:
    """A function giving dlt's value for a Connect value of `schema` (None when the value is already it)."""
    name = schema.name
    if name == TIMESTAMP:
        return _timestamp
    if name == DATE:
        return _date
    if name == TIME:
        return _time
    if name == DECIMAL:
        return _decimal(int(dict(schema.parameters or ()).get("scale", "0")))
    if schema.type == "bytes":
        return _json_safe if nested else None
    if schema.type == "struct":
        fields = [(f.name, value_converter(f.schema, True)) for f in schema.fields]
        return lambda v: None if v is None else {n: (c(v.get(n)) if c else v.get(n)) for n, c in fields}
    if schema.type == "array":
        element = value_converter(schema.value_schema, True) if schema.value_schema else _json_safe
        return lambda v: None if v is None else [element(x) if element else x for x in v]
    if schema.type == "map":
        keys = value_converter(schema.key_schema, True) if schema.key_schema else None
        values = value_converter(schema.value_schema, True) if schema.value_schema else _json_safe
        return lambda v: (
            None if v is None else {str(keys(k) if keys else k): (values(x) if values else x) for k, x in _items(v)}
        )
    return None


def _items(value: Any) -> Any:
    # Connect maps are dicts; some converters give a list of pairs for maps with non-string keys
    return value.items() if isinstance(value, dict) else value


def _none_safe(convert: Convert) -> Convert:
    return lambda v: None if v is None else convert(v)


@dataclass(frozen=True)
class RowPlan:
    """How the values of one schema become rows: their column hints and the conversion of a value."""

    columns: dict[str, dict[str, Any]]
    to_row: Callable[[Any], dict[str, Any]]


def plan_for(schema: Schema | None) -> RowPlan:
    if schema is None:
        return RowPlan({}, _schemaless_row)
    if schema.type == "struct":
        columns = {f.name: column_hint(f.schema) for f in schema.fields}
        plain = [f.name for f in schema.fields if value_converter(f.schema) is None]
        converted = [(f.name, _none_safe(c)) for f in schema.fields if (c := value_converter(f.schema))]

        def struct_row(value: Any) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise DataError(f"A STRUCT value must be a map of fields, got {type(value).__name__}")
            row = {n: value.get(n) for n in plain}
            for n, c in converted:
                row[n] = c(value.get(n))
            return row

        return RowPlan(columns, struct_row)
    convert = value_converter(schema)
    if convert is not None:
        convert = _none_safe(convert)
    return RowPlan(
        {VALUE_COLUMN: column_hint(schema)},
        (lambda v: {VALUE_COLUMN: convert(v)}) if convert else (lambda v: {VALUE_COLUMN: v}),
    )


def _schemaless_row(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    return {VALUE_COLUMN: value}


class RowPlans:
    """Plans by schema object: converters hand out the same Schema object for the same writer schema, so
    a plan is built once per schema, not per record. Bounded, as a converter's schema cache is."""

    LIMIT = 1000

    def __init__(self) -> None:
        self._plans: dict[int, tuple[Schema | None, RowPlan]] = {}

    def get(self, schema: Schema | None) -> RowPlan:
        found = self._plans.get(id(schema))
        if found is not None and found[0] is schema:
            return found[1]
        plan = plan_for(schema)
        if len(self._plans) >= self.LIMIT:
            self._plans.clear()
        self._plans[id(schema)] = (schema, plan)  # the schema is kept, so its id is not reused meanwhile
        return plan
