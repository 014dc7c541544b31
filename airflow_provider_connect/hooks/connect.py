"""The synchronous Kafka Connect REST hook: one method per endpoint (contract sections 1.2-1.5)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any
from urllib.parse import quote

import httpx
from airflow.sdk import BaseHook
from tenacity import Retrying

from airflow_provider_connect.errors import (
    ConnectApiError,
    ConnectNotFoundError,
    ConnectorStateError,
    InitialOffsetsUnsupportedError,
    refuses_initial_offsets,
)
from airflow_provider_connect.hooks import retries
from airflow_provider_connect.hooks.base import CONN_TYPE, DEFAULT_CONN_ID, ConnectSettings, api_error, decode, path_for
from airflow_provider_connect.hooks.retries import RetryPolicy, is_retryable_status, transport_error
from airflow_provider_connect.redaction import register_with_airflow, secret_values
from airflow_provider_connect.status import (
    CATCHING_UP_STATES,
    NON_TERMINAL_STATES,
    ConnectState,
    Verdict,
    evaluate_status,
)


class ConnectHook(BaseHook):
    """Talks to one Kafka Connect cluster through an Airflow connection of type `kafka_connect`.

    Retries connection errors, 5xx and 409 (rebalance) answers with exponential backoff. A create is
    never blindly re-sent: when its outcome is unknown the connector is read back instead.
    """

    conn_name_attr = "kafka_connect_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = CONN_TYPE
    hook_name = "Kafka Connect"

    def __init__(
        self,
        kafka_connect_conn_id: str = DEFAULT_CONN_ID,
        retry_policy: RetryPolicy | None = None,
        settings: ConnectSettings | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        self.kafka_connect_conn_id = kafka_connect_conn_id
        self.retry_policy = retry_policy or RetryPolicy()
        self._settings = settings
        self._sleep = sleep
        # Secret config values this hook has sent: scrubbed from every later error, whatever call raised it.
        self._known_secrets: set[str] = set()

    # ---- plumbing -------------------------------------------------------------------------------

    @cached_property
    def settings(self) -> ConnectSettings:
        if self._settings is not None:
            return self._settings
        return ConnectSettings.from_connection(self.get_connection(self.kafka_connect_conn_id))

    @cached_property
    def client(self) -> httpx.Client:
        s = self.settings
        return httpx.Client(
            base_url=s.base_url,
            auth=s.auth,
            verify=s.verify,
            timeout=s.timeout,
            headers={"Accept": "application/json", **s.headers},
        )

    def get_conn(self) -> httpx.Client:
        return self.client

    def close(self) -> None:
        if "client" in self.__dict__:
            self.client.close()
            del self.__dict__["client"]

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: bool = True,
        secrets: Iterable[str] = (),
    ) -> httpx.Response:
        """Send one request with retries; return the response (< 400) or raise ConnectApiError."""
        self.remember_secrets(secrets)

        def attempt() -> httpx.Response:
            response = self.client.request(method, path, params=params, json=json)
            self.log.debug("%s %s -> %s", method, path, response.status_code)
            if response.status_code >= 400:
                raise api_error(method, path, response, self._hidden())
            return response

        return retries.call(self._retrying(method, path, retry), method, path, attempt)

    def _retrying(self, method: str, path: str, retry: bool = True) -> Retrying:
        return Retrying(**self.retry_policy.retry_args(self.log, f"{method} {path}", retry), sleep=self._sleep)

    def _hidden(self) -> set[str]:
        """Every secret an error of this hook must not show: the connection's and the configs' it sent."""
        return self._known_secrets | set(self.settings.secrets)

    def remember_secrets(self, secrets: Iterable[str]) -> None:
        """Scrub these values from every error this hook raises from now on (and mask them in logs)."""
        new = set(secrets) - self._known_secrets
        if new:
            register_with_airflow(new)
            self._known_secrets |= new

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        return decode(self.request(method, path, **kwargs))

    # ---- root (1.2) -----------------------------------------------------------------------------

    def get_server_info(self) -> dict[str, Any]:
        return self._call("GET", "/")

    def get_health(self) -> dict[str, Any]:
        """`/health` body; 503 (starting) and 500 (unhealthy) bodies are returned, not raised."""
        try:
            response = self.client.get("/health")
        except httpx.HTTPError as exc:
            raise transport_error("GET", "/health", exc, 1) from None
        body = decode(response)
        if isinstance(body, dict) and "status" in body:
            return body
        raise api_error("GET", "/health", response, self.settings.secrets)

    def test_connection(self) -> tuple[bool, str]:
        """The UI's Test button: `GET /`, then the worker's `GET /health` (KIP-1017; older workers lack it)."""
        try:
            version = self.get_server_info().get("version")
        except Exception as exc:  # noqa: BLE001 - reported to the UI, not raised
            return False, str(exc)
        try:
            health = self.get_health()
        except ConnectNotFoundError:
            return True, f"Connected to Kafka Connect {version} (it has no /health endpoint)"
        except Exception as exc:  # noqa: BLE001 - reported to the UI, not raised
            return False, f"Kafka Connect {version} answers, but its health could not be read: {exc}"
        if health.get("status") != "healthy":
            return (
                False,
                f"Kafka Connect {version} answers, but its worker is not healthy ({health.get('status')}): "
                f"{health.get('message')}",
            )
        return True, f"Connected to Kafka Connect {version}: {health.get('message')}"

    def connector_url(self, name: str) -> str:
        """Where a person looks at the connector: the connection's `ui_url_template`, or its REST status."""
        base = self.settings.base_url
        template = self.settings.ui_url_template
        if template:
            return template.format(connector=quote(name, safe=""), base_url=base)
        return f"{base}/connectors/{quote(name, safe='')}/status"

    # ---- connectors (1.3) -----------------------------------------------------------------------

    def list_connectors(self, expand: Sequence[str] = ()) -> Any:
        """Names, or with `expand` (status, info) a map name -> {status?, info?}."""
        params = [("expand", e) for e in expand] if expand else None
        return self._call("GET", "/connectors", params=params)

    def get_connector(self, name: str) -> dict[str, Any]:
        return self._call("GET", path_for("connectors", name))

    def get_connector_or_none(self, name: str) -> dict[str, Any] | None:
        try:
            return self.get_connector(name)
        except ConnectNotFoundError:
            return None

    def create_connector(
        self,
        name: str,
        config: Mapping[str, Any],
        initial_state: str | None = None,
        initial_offsets: Sequence[Mapping[str, Any]] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """POST /connectors. Returns (ConnectorInfo, created_by_this_call).

        When the outcome is ambiguous (connection dropped, 5xx, 409) the connector is read back: if it
        exists, its info is returned with created=False and the caller compares configs; only when it
        does not exist is the POST sent again.

        `initial_offsets` (KIP-995, PATCH offsets' entries) go in the body; a cluster that supports them
        answers with `offsets_status` in the info. One that refuses the field (Apache Kafka Connect up to
        3.9) raises InitialOffsetsUnsupportedError at once; `offsets_at_create` builds on both.
        """
        body: dict[str, Any] = {"name": name, "config": dict(config)}
        if initial_state:
            body["initial_state"] = ConnectState.parse(initial_state).value
        if initial_offsets is not None:
            body["initial_offsets"] = [dict(entry) for entry in initial_offsets]
        self.remember_secrets(secret_values(config))

        def attempt() -> tuple[dict[str, Any], bool]:
            try:
                response = self.client.post("/connectors", json=body)
            except httpx.TransportError as exc:
                outcome: Exception = exc
            else:
                if response.status_code == 201:
                    return response.json(), True
                outcome = api_error("POST", "/connectors", response, self._hidden())
                if initial_offsets is not None and refuses_initial_offsets(outcome):
                    raise InitialOffsetsUnsupportedError(str(outcome)) from None
                if not is_retryable_status(response.status_code):
                    raise outcome
            # The POST may have been applied: look before sending it again (a failed look is retried too)
            path = path_for("connectors", name)
            found = self.client.get(path)
            if found.status_code == 404:
                raise outcome
            if found.status_code >= 400:
                raise api_error("GET", path, found, self._hidden())
            return found.json(), False

        return retries.call(self._retrying("POST", "/connectors"), "POST", "/connectors", attempt)

    def get_connector_config(self, name: str) -> dict[str, str]:
        return self._call("GET", path_for("connectors", name, "config"))

    def put_connector_config(self, name: str, config: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        """PUT (create or replace; idempotent). Returns (ConnectorInfo, created)."""
        response = self.request(
            "PUT", path_for("connectors", name, "config"), json=dict(config), secrets=secret_values(config)
        )
        return response.json(), response.status_code == 201

    def patch_connector_config(self, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH: non-null values set keys, null values remove them."""
        return self._call(
            "PATCH", path_for("connectors", name, "config"), json=dict(patch), secrets=secret_values(patch)
        )

    def delete_connector(self, name: str, missing_ok: bool = False) -> bool:
        """Returns True if deleted, False if it was already gone (only with missing_ok)."""
        try:
            self.request("DELETE", path_for("connectors", name))
        except ConnectNotFoundError:
            if missing_ok:
                return False
            raise
        return True

    def get_connector_status(self, name: str) -> dict[str, Any]:
        return self._call("GET", path_for("connectors", name, "status"))

    def get_connector_status_or_none(self, name: str) -> dict[str, Any] | None:
        try:
            return self.get_connector_status(name)
        except ConnectNotFoundError:
            return None

    def get_connector_tasks(self, name: str) -> list[dict[str, Any]]:
        return self._call("GET", path_for("connectors", name, "tasks"))

    def get_connector_tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        """Deprecated upstream (KIP-970) and removed in newer Kafka; kept for older clusters."""
        return self._call("GET", path_for("connectors", name, "tasks-config"))

    def get_task_status(self, name: str, task_id: int) -> dict[str, Any]:
        return self._call("GET", path_for("connectors", name, "tasks", int(task_id), "status"))

    def restart_task(self, name: str, task_id: int) -> None:
        self.request("POST", path_for("connectors", name, "tasks", int(task_id), "restart"))

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        """POST restart. With either flag the server answers 202 with the restart plan, else 204 (None)."""
        params = {"includeTasks": _flag(include_tasks), "onlyFailed": _flag(only_failed)}
        return self._call("POST", path_for("connectors", name, "restart"), params=params)

    def pause_connector(self, name: str) -> None:
        self.request("PUT", path_for("connectors", name, "pause"))

    def resume_connector(self, name: str) -> None:
        self.request("PUT", path_for("connectors", name, "resume"))

    def stop_connector(self, name: str) -> None:
        self.request("PUT", path_for("connectors", name, "stop"))

    def get_connector_topics(self, name: str) -> list[str]:
        body = self._call("GET", path_for("connectors", name, "topics"))
        return list((body.get(name) or {}).get("topics", []))

    def reset_connector_topics(self, name: str) -> None:
        self.request("PUT", path_for("connectors", name, "topics", "reset"))

    def get_offsets(self, name: str) -> list[dict[str, Any]]:
        """The `offsets` list of GET /connectors/{c}/offsets (entries `{"partition", "offset"}`)."""
        return list(self._call("GET", path_for("connectors", name, "offsets")).get("offsets", []))

    def alter_offsets(self, name: str, offsets: Sequence[Mapping[str, Any]]) -> str:
        """PATCH offsets (connector must be STOPPED); returns the server's message."""
        if not offsets:
            raise ValueError("alter_offsets needs at least one {'partition', 'offset'} entry")
        body = {"offsets": [dict(o) for o in offsets]}
        return self._call("PATCH", path_for("connectors", name, "offsets"), json=body)["message"]

    def reset_offsets(self, name: str) -> str:
        """DELETE offsets (connector must be STOPPED); returns the server's message."""
        return self._call("DELETE", path_for("connectors", name, "offsets"))["message"]

    # ---- plugins (1.4) --------------------------------------------------------------------------

    def list_connector_plugins(self, connectors_only: bool = True) -> list[dict[str, Any]]:
        return self._call("GET", "/connector-plugins", params={"connectorsOnly": _flag(connectors_only)})

    def get_plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        return self._call("GET", path_for("connector-plugins", plugin, "config"))

    def validate_config(self, plugin: str, config: Mapping[str, Any]) -> dict[str, Any]:
        return self._call(
            "PUT",
            path_for("connector-plugins", plugin, "config", "validate"),
            json=dict(config),
            secrets=secret_values(config),
        )

    # ---- loggers (1.5) --------------------------------------------------------------------------

    def list_loggers(self) -> dict[str, dict[str, Any]]:
        return self._call("GET", "/admin/loggers")

    def get_logger(self, logger: str) -> dict[str, Any]:
        return self._call("GET", path_for("admin", "loggers", logger))

    def set_logger_level(self, logger: str, level: str, scope: str = "worker") -> list[str] | None:
        """Worker scope returns the affected logger names; cluster scope returns None (204)."""
        return self._call("PUT", path_for("admin", "loggers", logger), params={"scope": scope}, json={"level": level})

    # ---- helpers built on the endpoints ----------------------------------------------------------

    def wait_for_state(
        self,
        name: str,
        target: ConnectState | str,
        include_tasks: bool = True,
        timeout: float = 120.0,
        poll_interval: float = 1.0,
        min_tasks: int | None = None,
        transitional: Iterable[ConnectState | str] = NON_TERMINAL_STATES,
    ) -> dict[str, Any]:
        """Poll the status until `target` is reached (returned) or a failed/unexpected state (raised); states
        in `transitional` are waited through (after a state change request: CATCHING_UP_STATES)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.get_connector_status_or_none(name)
            evaluation = evaluate_status(
                status, target, include_tasks=include_tasks, min_tasks=min_tasks, transitional=transitional
            )
            if evaluation.verdict is Verdict.SUCCESS:
                assert status is not None  # a missing status (404) is never SUCCESS
                return status
            if evaluation.verdict is Verdict.FAILED:
                raise ConnectorStateError(evaluation.message)
            if time.monotonic() >= deadline:
                raise ConnectorStateError(f"Timed out after {timeout:.0f}s: {evaluation.message}")
            self._sleep(poll_interval)

    def ensure_stopped(self, name: str, timeout: float = 120.0, poll_interval: float = 0.5) -> None:
        """Stop the connector (idempotent) and wait until it is STOPPED with no tasks."""
        self.stop_connector(name)
        self.wait_for_state(
            name,
            ConnectState.STOPPED,
            include_tasks=True,
            timeout=timeout,
            poll_interval=poll_interval,
            transitional=CATCHING_UP_STATES,  # a distributed worker answers before the connector stops
        )


def _flag(value: bool) -> str:
    return "true" if value else "false"


__all__ = ["ConnectApiError", "ConnectHook", "ConnectNotFoundError"]
