"""Kafka topic -> SparkSinkConnector dataset -> PySpark aggregation, driven with airflow_provider_connect.

Steps (each one safe to retry):
  1. `create_sink_stopped`  ConnectorCreateOperator, initial_state STOPPED (KIP-980), so nothing is
                            consumed before the offsets are in place (config built by `sink_config`);
  2. `plan_seeds`           branch: seed offsets only when `seed_offsets` is given;
  3. `seed_offsets`         ConnectorAlterOffsetsOperator (KIP-875): partition -> first offset to write
                            (the request body built by `seed_entries`);
  4. `resume`               ConnectorResumeOperator;
  5. `catch_up_targets`     the offsets the sink must reach: `end_offsets` when given (the sound choice,
                            e.g. the offsets your producer was acknowledged + 1), else the topic's ends
                            measured now (high watermarks: right on Apache Kafka, where they are the end
                            of the committed log);
  6. `wait_caught_up`       SinkOffsetsSensor until the sink's committed offsets reach those targets;
  7. `aggregate`            SparkSubmitOperator running jobs/aggregate_dataset.py on the dataset;
  8. `check_result`         exactly once, checked from the data itself: per partition the rows' Kafka
                            offsets are distinct and contiguous, start at the seed and reach the target.

The sink always writes the kafka_topic/kafka_partition/kafka_offset columns (the check needs them).
The check assumes a fresh dataset `path` and a topic without offset gaps (no transactions, no compaction).

Trigger it with a config, e.g.
    airflow dags trigger spark_pipeline --conf '{"topic": "orders", "seed_offsets": {"0": 150}}'

Connections: `conn_id` (type kafka_connect) is the Connect REST API, e.g.
    AIRFLOW_CONN_KAFKA_CONNECT_DEFAULT='{"conn_type": "kafka_connect", "host": "http://localhost:8083"}'
and `spark_default` gives spark-submit its master (e.g. host `local[2]`); spark-submit must be on PATH
(or SPARK_HOME set).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Param, TriggerRule, dag, task

from airflow_provider_connect.operators.connector import ConnectorCreateOperator, ConnectorResumeOperator
from airflow_provider_connect.operators.offsets import ConnectorAlterOffsetsOperator
from airflow_provider_connect.sensors.connector import SinkOffsetsSensor

JOB = str(Path(__file__).resolve().parent / "jobs" / "aggregate_dataset.py")  # resolve: DAG folders symlink it
SINK_CLASS = "runtime.connectors.spark.sink.SparkSinkConnector"
CONN = "{{ params.conn_id }}"
NAME = "{{ params.connector }}"


@dag(
    dag_id="spark_pipeline",
    description="Kafka topic -> Spark dataset (exactly once) -> PySpark aggregation",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["kafka-connect", "spark"],
    doc_md=__doc__,
    params={
        "conn_id": Param("kafka_connect_default", type="string", description="kafka_connect connection"),
        "connector": Param("orders-to-dataset", type="string", minLength=1),
        "topic": Param("orders", type="string", minLength=1),
        "path": Param("/tmp/connect-datasets/orders", type="string"),
        "format": Param("parquet", enum=["parquet", "orc", "json", "csv"]),
        "bootstrap_servers": Param(
            "127.0.0.1:9092",
            type="string",
            description="Only used to measure the topic's ends when end_offsets is empty",
        ),
        "seed_offsets": Param(
            {},
            type="object",
            description='{"<partition>": first offset to write}; partitions not listed start from the beginning',
        ),
        "end_offsets": Param(
            {}, type="object", description='{"<partition>": offset the sink must reach}; empty: the topic\'s ends now'
        ),
        "sink_overrides": Param({}, type="object", description="Extra sink config (flush.size, spark.master, ...)"),
        "output": Param("/tmp/connect-datasets/orders-aggregate.json", type="string"),
    },
)
def spark_pipeline() -> None:
    @task
    def sink_config(params: dict[str, Any] | None = None) -> dict[str, str]:
        """Fixed keys, the user's overrides, and the Kafka columns the final check needs."""
        p = params or {}
        return {
            "connector.class": SINK_CLASS,
            "topics": p["topic"],
            "path": p["path"],
            "format": p["format"],
            "tasks.max": "1",
            **{k: str(v) for k, v in p["sink_overrides"].items()},
            "kafka.metadata.columns": "true",
        }

    create_sink_stopped = ConnectorCreateOperator(
        task_id="create_sink_stopped",
        kafka_connect_conn_id=CONN,
        connector_name=NAME,
        config=sink_config(),
        initial_state="STOPPED",
        update_if_different=True,  # a re-run with other overrides replaces the config
    )

    @task.branch
    def plan_seeds(params: dict[str, Any] | None = None) -> list[str]:
        return ["seed_offsets", "resume"] if (params or {}).get("seed_offsets") else ["resume"]

    @task
    def seed_entries(params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        p = params or {}
        return [
            {"partition": {"kafka_topic": p["topic"], "kafka_partition": int(k)}, "offset": {"kafka_offset": int(v)}}
            for k, v in sorted(p["seed_offsets"].items())
        ]

    seed_offsets = ConnectorAlterOffsetsOperator(
        task_id="seed_offsets",
        kafka_connect_conn_id=CONN,
        connector_name=NAME,
        offsets=seed_entries(),
        stop_first=True,  # a re-run finds the connector running: stop it before moving its offsets
    )

    resume = ConnectorResumeOperator(
        task_id="resume",
        kafka_connect_conn_id=CONN,
        connector_name=NAME,
        trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS,  # with or without seeding
    )

    @task
    def catch_up_targets(params: dict[str, Any] | None = None) -> dict[str, int]:
        """`{"topic:partition": offset}` the sink must reach (non-empty partitions only)."""
        from airflow_provider_connect.offsets import fetch_topic_ends

        p = params or {}
        if p["end_offsets"]:
            ends = {(p["topic"], int(k)): int(v) for k, v in p["end_offsets"].items()}
        else:
            ends = fetch_topic_ends({"bootstrap.servers": p["bootstrap_servers"]}, [p["topic"]])
        return {f"{t}:{part}": off for (t, part), off in sorted(ends.items()) if off > 0}

    targets = catch_up_targets()

    wait_caught_up = SinkOffsetsSensor(
        task_id="wait_caught_up",
        kafka_connect_conn_id=CONN,
        connector_name=NAME,
        target_offsets=targets,
        poke_interval=2,
        timeout=1800,
        mode="poke",
    )

    aggregate = SparkSubmitOperator(
        task_id="aggregate",
        application=JOB,
        conn_id="spark_default",
        application_args=["{{ params.path }}", "{{ params.format }}", "{{ params.output }}"],
        env_vars={"PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", "python3")},
    )

    @task
    def check_result(targets: dict[str, int], params: dict[str, Any] | None = None) -> dict[str, Any]:
        p = params or {}
        result = json.loads(Path(p["output"]).read_text())
        problems = result_problems(result, targets, p["seed_offsets"])
        if problems:
            raise ValueError("The dataset is not exactly the topic's records: " + "; ".join(problems))
        return result

    plan = plan_seeds()
    create_sink_stopped >> plan >> [seed_offsets, resume]
    seed_offsets >> resume >> targets >> wait_caught_up >> aggregate >> check_result(targets)


def result_problems(result: dict[str, Any], targets: dict[str, int], seeds: dict[str, Any]) -> list[str]:
    """What keeps the aggregate's per-partition offset summary from being exactly once (empty: nothing).

    `targets`: {"topic:partition": offset reached}; `seeds`: {"<partition>": first offset} (others start
    at the beginning of the partition, which may have been truncated: their first offset is not checked).
    """
    summary = result.get("offsets") or {}
    seeds = {str(k): int(v) for k, v in (seeds or {}).items()}
    problems = []
    for key, target in sorted(targets.items()):
        partition = key.rpartition(":")[2]
        seed = seeds.get(partition)
        if seed is not None and seed >= target:
            continue  # nothing to write for this partition
        stats = summary.get(key)
        if not stats:
            problems.append(f"{key}: no rows, expected offsets up to {target - 1}")
            continue
        if stats["distinct_offsets"] != stats["rows"]:
            problems.append(f"{key}: {stats['rows'] - stats['distinct_offsets']} duplicate rows")
        if stats["max_offset"] - stats["min_offset"] + 1 != stats["distinct_offsets"]:
            problems.append(f"{key}: offsets {stats['min_offset']}..{stats['max_offset']} have gaps")
        if seed is not None and stats["min_offset"] != seed:
            problems.append(f"{key}: first offset {stats['min_offset']}, seeded at {seed}")
        if stats["max_offset"] < target - 1:
            problems.append(f"{key}: last offset {stats['max_offset']}, expected at least {target - 1}")
    return problems


dag = spark_pipeline()
