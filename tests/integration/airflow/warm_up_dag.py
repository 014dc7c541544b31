"""A DAG of one empty task: run_dag.py runs it first, while the test still prepares its own run."""

from __future__ import annotations

from airflow.sdk import dag, task


@dag(dag_id="run_dag_warm_up", schedule=None)
def warm_up() -> None:
    @task
    def nothing() -> None:
        return None

    nothing()


dag = warm_up()
