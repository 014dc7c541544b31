"""ConnectorFailedTrigger: the failure watcher an AssetWatcher runs (restart_failed_connectors_on_failure)."""

import httpx

from tests.unit.airflow_provider_connect.bodies import run_trigger
from tests.unit.airflow_provider_connect.conftest import BASE

# ---- the failure watcher (AssetWatcher) ----------------------------------------------------------


def test_failure_trigger_fires_with_the_failed_connectors(router):
    from airflow.triggers.base import BaseEventTrigger

    from airflow_provider_connect.triggers.failures import ConnectorFailedTrigger

    healthy = {"status": {"name": "ok", "connector": {"state": "RUNNING"}, "tasks": [{"id": 0, "state": "RUNNING"}]}}
    broken = {
        "status": {
            "name": "bad",
            "connector": {"state": "RUNNING"},
            "tasks": [{"id": 0, "state": "RUNNING"}, {"id": 1, "state": "FAILED", "trace": "Boom"}],
        }
    }
    listing = router.get(f"{BASE}/connectors", params={"expand": "status"})
    listing.side_effect = [
        httpx.Response(200, json={"ok": healthy}),
        httpx.Response(200, json={"ok": healthy, "bad": broken}),
    ]
    trigger = ConnectorFailedTrigger(poll_interval=0)
    assert isinstance(trigger, BaseEventTrigger)  # usable with AssetWatcher
    event = run_trigger(trigger)  # the event's payload
    assert event["status"] == "failed"
    assert event["connectors"] == [{"name": "bad", "connector_failed": False, "failed_tasks": [1]}]
    assert listing.call_count == 2  # it kept watching while everything was healthy
    path, kwargs = trigger.serialize()
    assert path == "airflow_provider_connect.triggers.failures.ConnectorFailedTrigger"
    assert type(trigger)(**kwargs).serialize() == (path, kwargs)
