"""Run DAG files with `dag.test()` in this process, one request after another, and write each outcome as JSON.

Usage: python run_dag.py <warm-up dag file>, then one JSON request a line on stdin:
{"dag_file", "conf", "out", "connections"} (`connections`: the AIRFLOW_CONN_* variables of that run); the
file `out` appears when the run is over.
A process of its own keeps Airflow's configuration (AIRFLOW_HOME, sqlite metadata DB) apart from the pytest
process, which may have imported Airflow already; serving every run of a session from one process pays
Airflow's start (its imports and dag.test()'s in-process execution API: 15-30 s on 2 busy cores) once.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from typing import Any


def run(dag_file: str, conf: dict[str, Any]) -> dict[str, Any]:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    dag = runpy.run_path(dag_file)["dag"]
    dag_run = dag.test(run_conf=conf)
    result: dict[str, Any] = {"state": str(dag_run.state), "tasks": {}, "xcom": {}}
    with create_session() as session:
        for ti in dag_run.get_task_instances(session=session):
            result["tasks"][ti.task_id] = str(ti.state)
        rows = (
            session.query(XComModel)
            .filter(XComModel.dag_id == dag.dag_id, XComModel.run_id == dag_run.run_id, XComModel.key == "return_value")
            .all()
        )
        for row in rows:
            value = row.value
            result["xcom"][row.task_id] = json.loads(value) if isinstance(value, str) else value
    return result


def use_connections(connections: dict[str, str]) -> None:
    """This run's connections only: Airflow reads AIRFLOW_CONN_* from the environment at each lookup."""
    for name in [name for name in os.environ if name.startswith("AIRFLOW_CONN_")]:
        del os.environ[name]
    os.environ.update(connections)


def main(warm_up_dag: str) -> None:
    # Airflow's imports and the first task's (the task runner, the in-process execution API and what its first
    # requests build), paid while the test still prepares its first run
    run(warm_up_dag, {})
    for line in sys.stdin:
        request = json.loads(line)
        use_connections(request["connections"])
        try:
            result = run(request["dag_file"], request["conf"])
        except Exception:  # noqa: BLE001 - the test reports it; the next run gets a working process
            traceback.print_exc()
            result = {"state": "crashed", "tasks": {}, "xcom": {}, "error": traceback.format_exc()}
        sys.stdout.flush()
        sys.stderr.flush()
        with open(request["out"] + ".part", "w") as handle:
            json.dump(result, handle, default=str)
        os.replace(request["out"] + ".part", request["out"])  # whole, or not there yet


if __name__ == "__main__":
    main(*sys.argv[1:2])
