"""dags/spark_pipeline.py end to end with Airflow's dag.test(): real broker, worker, spark-submit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.broker import unique
from tests.support.env import have_java, require
from tests.support.worker import REPO_ROOT, WorkerProcess

from tests.integration.spark.test_spark_connectors import create_topic, produce

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.airflow]

RUN = """
import json, sys
sys.path.insert(0, {dags!r})
from spark_pipeline import spark_pipeline_dag
run = spark_pipeline_dag.test(run_conf=json.loads({conf!r}))
print("DAG_STATE", run.state)
"""


def test_pipeline_writes_seeded_range_exactly_once_and_aggregates_it(tmp_path, bootstrap_servers):
    require(have_java(), "Java (Spark)")
    bin_dir = Path(sys.executable).parent
    require((bin_dir / "spark-submit").exists(), "spark-submit in the virtualenv")
    topic, name = unique("orders"), unique("pipeline")
    create_topic(bootstrap_servers, topic, 2)
    produce(bootstrap_servers, topic, range(400), 2)  # 200 records per partition
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow"), "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "PYSPARK_PYTHON": sys.executable, "AIRFLOW__CORE__LOAD_EXAMPLES": "false",
           "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
           "PYTHONPATH": str(REPO_ROOT), "AIRFLOW__CORE__DAGS_FOLDER": str(REPO_ROOT / "dags")}
    subprocess.run([str(bin_dir / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True, timeout=240)
    output = tmp_path / "aggregate.json"
    worker = WorkerProcess(tmp_path / "worker", bootstrap_servers, {"offset.flush.interval.ms": 500})
    with worker:
        conf = {"connect_url": worker.url, "connector": name, "topic": topic, "path": str(tmp_path / "ds"),
                "bootstrap_servers": bootstrap_servers, "seed_offsets": {"0": 150, "1": 0},
                "sink_overrides": {"flush.size": "100", "flush.interval.ms": "500", "spark.master": "local[2]"},
                "output": str(output), "catch_up_timeout_s": 180}
        script = RUN.format(dags=str(REPO_ROOT / "dags"), conf=json.dumps(conf))
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=420)
    assert "DAG_STATE success" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(output.read_text())
    # Partition 0 seeded at 150: its records 150-199 (ids 300..398 even) plus all 200 of partition 1.
    assert result["rows"] == 250 and result["distinct_ids"] == 250
    assert sum(r["rows"] for r in result["by_region"].values()) == 250
