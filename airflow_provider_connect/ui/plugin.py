"""The Airflow plugin: the Kafka Connect page as an external view in Airflow's navigation, served by the
FastAPI app the plugin mounts on the API server (registered by this distribution's `airflow.plugins` entry
point and listed in `get_provider_info`, as Airflow's OpenLineage provider does)."""

from __future__ import annotations

from typing import Any

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_connect.ui.app import create_app

URL_PREFIX = "/kafka-connect"


class KafkaConnectPlugin(AirflowPlugin):
    name = "kafka_connect"
    # AirflowPlugin declares these as lists set on the class
    fastapi_apps: list[Any] = [  # noqa: RUF012
        {"app": create_app(), "url_prefix": URL_PREFIX, "name": "Kafka Connect"}
    ]
    external_views: list[Any] = [  # noqa: RUF012
        {
            "name": "Kafka Connect",
            "href": URL_PREFIX.lstrip("/") + "/",  # relative: resolved against the API server's base URL
            "destination": "nav",
            "category": "browse",
            "url_route": "kafka-connect",
        }
    ]
