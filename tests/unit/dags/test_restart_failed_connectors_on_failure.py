"""The event-driven remediation DAG: scheduled on an asset whose watcher is the failure trigger."""

from __future__ import annotations

import runpy
from pathlib import Path

from airflow_provider_connect.triggers.failures import ConnectorFailedTrigger

DAGS = Path(__file__).resolve().parents[3] / "dags"


def test_restart_on_failure_dag_is_started_by_the_failure_watcher(monkeypatch):
    monkeypatch.setenv("KAFKA_CONNECT_WATCH_CONN_ID", "kafka_connect_prod")
    dag = runpy.run_path(str(DAGS / "restart_failed_connectors_on_failure.py"))["dag"]
    assert [t.task_id for t in dag.tasks] == ["find_failed", "restart_failed", "report"]
    assets = list(dag.timetable.asset_condition.objects)  # schedule=[asset]: all of one asset
    watchers = [w for asset in assets for w in asset.watchers]
    assert len(watchers) == 1
    trigger = watchers[0].trigger
    assert isinstance(trigger, ConnectorFailedTrigger) and trigger.kafka_connect_conn_id == "kafka_connect_prod"
