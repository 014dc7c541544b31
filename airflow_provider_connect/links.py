"""Operator extra links: from a task in Airflow's UI to its connector on the Connect cluster.

The URL is the connector's REST status (`<connection URL>/connectors/<name>/status`), or, when the
connection's extra has `ui_url_template` (e.g. Kafka UI, AKHQ, Redpanda Console, Control Center), that
template with `{connector}` and `{base_url}` filled in. Operators store it in an XCom before they run, as
Airflow's own providers do, so the link works once the task has started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.sdk import BaseOperatorLink
from airflow.sdk.execution_time.xcom import XCom

XCOM_KEY = "kafka_connect_connector_url"


class ConnectorLink(BaseOperatorLink):
    name = "Kafka Connect connector"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        return XCom.get_value(ti_key=ti_key, key=XCOM_KEY) or ""

    @staticmethod
    def persist(context: Mapping[str, Any], url: str) -> None:
        ti = context.get("ti")
        if ti is not None:
            ti.xcom_push(key=XCOM_KEY, value=url)


__all__ = ["XCOM_KEY", "ConnectorLink"]
