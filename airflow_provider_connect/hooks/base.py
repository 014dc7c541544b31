"""What the sync and async hooks share: connection parsing and error decoding (retries: `retries.py`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from airflow_provider_connect.errors import MESSAGE_LIMIT, ConnectApiError, ConnectNotFoundError
from airflow_provider_connect.redaction import register_with_airflow, scrub, truncate

CONN_TYPE = "kafka_connect"
DEFAULT_CONN_ID = "kafka_connect_default"
DEFAULT_TIMEOUT = 30.0
_FIELD_PREFIX = f"extra__{CONN_TYPE}__"


@dataclass(frozen=True)
class ConnectSettings:
    """Everything needed to talk to one Connect cluster, parsed from an Airflow connection."""

    base_url: str
    auth: tuple[str, str] | None = None
    verify: bool | str = True
    timeout: float = DEFAULT_TIMEOUT
    headers: Mapping[str, str] = field(default_factory=dict)
    ui_url_template: str | None = None  # extra `ui_url_template`: a UI's page of a connector ({connector}, {base_url})
    kafka_bootstrap_servers: str | None = None  # extra `kafka_bootstrap_servers`: the workers' cluster, for lineage

    def __repr__(self) -> str:  # never show credentials or header values
        return (
            f"ConnectSettings(base_url={self.base_url!r}, auth={'yes' if self.auth else 'no'}, verify={self.verify!r})"
        )

    @property
    def secrets(self) -> list[str]:
        values = list(self.headers.values())
        if self.auth:
            values.append(self.auth[1])
        return [v for v in values if v]

    @classmethod
    def from_connection(cls, conn: Any) -> ConnectSettings:
        extra = _extras(conn)
        host = (conn.host or "").strip()
        if not host:
            raise ValueError(f"Connection {conn.conn_id!r} has no REST URL (host)")
        if "://" not in host:
            scheme = conn.schema if conn.schema in ("http", "https") else "http"
            host = f"{scheme}://{host}"
        if conn.port and host.count(":") < 2:
            host = f"{host}:{conn.port}"
        auth = (conn.login, conn.password or "") if conn.login else None
        verify: bool | str = _as_bool(extra.get("verify_ssl", True))
        if verify and extra.get("ca_bundle"):
            verify = str(extra["ca_bundle"])
        timeout = float(extra.get("timeout") or DEFAULT_TIMEOUT)
        headers = extra.get("headers") or {}
        if isinstance(headers, str):
            headers = json.loads(headers) if headers.strip() else {}
        if not isinstance(headers, dict):
            raise ValueError(f"Connection {conn.conn_id!r}: extra 'headers' must be a JSON object")
        template = str(extra.get("ui_url_template") or "").strip() or None
        bootstrap = str(extra.get("kafka_bootstrap_servers") or "").strip() or None
        settings = cls(
            host.rstrip("/"), auth, verify, timeout, {str(k): str(v) for k, v in headers.items()}, template, bootstrap
        )
        register_with_airflow(settings.secrets)
        return settings


def _extras(conn: Any) -> dict[str, Any]:
    raw = conn.extra_dejson if hasattr(conn, "extra_dejson") else {}
    # Forms may store fields prefixed (`extra__kafka_connect__timeout`); accept both spellings.
    return {k[len(_FIELD_PREFIX) :] if k.startswith(_FIELD_PREFIX) else k: v for k, v in (raw or {}).items()}


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off", "")
    return bool(value)


def path_for(*segments: str | int) -> str:
    return "/" + "/".join(quote(str(s), safe="") for s in segments)


def api_error(method: str, path: str, response: httpx.Response, secrets: list[str] | set[str]) -> ConnectApiError:
    """Decode Connect's `{"error_code", "message"}` error body (or whatever text came back)."""
    error_code = None
    message: str | None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and ("message" in body or "error_code" in body):
        message = body.get("message")
        error_code = body.get("error_code")
    else:
        message = response.text or response.reason_phrase
    message = truncate(scrub(message, secrets), MESSAGE_LIMIT)
    cls = ConnectNotFoundError if response.status_code == 404 else ConnectApiError
    return cls(method, path, response.status_code, message, error_code)


def decode(response: httpx.Response) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def normalise_config(name: str, config: Mapping[str, Any]) -> dict[str, str]:
    """A config as the server stores it: string values (JSON scalars coerced as Jackson does) plus `name`."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if value is None:
            raise ValueError(f"Config value for {key!r} is null; Kafka Connect rejects null values")
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (dict, list)):
            raise ValueError(
                f"Config value for {key!r} must be a string, number or boolean, not {type(value).__name__}"
            )
        else:
            out[key] = str(value)
    out["name"] = name
    return out
