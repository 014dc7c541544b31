"""The asynchronous hook used by triggers: read-only (GET) calls with the same retry rules."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx
from airflow.sdk import BaseHook

from airflow_provider_connect.errors import ConnectNotFoundError
from airflow_provider_connect.hooks.base import (
    DEFAULT_CONN_ID,
    ConnectSettings,
    RetryPolicy,
    api_error,
    decode,
    is_retryable_error,
    is_retryable_status,
    path_for,
    transport_error,
)


class AsyncConnectHook(BaseHook):
    """Reads connector status and offsets without blocking the triggerer's event loop."""

    conn_name_attr = "kafka_connect_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "kafka_connect"
    hook_name = "Kafka Connect (async)"

    def __init__(
        self,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        retry_policy: RetryPolicy | None = None,
        settings: ConnectSettings | None = None,
    ) -> None:
        super().__init__()
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.retry_policy = retry_policy or RetryPolicy()
        self._settings = settings

    async def get_settings(self) -> ConnectSettings:
        if self._settings is None:
            conn = await self.aget_connection(self.kafka_connect_conn_id)
            self._settings = ConnectSettings.from_connection(conn)
        return self._settings

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET with retries on connection errors, 5xx and 409."""
        s = await self.get_settings()
        attempts = self.retry_policy.max_attempts
        async with httpx.AsyncClient(
            base_url=s.base_url,
            auth=s.auth,
            verify=s.verify,
            timeout=s.timeout,
            headers={"Accept": "application/json", **s.headers},
        ) as client:
            for attempt in range(1, attempts + 1):
                try:
                    response = await client.get(path, params=params)
                except httpx.HTTPError as exc:
                    if not is_retryable_error(exc) or attempt == attempts:
                        raise transport_error("GET", path, exc, attempt) from None
                    await self._back_off(path, attempt, type(exc).__name__)
                    continue
                if response.status_code < 400:
                    return decode(response)
                if attempt < attempts and is_retryable_status(response.status_code):
                    await self._back_off(path, attempt, f"HTTP {response.status_code}")
                    continue
                raise api_error("GET", path, response, s.secrets)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _back_off(self, path: str, attempt: int, why: str) -> None:
        delay = self.retry_policy.delay(attempt)
        self.log.warning(
            "GET %s: %s (attempt %d/%d), retrying in %.1fs", path, why, attempt, self.retry_policy.max_attempts, delay
        )
        await asyncio.sleep(delay)

    async def get_connector_status(self, name: str) -> dict[str, Any]:
        return await self.get(path_for("connectors", name, "status"))

    async def get_connector_status_or_none(self, name: str) -> dict[str, Any] | None:
        try:
            return await self.get_connector_status(name)
        except ConnectNotFoundError:
            return None

    async def get_connector(self, name: str) -> dict[str, Any]:
        return await self.get(path_for("connectors", name))

    async def get_offsets(self, name: str) -> list[dict[str, Any]]:
        body = await self.get(path_for("connectors", name, "offsets"))
        return list(body.get("offsets", []))
