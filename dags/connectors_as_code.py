"""Connectors as code: make a Kafka Connect cluster match a folder of connector files, hourly and on a change.

The folder (default: `connectors/` beside this file) holds one JSON or YAML file per connector, the body
`POST /connectors` takes plus its target state and, optionally, the offsets it starts from:

    # connectors/orders-source.yaml
    config:
      connector.class: FileStreamSource
      file: /data/orders.txt
      topic: orders
      tasks.max: 1
    state: RUNNING            # RUNNING (default), PAUSED or STOPPED
    offsets:                  # written once, when the connector is created
      - {partition: {filename: /data/orders.txt}, offset: {position: 0}}

The `apply` task logs the plan as a diff (secrets redacted), applies it, and waits until every changed
connector is in its state; its XCom is the plan. It runs hourly, and as soon as the folder and the
cluster disagree: an AssetWatcher's DesiredStateDriftTrigger plans from the triggerer every
KAFKA_CONNECT_AS_CODE_INTERVAL_S seconds (default 60) and fires when a connector must be created,
changed or (with pruning) deleted. The triggerer must be able to read the folder.

Environment, read when the file is parsed:
  KAFKA_CONNECT_DESIRED_STATE        the folder (default: connectors/ beside this file)
  KAFKA_CONNECT_AS_CODE_CONN_ID      the cluster's Airflow connection (default kafka_connect_default)
  KAFKA_CONNECT_AS_CODE_PRUNE        true: delete the connectors the folder does not declare (default false)
  KAFKA_CONNECT_AS_CODE_INTERVAL_S   how often the triggerer compares (default 60)
Trigger a run with `{"dry_run": true}` to see the plan without applying it.
"""

from __future__ import annotations

import os
from pathlib import Path

from airflow.sdk import DAG, Asset, AssetOrTimeSchedule, AssetWatcher, CronTriggerTimetable, Param

from airflow_provider_connect.operators.as_code import ConnectorsApplyOperator
from airflow_provider_connect.triggers.as_code import DesiredStateDriftTrigger

DESIRED_STATE = os.environ.get("KAFKA_CONNECT_DESIRED_STATE") or str(Path(__file__).parent / "connectors")
CONN_ID = os.environ.get("KAFKA_CONNECT_AS_CODE_CONN_ID", "kafka_connect_default")
PRUNE = os.environ.get("KAFKA_CONNECT_AS_CODE_PRUNE", "false").strip().lower() in ("1", "true", "yes")

desired_state_drift = Asset(
    f"kafka-connect://{CONN_ID}/desired-state",
    watchers=[
        AssetWatcher(
            name=f"kafka_connect_desired_state_{CONN_ID}",
            trigger=DesiredStateDriftTrigger(
                desired_state=DESIRED_STATE,
                kafka_connect_conn_id=CONN_ID,
                prune=PRUNE,
                poll_interval=float(os.environ.get("KAFKA_CONNECT_AS_CODE_INTERVAL_S", "60")),
            ),
        )
    ],
)

with DAG(
    dag_id="connectors_as_code",
    description="Make a Kafka Connect cluster match a folder of connector files (plan, diff, apply)",
    schedule=AssetOrTimeSchedule(
        timetable=CronTriggerTimetable("0 * * * *", timezone="UTC"), assets=[desired_state_drift]
    ),
    catchup=False,
    max_active_runs=1,
    render_template_as_native_obj=True,
    params={"dry_run": Param(False, type="boolean", description="Only plan: log the diff, change nothing")},
    tags=["kafka-connect"],
    doc_md=__doc__,
) as dag:
    ConnectorsApplyOperator(
        task_id="apply",
        desired_state=DESIRED_STATE,
        kafka_connect_conn_id=CONN_ID,
        prune=PRUNE,
        dry_run="{{ params.dry_run }}",
    )
