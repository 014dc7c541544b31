"""Builders for SMT conformance cases: schemas and payloads in JsonConverter's envelope form, records, configs."""

from __future__ import annotations

import base64
from typing import Any

KAFKA = "org.apache.kafka.connect.transforms."
PREDICATES = KAFKA + "predicates."

# A fixed instant for records: 2024-12-30T13:45:30.123Z (a Monday in ISO week 1 of 2025).
TS = 1735566330123


def s(type_: str, optional: bool = False, **extra: Any) -> dict[str, Any]:
    """A primitive schema (`default`, `name`, `version`, `doc`, `parameters` as keyword arguments)."""
    return {"type": type_, "optional": optional, **extra}


def struct(*fields: tuple[str, dict[str, Any]], optional: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [{**schema, "field": name} for name, schema in fields],
        "optional": optional,
        **extra,
    }


def array(items: dict[str, Any], optional: bool = False) -> dict[str, Any]:
    return {"type": "array", "items": items, "optional": optional}


def map_(keys: dict[str, Any], values: dict[str, Any], optional: bool = False) -> dict[str, Any]:
    return {"type": "map", "keys": keys, "values": values, "optional": optional}


def decimal(scale: int, optional: bool = False) -> dict[str, Any]:
    return s(
        "bytes", optional, name="org.apache.kafka.connect.data.Decimal", version=1, parameters={"scale": str(scale)}
    )


def date(optional: bool = False) -> dict[str, Any]:
    return s("int32", optional, name="org.apache.kafka.connect.data.Date", version=1)


def time(optional: bool = False) -> dict[str, Any]:
    return s("int32", optional, name="org.apache.kafka.connect.data.Time", version=1)


def timestamp(optional: bool = False) -> dict[str, Any]:
    return s("int64", optional, name="org.apache.kafka.connect.data.Timestamp", version=1)


def env(schema: dict[str, Any] | None, payload: Any) -> dict[str, Any]:
    return {"schema": schema, "payload": payload}


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def record(
    value: Any = None,
    key: Any = None,
    topic: str = "orders",
    partition: int | None = 3,
    offset: int = 42,
    timestamp: int | None = TS,
    headers: list[list[Any]] | None = None,
) -> dict[str, Any]:
    """A record; key and value are envelopes (schemas on) or plain JSON (schemas off); headers [[k, envelope]]."""
    return {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "timestamp": timestamp,
        "key": key,
        "value": value,
        "headers": headers or [],
    }


def chain(
    *stages: tuple[str, str, dict[str, Any]], predicates: dict[str, tuple[str, dict[str, Any]]] | None = None
) -> dict[str, str]:
    """A connector config with `transforms` (alias, class, settings) and `predicates` (alias -> (class, settings))."""
    config: dict[str, str] = {"transforms": ",".join(alias for alias, _, _ in stages)}
    for alias, cls, settings in stages:
        config[f"transforms.{alias}.type"] = cls if "." in cls else KAFKA + cls
        config.update({f"transforms.{alias}.{k}": str(v) for k, v in settings.items()})
    if predicates:
        config["predicates"] = ",".join(predicates)
        for alias, (cls, settings) in predicates.items():
            config[f"predicates.{alias}.type"] = cls if "." in cls else PREDICATES + cls
            config.update({f"predicates.{alias}.{k}": str(v) for k, v in settings.items()})
    return config


class Cases:
    """Collects cases with unique ids."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._ids: set[str] = set()

    def add(
        self, id_: str, config: dict[str, str], records: list[dict[str, Any]], schemas: bool = True, kind: str = "sink"
    ) -> None:
        if id_ in self._ids:
            raise ValueError(f"duplicate case id {id_}")
        self._ids.add(id_)
        self.items.append({"id": id_, "schemas": schemas, "kind": kind, "config": config, "records": records})

    def one(
        self,
        id_: str,
        cls: str,
        settings: dict[str, Any],
        records: list[dict[str, Any]],
        schemas: bool = True,
        kind: str = "sink",
    ) -> None:
        """A case with a single transform, alias `t`."""
        self.add(id_, chain(("t", cls, settings)), records, schemas, kind)
