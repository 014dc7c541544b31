"""A source connector for tests, loaded by dotted path: `records` records of a schema with every Connect
type the Schema Registry converters map (ints of every width, floats, boolean, string, bytes, Decimal with
a precision, Date, Time, Timestamp, optional fields, string- and int-keyed maps, arrays, nested structs),
so a test can check what confluent-kafka's deserializers read back. The value of record n is `value(n)`."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
from typing import Any

from runtime.api import SourceConnector, SourceRecord, SourceTask, Task
from runtime.api.data import Schema, SchemaBuilder
from runtime.data.logical_schemas import DATE_SCHEMA, TIME_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema

UTC = dt.UTC
PRICE = Schema(
    "bytes", name=decimal_schema(2).name, version=1, parameters=(("scale", "2"), ("connect.decimal.precision", "12"))
)
LINE = (
    SchemaBuilder.struct().name("com.example.Line").field("sku", Schema("string")).field("qty", Schema("int32")).build()
)
ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .field("id", Schema("int64"))
    .field("tiny", Schema("int8"))
    .field("short", Schema("int16"))
    .field("count", Schema("int32"))
    .field("ratio", Schema("float32"))
    .field("amount", Schema("float64"))
    .field("paid", Schema("boolean"))
    .field("note", Schema("string", optional=True))
    .field("raw", Schema("bytes"))
    .field("price", PRICE)
    .field("day", DATE_SCHEMA)
    .field("at", TIME_SCHEMA)
    .field("ts", TIMESTAMP_SCHEMA)
    .field("labels", SchemaBuilder.map(Schema("string"), Schema("int32")).build())
    .field("by_code", SchemaBuilder.map(Schema("int32"), Schema("string")).build())
    .field("lines", SchemaBuilder.array(LINE).build())
    .build()
)


def value(n: int) -> dict[str, Any]:
    return {
        "id": 10**12 + n,
        "tiny": -(n % 100),
        "short": n % 30000,
        "count": n,
        "ratio": 0.5 + n,
        "amount": n / 8,
        "paid": n % 2 == 0,
        "note": None if n % 3 else f"note {n}",
        "raw": n.to_bytes(4, "big"),
        "price": decimal.Decimal(n).scaleb(-2).quantize(decimal.Decimal("0.01")),
        "day": dt.date(2024, 1, 1) + dt.timedelta(days=n),
        "at": dt.time(n % 24, n % 60, 0, 1000 * (n % 1000)),
        "ts": dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=n),
        "labels": {"n": n},
        "by_code": {n: str(n)},
        "lines": [{"sku": f"s{n}", "qty": n % 5}],
    }


class TypedSourceConnector(SourceConnector):
    """`topic`, `records`: writes value(0) ... value(records - 1) with the ORDER schema, once."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return TypedSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass


class TypedSourceTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        offset = self.context.offset_storage_reader.offset({"typed": self.topic}) or {}
        self.next = int(offset.get("n", 0))
        self.records = int(props["records"])
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.records:
            self.stopping.wait(0.2)
            return None
        batch = []
        for n in range(self.next, min(self.next + 50, self.records)):
            batch.append(
                SourceRecord(
                    {"typed": self.topic},
                    {"n": n + 1},
                    self.topic,
                    None,
                    f"order-{n}",
                    value(n),
                    Schema("string"),
                    ORDER,
                )
            )
        self.next += len(batch)
        return batch

    def stop(self) -> None:
        stopping = getattr(self, "stopping", None)
        if stopping is not None:
            stopping.set()
