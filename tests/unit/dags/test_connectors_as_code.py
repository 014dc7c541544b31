"""The connectors_as_code DAG: applies the folder hourly and when its drift watcher fires."""

import runpy
from pathlib import Path

from airflow_provider_connect.operators.as_code import ConnectorsApplyOperator


def test_the_dag_applies_the_folder_hourly_and_when_the_watcher_fires(monkeypatch, tmp_path):
    from airflow.sdk import CronTriggerTimetable

    from airflow_provider_connect.triggers.as_code import DesiredStateDriftTrigger

    monkeypatch.setenv("KAFKA_CONNECT_DESIRED_STATE", str(tmp_path))
    monkeypatch.setenv("KAFKA_CONNECT_AS_CODE_PRUNE", "true")
    dag = runpy.run_path(str(Path(__file__).resolve().parents[3] / "dags" / "connectors_as_code.py"))["dag"]
    (task,) = dag.tasks
    assert isinstance(task, ConnectorsApplyOperator) and task.desired_state == str(tmp_path) and task.prune
    assert isinstance(dag.timetable.timetable, CronTriggerTimetable)
    (trigger,) = [w.trigger for asset in dag.timetable.asset_condition.objects for w in asset.watchers]
    assert isinstance(trigger, DesiredStateDriftTrigger) and trigger.desired_state == str(tmp_path) and trigger.prune
