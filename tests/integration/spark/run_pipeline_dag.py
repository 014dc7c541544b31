"""Run dags/spark_pipeline.py with `dag.test()` in this (fresh) process; write the outcome as JSON.

Usage: python run_pipeline_dag.py <dag_file> <run_conf_json> <out_json>
A child process keeps Airflow's configuration (AIRFLOW_HOME, sqlite DB, AIRFLOW_CONN_* connections)
apart from the pytest process. Output: run state, each task's state and seconds, return XComs.
"""

from __future__ import annotations

import json
import os
import runpy
import sys


def _plain(value: object) -> object:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # a plain string XCom
    return value


def main(dag_file: str, conf: str, out: str) -> None:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    dag = runpy.run_path(dag_file)["dag"]
    dag_run = dag.test(run_conf=json.loads(conf))
    result: dict = {"state": str(dag_run.state), "tasks": {}, "seconds": {}, "xcom": {}}
    with create_session() as session:
        for ti in dag_run.get_task_instances(session=session):
            result["tasks"][ti.task_id] = str(ti.state)
            if ti.start_date and ti.end_date:
                result["seconds"][ti.task_id] = round((ti.end_date - ti.start_date).total_seconds(), 1)
        rows = (
            session.query(XComModel)
            .filter(XComModel.dag_id == dag.dag_id, XComModel.run_id == dag_run.run_id, XComModel.key == "return_value")
            .all()
        )
        for row in rows:
            result["xcom"][row.task_id] = _plain(row.value)
    with open(out, "w") as handle:
        json.dump(result, handle, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:4])
    # The result is written: leave now. Airflow's exit-time finalizers would stop dag.test()'s in-process
    # execution API (its event loop thread, joined with a 5 s timeout): 3-5 s more for the test to wait.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
