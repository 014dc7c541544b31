"""Find every Kafka Connect connector or task that is FAILED, restart only those, wait, and report.

Tasks:
  find_failed      GET /connectors?expand=status; lists each connector with a FAILED connector instance
                   or FAILED tasks (healthy connectors are never touched);
  restart_failed   POST /connectors/{c}/restart?includeTasks=true&onlyFailed=true for each of them, so only
                   the FAILED instances restart (KIP-745);
  report           waits up to `wait_timeout_s` for each restarted connector and its tasks to be RUNNING,
                   then returns {"healed": [...], "still_failed": {name: reason}, "healthy": n} and, when
                   something is still FAILED and `fail_if_unhealed` is true, fails so someone notices.

Params:
  conn_id           Airflow connection (type kafka_connect) of the cluster (default kafka_connect_default)
  connectors        restrict to these connector names (default: all)
  wait_timeout_s    seconds to wait for the restarted connectors (default 120)
  fail_if_unhealed  fail the run when a connector stays FAILED (default true)

Run it on a schedule (hourly by default) or by hand:
    airflow dags trigger restart_failed_connectors --conf '{"conn_id": "kafka_connect_prod"}'
Connection example:
    AIRFLOW_CONN_KAFKA_CONNECT_DEFAULT='{"conn_type": "kafka_connect", "host": "http://connect:8083"}'
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import DAG, Param, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException

from airflow_provider_connect import remediation
from airflow_provider_connect.hooks.connect import ConnectHook

with DAG(
    dag_id="restart_failed_connectors",
    description="Restart only the FAILED Kafka Connect connectors and tasks, then report",
    schedule=timedelta(hours=1),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-connect"],
    doc_md=__doc__,
    params={
        "conn_id": Param("kafka_connect_default", type="string"),
        "connectors": Param([], type="array", items={"type": "string"}, description="Empty means all"),
        "wait_timeout_s": Param(120, type="integer", minimum=1),
        "fail_if_unhealed": Param(True, type="boolean"),
    },
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30)},
) as dag:

    @task
    def find_failed() -> list[dict[str, Any]]:
        params = get_current_context()["params"]
        failed = remediation.find_failed(ConnectHook(params["conn_id"]), params["connectors"] or [])
        print(f"{len(failed)} connector(s) have FAILED instances: {[f['name'] for f in failed]}")
        return failed

    @task
    def restart_failed(failed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        restarted = remediation.restart_failed(ConnectHook(get_current_context()["params"]["conn_id"]), failed)
        for entry in restarted:
            print(f"Restarted {entry['name']}: {entry['restarted']}")
        return restarted

    @task
    def report(restarted: list[dict[str, Any]]) -> dict[str, Any]:
        params = get_current_context()["params"]
        summary = remediation.report(ConnectHook(params["conn_id"]), restarted, float(params["wait_timeout_s"]))
        still_failed = summary["still_failed"]
        print(
            f"Healed: {summary['healed']}; still failed: {sorted(still_failed)}; untouched healthy: {summary['healthy']}"
        )
        if still_failed and params["fail_if_unhealed"]:
            # AirflowFailException: retrying the report would not heal anything
            raise AirflowFailException(
                f"Connectors still FAILED after restart: {sorted(still_failed)}\n" + "\n".join(still_failed.values())
            )
        return summary

    report(restart_failed(find_failed()))
