import asyncio

import httpx
import pytest

from airflow_provider_connect.errors import ConnectApiError, ConnectNotFoundError
from airflow_provider_connect.hooks.async_connect import AsyncConnectHook
from airflow_provider_connect.hooks.retries import RetryPolicy
from tests.unit.airflow_provider_connect.conftest import BASE, HEADER_TOKEN


def run(coro):
    return asyncio.run(coro)


def test_connection_comes_from_aget_connection(router):
    route = router.get(f"{BASE}/connectors/a/status").respond(200, json={"name": "a"})
    hook = AsyncConnectHook("kafka_connect_default")
    assert run(hook.get_connector_status("a")) == {"name": "a"}
    assert route.calls.last.request.headers["X-Auth"] == HEADER_TOKEN
    assert route.calls.last.request.headers["Authorization"].startswith("Basic ")


def test_retries_then_succeeds(router):
    route = router.get(f"{BASE}/connectors/a/offsets").mock(
        side_effect=[
            httpx.ConnectError("refused"),
            httpx.Response(502),
            httpx.Response(409, json={"error_code": 409, "message": "rebalance"}),
            httpx.Response(200, json={"offsets": [{"partition": {}, "offset": {}}]}),
        ]
    )
    assert run(AsyncConnectHook().get_offsets("a")) == [{"partition": {}, "offset": {}}]
    assert route.call_count == 4


def test_gives_up_with_server_error(router):
    router.get(f"{BASE}/connectors/a").respond(500, json={"error_code": 500, "message": "broken"})
    with pytest.raises(ConnectApiError) as info:
        run(AsyncConnectHook(retry_policy=RetryPolicy(max_attempts=2)).get_connector("a"))
    assert info.value.status_code == 500 and info.value.server_message == "broken"


def test_missing_status_is_none_and_not_retried(router):
    route = router.get(f"{BASE}/connectors/a/status").respond(
        404, json={"error_code": 404, "message": "No status found for connector a"}
    )
    assert run(AsyncConnectHook().get_connector_status_or_none("a")) is None
    assert route.call_count == 1
    with pytest.raises(ConnectNotFoundError):
        run(AsyncConnectHook().get_connector_status("a"))


def test_gives_up_after_connection_errors_naming_the_attempts(router):
    route = router.get(f"{BASE}/connectors/a/status").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ConnectApiError, match="ConnectError after 3 attempt"):
        run(AsyncConnectHook(retry_policy=RetryPolicy(max_attempts=3)).get_connector_status("a"))
    assert route.call_count == 3
