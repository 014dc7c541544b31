"""Run one DAG file with `dag.test()` in this (fresh) process and write the outcome as JSON.

Usage: python run_dag.py <dag_file> <run_conf_json> <out_json>
A separate process per run keeps Airflow's configuration (AIRFLOW_HOME, sqlite metadata DB, connections
from AIRFLOW_CONN_* variables) apart from the pytest process, which may have imported Airflow already.
"""

from __future__ import annotations

import json
import runpy
import sys


def main(dag_file: str, conf: str, out: str) -> None:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    dag = runpy.run_path(dag_file)["dag"]
    dag_run = dag.test(run_conf=json.loads(conf))
    result = {"state": str(dag_run.state), "tasks": {}, "xcom": {}}
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
    with open(out, "w") as handle:
        json.dump(result, handle, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:4])
