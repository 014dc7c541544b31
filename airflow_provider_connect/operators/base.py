"""What every Connect operator shares: the hook, config loading, small redacted XCom summaries."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from airflow.sdk import BaseOperator

from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.lineage import operator_lineage
from airflow_provider_connect.links import ConnectorLink
from airflow_provider_connect.redaction import redact_config


class ConnectOperatorBase(BaseOperator):
    template_fields: Sequence[str] = ("connector_name", "kafka_connect_conn_id")
    ui_color = "#e8f1fb"
    operator_extra_links = (ConnectorLink(),)

    def __init__(self, *, connector_name: str, kafka_connect_conn_id: str = DEFAULT_CONN_ID, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.connector_name = connector_name
        self.kafka_connect_conn_id = kafka_connect_conn_id

    @cached_property
    def hook(self) -> ConnectHook:
        return ConnectHook(self.kafka_connect_conn_id)

    def pre_execute(self, context: Any) -> None:
        ConnectorLink.persist(context, self.hook.connector_url(self.connector_name))

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The connector's input and output datasets (Kafka topics, files, Spark datasets), as it is now."""
        return operator_lineage(self.hook, self.connector_name)


def load_json_value(value: Any, what: str) -> Any:
    """A templated JSON field: already-parsed data, a JSON string (a rendered `.json` template), or a path."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(".json") and os.path.isfile(text):
            with open(text, encoding="utf-8") as handle:
                text = handle.read()
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return value


def load_config(value: Any) -> dict[str, Any]:
    config = load_json_value(value, "config")
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a JSON object, got {type(config).__name__}")
    # Accept the POST /connectors shape too ({"name", "config"}), as connector files often use it.
    if "config" in config and isinstance(config["config"], Mapping):
        config = config["config"]
    return dict(config)


def load_offsets(value: Any) -> list[dict[str, Any]]:
    """Offsets to start a connector from: PATCH offsets' entries (`[{"partition", "offset"}]`) or GET offsets'
    body (`{"offsets": [...]}`), as data, JSON or a `.json` path; none (None or empty) is an empty list."""
    data = load_json_value(value, "offsets") if value is not None else []
    if isinstance(data, Mapping):
        data = data.get("offsets")
    if not isinstance(data, list) or not all(isinstance(e, Mapping) and "partition" in e for e in data):
        raise ValueError("offsets must be a list of {'partition', 'offset'} objects, or GET offsets' body")
    return [{"partition": entry["partition"], "offset": entry.get("offset")} for entry in data]


def info_summary(info: Mapping[str, Any], **flags: Any) -> dict[str, Any]:
    """A small XCom about a connector: never its secrets."""
    return {
        "name": info.get("name"),
        "type": info.get("type"),
        "config": redact_config(info.get("config")),
        "tasks": len(info.get("tasks") or []),
        **flags,
    }
