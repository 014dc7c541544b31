"""Move a Kafka Connect connector, with its offsets, from one Connect cluster to another (KIP-980).

What it does, in order (all inside `migrate`, which is safe to retry after a failure at any step):
  1. stop the connector on the source cluster (its tasks commit their last offsets as they stop);
  2. read its offsets from the source cluster;
  3. create it on the target cluster in the STOPPED state (same config, plus `config_overrides`);
  4. alter the target's offsets to the source's;
  5. resume it on the target;
  6. delete it on the source (or leave it STOPPED there, with `on_source = "stop"`, to keep a way back).
Then `wait_running_on_target` waits until the connector and all its tasks are RUNNING on the target,
and `report` logs (and returns) the offsets the target starts from. A source connector continues at its
next record; a sink continues at the next topic offset.

Trigger it with a config, e.g.
    airflow dags trigger connector_migration --conf '{"connector": "orders-sink"}'

Params:
  connector          name of the connector on the source cluster (required)
  target_connector   name on the target (default: the same name)
  source_conn_id     Airflow connection (type kafka_connect) of the source cluster (default kafka_connect_source)
  target_conn_id     Airflow connection of the target cluster (default kafka_connect_target)
  on_source          "delete" (default) or "stop"
  config_overrides   JSON object of config keys to change on the target (default {})
  wait_timeout_s     how long to wait for stops and for RUNNING, in seconds (default 300)

Connections: define both, e.g. as environment variables
    AIRFLOW_CONN_KAFKA_CONNECT_SOURCE='{"conn_type": "kafka_connect", "host": "http://old-connect:8083"}'
    AIRFLOW_CONN_KAFKA_CONNECT_TARGET='{"conn_type": "kafka_connect", "host": "https://new-connect:8083",
                                        "login": "admin", "password": "...", "extra": {"verify_ssl": true}}'
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import DAG, Param, get_current_context, task

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator
from airflow_provider_connect.sensors.connector import ConnectorStateSensor

TARGET_NAME = "{{ params.target_connector or params.connector }}"

with DAG(
    dag_id="connector_migration",
    description="Move a Kafka Connect connector and its offsets between two Connect clusters (KIP-980)",
    schedule=None,
    catchup=False,
    max_active_runs=1,
    tags=["kafka-connect"],
    doc_md=__doc__,
    params={
        "connector": Param(type="string", minLength=1, description="Connector name on the source cluster"),
        "target_connector": Param(None, type=["null", "string"], description="Name on the target (default: same)"),
        "source_conn_id": Param("kafka_connect_source", type="string"),
        "target_conn_id": Param("kafka_connect_target", type="string"),
        "on_source": Param("delete", enum=["delete", "stop"]),
        "config_overrides": Param({}, type="object", description="Config keys to change on the target"),
        "wait_timeout_s": Param(300, type="integer", minimum=1),
    },
    default_args={"retries": 3, "retry_delay": timedelta(seconds=10)},
) as dag:
    migrate = ConnectorMigrateOperator(
        task_id="migrate",
        connector_name="{{ params.connector }}",
        target_connector_name=TARGET_NAME,
        source_conn_id="{{ params.source_conn_id }}",
        target_conn_id="{{ params.target_conn_id }}",
        config_overrides="{{ params.config_overrides | tojson }}",
        on_source="{{ params.on_source }}",
        # The sensor below does the waiting; the operator only needs the stops to settle.
        wait_for_running=False,
    )

    wait_running_on_target = ConnectorStateSensor(
        task_id="wait_running_on_target",
        connector_name=TARGET_NAME,
        kafka_connect_conn_id="{{ params.target_conn_id }}",
        target_state="RUNNING",
        include_tasks=True,
        # right after resume a connector may still show STOPPED for a moment
        transitional_states=["UNASSIGNED", "RESTARTING", "STOPPED"],
        poke_interval=1,
        timeout=300,
        mode="poke",
        retries=0,
    )

    @task
    def report() -> dict[str, Any]:
        params = get_current_context()["params"]
        name = params["target_connector"] or params["connector"]
        hook = ConnectHook(params["target_conn_id"])
        offsets = hook.get_offsets(name)
        status = hook.get_connector_status(name)
        summary = {
            "connector": name,
            "state": status["connector"]["state"],
            "tasks": [t["state"] for t in status.get("tasks", [])],
            "offsets": offsets,
        }
        print(f"Connector {name} runs on {params['target_conn_id']} from offsets {offsets}")
        return summary

    migrate >> wait_running_on_target >> report()
