"""Section 4 group H: the /admin/loggers API (KIP-495, KIP-976) on a standalone worker of its own."""

from __future__ import annotations

import time

import pytest

from .helpers import Api, assert_error

pytestmark = pytest.mark.integration

NAMESPACE = "runtime"


@pytest.fixture(scope="module")
def initial(api: Api) -> dict:
    """The listing of the fresh worker, before any test changes a level."""
    response = api.get("/admin/loggers")
    assert response.status_code == 200
    return response.json()


def test_initial_listing(initial) -> None:
    # 82
    assert initial and "root" in initial
    assert all(v["last_modified"] is None for v in initial.values()), initial
    assert all(set(v) == {"level", "last_modified"} for v in initial.values())
    assert list(initial) == sorted(initial)


def test_worker_scope_sets_a_namespace(api, initial) -> None:
    # 83
    root_before = api.get("/admin/loggers/root").json()
    before_ms = int(time.time() * 1000) - 1000  # allow clock rounding
    response = api.put(f"/admin/loggers/{NAMESPACE}", {"level": "debug"}, params={"scope": "worker"})
    assert response.status_code == 200, response.text
    affected = response.json()
    assert NAMESPACE in affected and affected == sorted(affected)
    assert all(n == NAMESPACE or n.startswith(NAMESPACE + ".") for n in affected), affected

    ns = api.get(f"/admin/loggers/{NAMESPACE}").json()
    assert ns["level"] == "DEBUG" and ns["last_modified"] >= before_ms
    listing = api.get("/admin/loggers").json()
    for logger in affected:
        assert listing[logger]["level"] == "DEBUG", (logger, listing[logger])
    assert set(initial) <= set(listing)  # none disappear
    assert api.get("/admin/loggers/root").json()["level"] == root_before["level"]  # outside unchanged

    # the same level again changes neither level nor timestamp
    assert api.put(f"/admin/loggers/{NAMESPACE}", {"level": "DEBUG"}).status_code == 200
    assert api.get(f"/admin/loggers/{NAMESPACE}").json() == ns


def test_cluster_scope_is_204_and_applied_locally(api) -> None:
    # 84
    response = api.put(f"/admin/loggers/{NAMESPACE}", {"level": "ERROR"}, params={"scope": "cluster"})
    assert response.status_code == 204 and response.content == b""
    from tests.support.worker import wait_for

    wait_for(lambda: api.get(f"/admin/loggers/{NAMESPACE}").json()["level"] == "ERROR", 10, what="ERROR applied")


def test_logger_errors(api) -> None:
    # 86
    assert_error(
        api.put(f"/admin/loggers/{NAMESPACE}", {}), 400, "Desired 'level' parameter was not specified in request."
    )
    assert_error(api.put(f"/admin/loggers/{NAMESPACE}", {"level": "LOUD"}), 404, "invalid log level 'LOUD'.")
    assert_error(api.get("/admin/loggers/no.such.logger.anywhere"), 404, "Logger no.such.logger.anywhere not found.")
    assert api.get("/admin/loggers/ROOT").status_code == 200  # root is case-insensitive


def test_restart_discards_adjustments(worker, initial) -> None:
    # 85 (last in this module: it restarts the module's worker)
    api = Api(worker.url)
    assert api.put(f"/admin/loggers/{NAMESPACE}", {"level": "WARN"}).status_code == 200
    api.close()
    worker.stop()
    worker.start()
    api = Api(worker.url)
    try:
        assert api.get("/admin/loggers").json() == initial
    finally:
        api.close()
