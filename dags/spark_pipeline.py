"""Kafka topic -> SparkSinkConnector dataset -> PySpark aggregation, driven by Airflow.

Steps: create the sink STOPPED, seed its offsets, resume it, wait until its committed offsets reach the
end of the topic, run the aggregation job with spark-submit, check the result.

The REST calls are plain httpx in @task functions for now; they should switch to the operators and
sensors of airflow_provider_connect once that package lands. spark-submit must be on PATH (or
SPARK_HOME set); the `spark_default` connection gives the master (e.g. host `local[2]`).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Param, dag, task

JOB = str(Path(__file__).parent / "jobs" / "aggregate_dataset.py")
SINK_CLASS = "runtime.connectors.spark.sink.SparkSinkConnector"


def _client(url: str):  # noqa: ANN202
    import httpx

    return httpx.Client(base_url=url, timeout=60)


def _check(response: Any, *ok: int) -> Any:
    if response.status_code not in ok:
        raise RuntimeError(f"{response.request.method} {response.request.url} -> {response.status_code}: {response.text}")
    return response


@dag(
    dag_id="spark_pipeline",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["kafka-connect", "spark"],
    params={
        "connect_url": Param("http://127.0.0.1:8083", type="string"),
        "connector": Param("orders-to-dataset", type="string"),
        "topic": Param("orders", type="string"),
        "path": Param("/tmp/connect-datasets/orders", type="string"),
        "format": Param("parquet", enum=["parquet", "orc", "json", "csv"]),
        "bootstrap_servers": Param("127.0.0.1:9092", type="string"),
        # {"<partition>": <first offset to write>}; partitions not listed start from the beginning.
        "seed_offsets": Param({}, type="object"),
        "sink_overrides": Param({}, type="object"),
        "output": Param("/tmp/connect-datasets/orders-aggregate.json", type="string"),
        "catch_up_timeout_s": Param(600, type="integer"),
    },
)
def spark_pipeline() -> None:
    @task
    def create_sink_stopped(params: dict[str, Any] | None = None) -> str:
        p = params or {}
        config = {"connector.class": SINK_CLASS, "topics": p["topic"], "path": p["path"], "format": p["format"],
                  "tasks.max": "1", **{k: str(v) for k, v in p["sink_overrides"].items()}}
        with _client(p["connect_url"]) as client:
            response = client.post("/connectors", json={"name": p["connector"], "config": config,
                                                        "initial_state": "STOPPED"})
            if response.status_code == 409:  # re-run: update it and make sure it is stopped
                _check(client.put(f"/connectors/{p['connector']}/config", json=config), 200, 201)
                _check(client.put(f"/connectors/{p['connector']}/stop"), 204)
            else:
                _check(response, 201)
        return p["connector"]

    @task
    def seed_offsets(connector: str, params: dict[str, Any] | None = None) -> dict[str, int]:
        p = params or {}
        seeds = {str(k): int(v) for k, v in p["seed_offsets"].items()}
        if not seeds:
            return {}
        body = {"offsets": [{"partition": {"kafka_topic": p["topic"], "kafka_partition": int(k)},
                             "offset": {"kafka_offset": v}} for k, v in seeds.items()]}
        with _client(p["connect_url"]) as client:
            deadline = time.monotonic() + 120
            while True:  # 500 "can be safely retried" while stopped tasks leave the consumer group
                response = client.patch(f"/connectors/{connector}/offsets", json=body)
                if response.status_code == 200 or time.monotonic() > deadline:
                    break
                time.sleep(2)
            _check(response, 200)
        return seeds

    @task
    def resume(connector: str, seeds: dict[str, int], params: dict[str, Any] | None = None) -> None:
        with _client((params or {})["connect_url"]) as client:
            _check(client.put(f"/connectors/{connector}/resume"), 202)

    @task
    def wait_caught_up(connector: str, params: dict[str, Any] | None = None) -> dict[str, int]:
        """Done when every partition's committed offset reached the topic's end (its high watermark)."""
        from confluent_kafka import Consumer, TopicPartition

        p = params or {}
        consumer = Consumer({"bootstrap.servers": p["bootstrap_servers"], "group.id": f"{connector}-probe"})
        try:
            metadata = consumer.list_topics(p["topic"], timeout=30).topics[p["topic"]]
            ends = {str(pid): consumer.get_watermark_offsets(TopicPartition(p["topic"], pid), timeout=30)[1]
                    for pid in metadata.partitions}
        finally:
            consumer.close()
        deadline = time.monotonic() + int(p["catch_up_timeout_s"])
        with _client(p["connect_url"]) as client:
            while True:
                entries = _check(client.get(f"/connectors/{connector}/offsets"), 200).json()["offsets"]
                committed = {str(e["partition"]["kafka_partition"]): e["offset"]["kafka_offset"] for e in entries}
                if all(committed.get(k, 0) >= end for k, end in ends.items() if end > 0):
                    return committed
                if time.monotonic() > deadline:
                    raise TimeoutError(f"sink {connector} at {committed}, topic ends at {ends}")
                time.sleep(2)

    aggregate = SparkSubmitOperator(
        task_id="aggregate",
        application=JOB,
        conn_id="spark_default",
        application_args=["{{ params.path }}", "{{ params.format }}", "{{ params.output }}"],
        env_vars={"PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", "python3")},
    )

    @task
    def check_result(committed: dict[str, int], seeds: dict[str, int], params: dict[str, Any] | None = None) -> dict:
        """Exactly once: the dataset holds one row per record between the seeded and committed offsets."""
        p = params or {}
        result = json.loads(Path(p["output"]).read_text())
        expected = sum(off - seeds.get(k, 0) for k, off in committed.items())
        if result["rows"] != expected:
            raise ValueError(f"dataset has {result['rows']} rows, expected {expected} (committed {committed}, seeds {seeds})")
        if result["distinct_ids"] is not None and result["distinct_ids"] != result["rows"]:
            raise ValueError(f"duplicate rows: {result['rows']} rows but {result['distinct_ids']} distinct ids")
        return result

    connector = create_sink_stopped()
    seeds = seed_offsets(connector)
    resumed = resume(connector, seeds)
    committed = wait_caught_up(connector)
    resumed >> committed >> aggregate
    aggregate >> check_result(committed, seeds)


spark_pipeline_dag = spark_pipeline()
