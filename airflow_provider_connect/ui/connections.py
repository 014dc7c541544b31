"""The Kafka Connect connections the page shows, and a hook for each, inside Airflow's API server.

Connections come from the metadata database (type `kafka_connect`), from `AIRFLOW_CONN_*` environment
variables of that type, and from `[kafka_connect] ui_conn_ids` (a comma-separated list, for connections
kept in a secrets backend, which cannot be listed).
"""

from __future__ import annotations

import os
from typing import Any

from airflow_provider_connect.hooks.base import CONN_TYPE, ConnectSettings
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.hooks.retries import RetryPolicy

ENV_PREFIX = "AIRFLOW_CONN_"


def kafka_connect_conn_ids() -> list[str]:
    from airflow.configuration import conf

    ids = {c.strip() for c in conf.get("kafka_connect", "ui_conn_ids", fallback="").split(",") if c.strip()}
    ids |= _database_conn_ids()
    for variable in os.environ:
        if variable.startswith(ENV_PREFIX):
            conn_id = variable[len(ENV_PREFIX) :].lower()
            if _conn_type(conn_id) == CONN_TYPE:
                ids.add(conn_id)
    return sorted(ids)


def hook_for(conn_id: str, retry_policy: RetryPolicy | None = None) -> ConnectHook:
    """A hook on `conn_id`, its settings read in the API server (not through a task's supervisor)."""
    from airflow.models.connection import Connection

    conn = Connection.get_connection_from_secrets(conn_id)
    if conn.conn_type != CONN_TYPE:
        raise ValueError(f"Connection {conn_id!r} is of type {conn.conn_type!r}, not {CONN_TYPE!r}")
    return ConnectHook(conn_id, retry_policy=retry_policy, settings=ConnectSettings.from_connection(conn))


def _database_conn_ids() -> set[str]:
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return set(session.scalars(select(Connection.conn_id).where(Connection.conn_type == CONN_TYPE)))


def _conn_type(conn_id: str) -> Any:
    from airflow.models.connection import Connection

    try:
        return Connection.get_connection_from_secrets(conn_id).conn_type
    except Exception:  # noqa: BLE001 - an unparsable variable is not a Kafka Connect connection
        return None
