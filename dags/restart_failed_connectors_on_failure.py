"""Restart FAILED Kafka Connect connectors and tasks when they fail (Airflow 3 event-driven scheduling).

The same steps as `restart_failed_connectors` (find, restart only the FAILED instances with KIP-745's
`onlyFailed`, report), started by an AssetWatcher whose ConnectorFailedTrigger polls the cluster from the
triggerer and fires when a connector or one of its tasks turns FAILED, instead of on a schedule.

Connection: `kafka_connect_default` (type kafka_connect), or set KAFKA_CONNECT_WATCH_CONN_ID before the DAG
file is parsed; KAFKA_CONNECT_WATCH_INTERVAL_S sets how often the triggerer looks (default 15 s).
The triggering event (which connectors failed) is in the run's `triggering_asset_events`.
"""

from __future__ import annotations

import os
from typing import Any

from airflow.sdk import DAG, Asset, AssetWatcher, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException

from airflow_provider_connect import remediation
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.triggers.failures import ConnectorFailedTrigger

CONN_ID = os.environ.get("KAFKA_CONNECT_WATCH_CONN_ID", "kafka_connect_default")
WAIT_TIMEOUT_S = 120.0

connector_failures = Asset(
    f"kafka-connect://{CONN_ID}/failed-instances",
    watchers=[
        AssetWatcher(
            name=f"kafka_connect_failures_{CONN_ID}",
            trigger=ConnectorFailedTrigger(
                kafka_connect_conn_id=CONN_ID,
                poll_interval=float(os.environ.get("KAFKA_CONNECT_WATCH_INTERVAL_S", "15")),
            ),
        )
    ],
)

with DAG(
    dag_id="restart_failed_connectors_on_failure",
    description="Restart only the FAILED Kafka Connect connectors and tasks as soon as they fail",
    schedule=[connector_failures],
    catchup=False,
    max_active_runs=1,
    tags=["kafka-connect"],
    doc_md=__doc__,
) as dag:

    @task
    def find_failed() -> list[dict[str, Any]]:
        events = get_current_context().get("triggering_asset_events") or {}
        for asset_events in events.values():
            for event in asset_events:
                print(f"Triggered by: {(event.extra or {}).get('message', event)}")
        failed = remediation.find_failed(ConnectHook(CONN_ID))
        print(f"{len(failed)} connector(s) have FAILED instances: {[f['name'] for f in failed]}")
        return failed

    @task
    def restart_failed(failed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        restarted = remediation.restart_failed(ConnectHook(CONN_ID), failed)
        for entry in restarted:
            print(f"Restarted {entry['name']}: {entry['restarted']}")
        return restarted

    @task
    def report(restarted: list[dict[str, Any]]) -> dict[str, Any]:
        summary = remediation.report(ConnectHook(CONN_ID), restarted, WAIT_TIMEOUT_S)
        if summary["still_failed"]:
            raise AirflowFailException(f"Connectors still FAILED after restart: {sorted(summary['still_failed'])}")
        return summary

    report(restart_failed(find_failed()))
