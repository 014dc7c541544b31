"""The asynchronous hook used by triggers: read-only (GET) calls with the same retry rules."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from airflow.sdk import BaseHook
from tenacity import AsyncRetrying

from airflow_provider_connect.errors import ConnectNotFoundError
from airflow_provider_connect.hooks import retries
from airflow_provider_connect.hooks.base import DEFAULT_CONN_ID, ConnectSettings, api_error, decode, path_for
from airflow_provider_connect.hooks.retries import RetryPolicy


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
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__()
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.retry_policy = retry_policy or RetryPolicy()
        self._settings = settings
        self._sleep = sleep

    async def get_settings(self) -> ConnectSettings:
        if self._settings is None:
            conn = await self.aget_connection(self.kafka_connect_conn_id)
            self._settings = ConnectSettings.from_connection(conn)
        return self._settings

    async def get(self, path: str, params: Any = None) -> Any:
        """GET with retries on connection errors, 5xx and 409; `params` as httpx takes them (a list for repeats)."""
        s = await self.get_settings()
        async with httpx.AsyncClient(
            base_url=s.base_url,
            auth=s.auth,
            verify=s.verify,
            timeout=s.timeout,
            headers={"Accept": "application/json", **s.headers},
        ) as client:

            async def attempt() -> Any:
                response = await client.get(path, params=params)
                if response.status_code >= 400:
                    raise api_error("GET", path, response, s.secrets)
                return decode(response)

            retrying = AsyncRetrying(**self.retry_policy.retry_args(self.log, f"GET {path}"), sleep=self._sleep)
            return await retries.acall(retrying, "GET", path, attempt)

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
