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

from airflow_provider_connect.errors import ConnectApiError, ConnectorStateError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.status import ConnectState

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
        wanted = set(params["connectors"] or [])
        expanded = ConnectHook(params["conn_id"]).list_connectors(expand=["status"])
        failed = []
        for name, entry in sorted(expanded.items()):
            if wanted and name not in wanted:
                continue
            status = entry.get("status") or {}
            connector_failed = (status.get("connector") or {}).get("state") == ConnectState.FAILED.value
            failed_tasks = [t["id"] for t in status.get("tasks") or [] if t.get("state") == ConnectState.FAILED.value]
            if connector_failed or failed_tasks:
                failed.append({"name": name, "connector_failed": connector_failed, "failed_tasks": failed_tasks})
        print(f"{len(failed)} of {len(expanded)} connector(s) have FAILED instances: {[f['name'] for f in failed]}")
        return failed

    @task
    def restart_failed(failed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        hook = ConnectHook(get_current_context()["params"]["conn_id"])
        restarted = []
        for entry in failed:
            plan = hook.restart_connector(entry["name"], include_tasks=True, only_failed=True) or {}
            instances = (["connector"] if (plan.get("connector") or {}).get("state") == "RESTARTING" else []) + [
                f"task-{t['id']}" for t in plan.get("tasks") or [] if t.get("state") == "RESTARTING"]
            print(f"Restarted {entry['name']}: {instances}")
            restarted.append({**entry, "restarted": instances})
        return restarted

    @task
    def report(restarted: list[dict[str, Any]]) -> dict[str, Any]:
        params = get_current_context()["params"]
        hook = ConnectHook(params["conn_id"])
        healed, still_failed = [], {}
        for entry in restarted:
            try:
                hook.wait_for_state(entry["name"], ConnectState.RUNNING, include_tasks=True,
                                    timeout=float(params["wait_timeout_s"]), poll_interval=1.0)
                healed.append(entry["name"])
            except (ConnectorStateError, ConnectApiError) as exc:
                still_failed[entry["name"]] = str(exc)
        total = len(hook.list_connectors())
        summary = {"healed": healed, "still_failed": still_failed, "healthy": total - len(restarted)}
        print(f"Healed: {healed}; still failed: {sorted(still_failed)}; untouched healthy: {summary['healthy']}")
        if still_failed and params["fail_if_unhealed"]:
            # AirflowFailException: retrying the report would not heal anything
            raise AirflowFailException(f"Connectors still FAILED after restart: {sorted(still_failed)}\n"
                                   + "\n".join(still_failed.values()))
        return summary

    report(restart_failed(find_failed()))
