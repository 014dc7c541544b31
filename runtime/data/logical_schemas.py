"""The names and schemas of Connect's logical types: Kafka's `Decimal`, `Date`, `Time` and `Timestamp`
(org.apache.kafka.connect.data), which converters encode and transforms and `Values` produce."""

from __future__ import annotations

from ..api.data import Schema

DECIMAL_LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
DATE_LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
TIME_LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
TIMESTAMP_LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"
DECIMAL_SCALE_PARAMETER = "scale"


def decimal_schema(scale: int, optional: bool = False) -> Schema:
    """Kafka's `Decimal.schema(scale)` (values are decimal.Decimal with exactly `scale` fraction digits)."""
    return Schema(
        "bytes",
        optional=optional,
        name=DECIMAL_LOGICAL_NAME,
        version=1,
        parameters=((DECIMAL_SCALE_PARAMETER, str(scale)),),
    )


DATE_SCHEMA = Schema("int32", name=DATE_LOGICAL_NAME, version=1)
TIME_SCHEMA = Schema("int32", name=TIME_LOGICAL_NAME, version=1)
TIMESTAMP_SCHEMA = Schema("int64", name=TIMESTAMP_LOGICAL_NAME, version=1)
