"""This runtime's side of the SMT conformance cases: the same result shape SmtHarness.java prints.

Transforms are built the way the worker builds them (`TransformationChain` over the connector config, resolved
by `Plugins`), and records go in and out through this runtime's JsonConverter, so the output is its bytes.
"""

from __future__ import annotations

from typing import Any

import orjson

from runtime.api.errors import ConfigError, ConnectError, DataError, RetriableError
from runtime.api.records import ConnectRecord, Header, SinkRecord, SourceRecord
from runtime.converters.json import JsonConverter
from runtime.plugins import Plugins
from runtime.transforms._util import SchemaBuilderError
from runtime.worker.transform_chain import TransformationChain

# The Java exception each of this runtime's errors stands for (api/errors.py documents the pairs; Python's
# ValueError and IndexError are what the ports raise where Kafka lets IllegalArgumentException and
# IndexOutOfBoundsException through).
JAVA_NAMES = {
    SchemaBuilderError: "SchemaBuilderException",
    ConfigError: "ConfigException",
    DataError: "DataException",
    RetriableError: "RetriableException",
    ConnectError: "ConnectException",
    ValueError: "IllegalArgumentException",
    IndexError: "IndexOutOfBoundsException",
}


def java_class(exc: BaseException) -> str:
    for cls in type(exc).__mro__:
        if cls in JAVA_NAMES:
            return JAVA_NAMES[cls]
    return type(exc).__name__


def _error(exc: BaseException) -> dict[str, Any]:
    return {"class": java_class(exc), "message": str(exc)}


def _configure_error(exc: BaseException) -> dict[str, Any]:
    # The chain wraps a plugin's configure() failure in ConnectError("Invalid configuration of ..."); the
    # reference's harness reports the plugin's own exception, so compare that one.
    cause = exc.__cause__
    if isinstance(exc, ConnectError) and cause is not None and str(exc).startswith("Invalid configuration of "):
        return _error(cause)
    return _error(exc)


class Codec:
    """Records in (case JSON -> JsonConverter -> Connect data) and out (Connect data -> JSON text)."""

    def __init__(self, schemas: bool) -> None:
        self.schemas = schemas
        self.keys = JsonConverter()
        self.keys.configure({"schemas.enable": str(schemas).lower()}, True)
        self.values = JsonConverter()
        self.values.configure({"schemas.enable": str(schemas).lower()}, False)
        self.enveloped = JsonConverter()
        self.enveloped.configure({"schemas.enable": "true"}, False)

    @staticmethod
    def _convert(converter: JsonConverter, topic: str, node: Any) -> tuple[Any, Any]:
        if node is None:
            return converter.to_connect_data(topic, None)
        return converter.to_connect_data(topic, orjson.dumps(node))

    def record(self, kind: str, r: dict[str, Any]) -> ConnectRecord:
        topic = r["topic"]
        key_schema, key = self._convert(self.keys, topic, r.get("key"))
        value_schema, value = self._convert(self.values, topic, r.get("value"))
        headers = []
        for name, node in r.get("headers") or ():
            schema, header_value = self._convert(self.enveloped, topic, node)
            headers.append(Header(name, header_value, schema))
        timestamp = r.get("timestamp")
        if kind == "source":
            return SourceRecord(
                {"p": 1}, {"o": 1}, topic, r.get("partition"), key, value, key_schema, value_schema, timestamp, headers
            )
        partition = r.get("partition")
        return SinkRecord(
            topic,
            0 if partition is None else partition,
            key,
            value,
            r.get("offset") or 0,
            key_schema,
            value_schema,
            timestamp,
            "CreateTime",
            headers,
        )

    @staticmethod
    def _text(raw: bytes | None) -> str | None:
        return None if raw is None else bytes(raw).decode("utf-8")

    def render(self, record: ConnectRecord) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": record.topic,
            "partition": record.kafka_partition,
            "timestamp": record.timestamp,
            "key": self._text(self.keys.from_connect_data(record.topic, record.key_schema, record.key)),
            "value": self._text(self.values.from_connect_data(record.topic, record.value_schema, record.value)),
        }
        if not self.schemas:
            out["key_schema"] = self._schema_text(record.key_schema)
            out["value_schema"] = self._schema_text(record.value_schema)
        out["headers"] = [
            [h.key, self._text(self.enveloped.from_connect_data(record.topic, h.schema, h.value))]
            for h in record.headers or ()
        ]
        return out

    def _schema_text(self, schema: Any) -> str | None:
        if schema is None:
            return None
        return orjson.dumps(self.enveloped.as_json_schema(schema)).decode("utf-8")


def run_case(case: dict[str, Any], plugins: Plugins) -> dict[str, Any]:
    """One case through this runtime: the same dict SmtHarness.java prints for it."""
    result: dict[str, Any] = {"id": case["id"]}
    codec = Codec(case["schemas"])
    try:
        chain = TransformationChain(case["config"], plugins.resolve)
    except Exception as exc:  # noqa: BLE001 - the failure is the result being compared
        result["configure_error"] = _configure_error(exc)
        return result
    outputs: list[dict[str, Any]] = []
    result["results"] = outputs
    try:
        for r in case["records"]:
            try:
                record: ConnectRecord | None = codec.record(case["kind"], r)
            except Exception as exc:  # noqa: BLE001
                outputs.append({"input_error": _error(exc)})
                continue
            try:
                record = chain.apply(record)  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001
                outputs.append({"error": _error(exc)})
                continue
            if record is None:
                outputs.append({"dropped": True})
                continue
            try:
                outputs.append({"record": codec.render(record)})
            except Exception as exc:  # noqa: BLE001
                outputs.append({"output_error": _error(exc)})
    finally:
        chain.close()
    return result
