import json

import pytest
import respx
from tenacity import wait_none

from airflow_provider_connect.hooks.retries import RetryPolicy
from tests.unit.airflow_provider_connect.fake_connect import FakeConnect

BASE = "http://connect.test:8083"
TARGET = "http://target.test:8083"
CONN_PASSWORD = "conn-pass-9f8e7d"
HEADER_TOKEN = "Bearer tok-5a4b3c2d1e"
REAL_WAIT = RetryPolicy.wait  # kept before the autouse fixture patches it


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    """Retries happen, but without waiting."""
    monkeypatch.setattr(RetryPolicy, "wait", lambda self: wait_none())


@pytest.fixture(autouse=True)
def connections(monkeypatch):
    for conn_id, url in (("KAFKA_CONNECT_DEFAULT", BASE), ("SOURCE", BASE), ("TARGET", TARGET)):
        monkeypatch.setenv(
            f"AIRFLOW_CONN_{conn_id}",
            json.dumps(
                {
                    "conn_type": "kafka_connect",
                    "host": url,
                    "login": "admin",
                    "password": CONN_PASSWORD,
                    "extra": {"headers": {"X-Auth": HEADER_TOKEN}, "timeout": 5},
                }
            ),
        )


@pytest.fixture
def router():
    with respx.mock(assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def fake(router):
    return FakeConnect(BASE).mount(router)


@pytest.fixture
def fake_target(router):
    return FakeConnect(TARGET).mount(router)
