"""dags/spark_pipeline.py end to end with Airflow's dag.test(): real broker, worker, spark-submit.

The run waits for the offsets the producer was acknowledged (`end_offsets`), never for the topic's
high watermark (on the Tansu test broker it is only the last batch's base offset + 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.spark.test_spark_connectors import FAST_JVM, create_topic, produce
from tests.support.broker import unique
from tests.support.env import have_java, require
from tests.support.worker import REPO_ROOT, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.airflow, pytest.mark.timeout(420)]

RUNNER = Path(__file__).with_name("run_pipeline_dag.py")  # dag.test() in a child process


def airflow_env(home: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    dags = home / "dags"
    dags.mkdir(parents=True)
    (dags / "spark_pipeline.py").symlink_to(REPO_ROOT / "dags" / "spark_pipeline.py")
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "PYSPARK_PYTHON": sys.executable,
        # spark-submit's JVM (only the DAG run's children see this): C1-only JIT starts twice as fast.
        "JAVA_TOOL_OPTIONS": FAST_JVM["spark.driver.extraJavaOptions"],
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
    }


def warm_up_spark(worker: WorkerProcess, bootstrap: str, root: Path, spark: dict[str, str]) -> None:
    """Start the worker's shared SparkSession (a JVM: the slow part) in the background while Airflow
    migrates its DB, by giving another sink with the same Spark settings one record to write."""
    topic = unique("warm-up")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(1), 1)
    config = {
        "connector.class": "runtime.connectors.spark.sink.SparkSinkConnector",
        "topics": topic,
        "path": str(root),
        "flush.size": "1",
        **spark,
    }
    with worker.client as client:
        assert client.post("/connectors", json={"name": topic, "config": config}).status_code == 201


def test_pipeline_writes_seeded_range_exactly_once_and_aggregates_it(tmp_path, bootstrap_servers):
    require(have_java(), "Java (Spark)")
    require((Path(sys.executable).parent / "spark-submit").exists(), "spark-submit in the virtualenv")
    try:
        import airflow  # noqa: F401
    except ImportError:
        require(False, "Apache Airflow")
    env = airflow_env(tmp_path / "airflow")
    # The metadata DB migrates while the topic fills and the worker starts.
    migrate = subprocess.Popen(
        [sys.executable, "-m", "airflow", "db", "migrate"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    topic, name = unique("orders"), unique("pipeline")
    create_topic(bootstrap_servers, topic, 2)
    ends = produce(bootstrap_servers, topic, range(400), 2)  # 200 records per partition
    output, result_file = tmp_path / "aggregate.json", tmp_path / "dag-result.json"
    spark = {"spark.master": "local[2]", **FAST_JVM}
    with WorkerProcess(tmp_path / "worker", bootstrap_servers, {"offset.flush.interval.ms": 300}) as worker:
        warm_up_spark(worker, bootstrap_servers, tmp_path / "warm-up", spark)
        assert migrate.wait(timeout=240) == 0, migrate.stderr.read().decode()[-3000:]
        conf = {
            "connector": name,
            "topic": topic,
            "path": str(tmp_path / "ds"),
            "output": str(output),
            "seed_offsets": {"0": 150},
            "end_offsets": {str(p): end for p, end in ends.items()},
            "sink_overrides": {"flush.size": "100", "flush.interval.ms": "300", **spark},
        }
        env["AIRFLOW_CONN_KAFKA_CONNECT_DEFAULT"] = json.dumps({"conn_type": "kafka_connect", "host": worker.url})
        done = subprocess.run(
            [
                sys.executable,
                str(RUNNER),
                str(tmp_path / "airflow" / "dags" / "spark_pipeline.py"),
                json.dumps(conf),
                str(result_file),
            ],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=360,
        )
        with worker.client as client:
            offsets = client.get(f"/connectors/{name}/offsets").json()["offsets"]
    log = done.stdout[-4000:] + done.stderr[-4000:]
    assert result_file.exists(), log
    run = json.loads(result_file.read_text())
    print("task seconds:", run["seconds"])
    assert run["state"] == "success", (run["tasks"], log)
    assert run["tasks"] == {
        t: "success"
        for t in (
            "sink_config",
            "create_sink_stopped",
            "plan_seeds",
            "seed_entries",
            "seed_offsets",
            "resume",
            "catch_up_targets",
            "wait_caught_up",
            "aggregate",
            "check_result",
        )
    }
    assert {o["partition"]["kafka_partition"]: o["offset"]["kafka_offset"] for o in offsets} == {0: 200, 1: 200}
    result = json.loads(output.read_text())
    # Partition 0 seeded at 150: its offsets 150-199 (ids 300..398, even) plus all 200 of partition 1.
    assert result["rows"] == 250 and result["distinct_ids"] == 250
    assert result["offsets"] == {
        f"{topic}:0": {"rows": 50, "distinct_offsets": 50, "min_offset": 150, "max_offset": 199},
        f"{topic}:1": {"rows": 200, "distinct_offsets": 200, "min_offset": 0, "max_offset": 199},
    }
    assert result["by_region"] == {
        "us": {"rows": 50, "qty": sum(i % 7 for i in range(300, 400, 2))},
        "eu": {"rows": 200, "qty": sum(i % 7 for i in range(1, 400, 2))},
    }
    assert run["xcom"]["check_result"]["rows"] == 250
