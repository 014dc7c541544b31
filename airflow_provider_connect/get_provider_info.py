"""Provider metadata read by Airflow's ProvidersManager through the `apache_airflow_provider` entry point."""

from __future__ import annotations

from typing import Any

from airflow_provider_connect import __version__

_HOOK = "airflow_provider_connect.hooks.connect.ConnectHook"


def get_provider_info() -> dict[str, Any]:
    return {
        # Must equal the distribution's canonical name, or `airflow providers list` shows a mismatch.
        "package-name": "airflow-provider-connect",
        "name": "Kafka Connect",
        "description": "Drive Kafka Connect clusters (connectors, offsets, KIP-980 migrations) from Airflow.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Kafka Connect",
                "external-doc-url": "https://kafka.apache.org/documentation/#connect_rest",
                "tags": ["apache"],
            }
        ],
        "hooks": [
            {
                "integration-name": "Kafka Connect",
                "python-modules": [
                    "airflow_provider_connect.hooks.connect",
                    "airflow_provider_connect.hooks.async_connect",
                ],
            }
        ],
        "extra-links": ["airflow_provider_connect.links.ConnectorLink"],
        "plugins": [{"name": "kafka_connect", "plugin-class": "airflow_provider_connect.ui.plugin.KafkaConnectPlugin"}],
        "operators": [
            {
                "integration-name": "Kafka Connect",
                "python-modules": [
                    "airflow_provider_connect.operators.connector",
                    "airflow_provider_connect.operators.offsets",
                    "airflow_provider_connect.operators.migrate",
                    "airflow_provider_connect.operators.as_code",
                ],
            }
        ],
        "sensors": [
            {
                "integration-name": "Kafka Connect",
                "python-modules": ["airflow_provider_connect.sensors.connector"],
            }
        ],
        "triggers": [
            {
                "integration-name": "Kafka Connect",
                "python-modules": [
                    "airflow_provider_connect.triggers.connector",
                    "airflow_provider_connect.triggers.failures",
                    "airflow_provider_connect.triggers.as_code",
                ],
            }
        ],
        "config": {
            "kafka_connect": {
                "description": "The Kafka Connect page in Airflow's UI.",
                "options": {
                    "ui_conn_ids": {
                        "description": "Connections the page shows besides those of type kafka_connect in the "
                        "metadata database and in AIRFLOW_CONN_* variables (comma-separated; for connections "
                        "kept in a secrets backend, which cannot be listed).",
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": "kafka_connect_prod,kafka_connect_dr",
                        "default": "",
                    }
                },
            }
        },
        "connection-types": [
            {
                "connection-type": "kafka_connect",
                "hook-class-name": _HOOK,
                "hook-name": "Kafka Connect",
                "ui-field-behaviour": {
                    "hidden-fields": ["schema", "port"],
                    "relabeling": {"host": "REST URL", "login": "Username", "password": "Password"},
                    "placeholders": {
                        "host": "http://connect.example.com:8083",
                        "login": "basic auth user (optional)",
                        "password": "basic auth password (optional)",
                    },
                },
                "conn-fields": {
                    "verify_ssl": {
                        "label": "Verify TLS certificates",
                        "description": "Set false to accept self-signed certificates (not for production).",
                        "schema": {"type": ["boolean", "null"], "default": True},
                    },
                    "ca_bundle": {
                        "label": "CA bundle path",
                        "description": "Path to a PEM bundle used to verify the server certificate.",
                        "schema": {"type": ["string", "null"]},
                    },
                    "timeout": {
                        "label": "Request timeout (seconds)",
                        "description": "Per-request timeout; Connect itself gives up after 90 s.",
                        "schema": {"type": ["number", "null"], "default": 30},
                    },
                    "headers": {
                        "label": "Extra headers (JSON object)",
                        "description": 'Sent with every request, e.g. {"Authorization": "Bearer ..."}.',
                        "schema": {"type": ["string", "null"], "format": "password"},
                    },
                },
            }
        ],
    }
