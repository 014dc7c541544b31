"""Throughput of the Spark connectors against plain Spark jobs doing the same work, in one run.

Sink: SparkSinkTask.put/flush of N schema'd records (commit log included) vs a plain Spark job
writing the same rows (createDataFrame from Python rows) to the same format.
Source: SparkSourceTask polling a dataset and producing each row with confluent-kafka vs a plain
Spark read (collect) plus a raw confluent-kafka producer loop.

    .venv/bin/python bench/spark_bench.py [--rows 200000] [--format parquet] [--bootstrap host:port]

Without --bootstrap (or $CONNECT_TEST_BOOTSTRAP_SERVERS) an embedded Tansu broker is started.
Prints rows/s and ratios (connector / plain); the goal is >= 0.8. Benchmarks never assert timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runtime.api.data import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder
from runtime.api.records import SinkRecord, TopicPartition
from runtime.api.task import OffsetStorageReader, SinkTaskContext, SourceTaskContext
from runtime.connectors.spark.session import get_spark
from runtime.connectors.spark.sink import SparkSinkTask
from runtime.connectors.spark.source import SparkSourceTask

SCHEMA = (
    SchemaBuilder.struct()
    .name("order")
    .field("id", INT64_SCHEMA)
    .field("region", STRING_SCHEMA)
    .field("qty", INT32_SCHEMA)
    .build()
)


class _SinkContext(SinkTaskContext):
    def __init__(self, config: dict[str, str]) -> None:
        self.config = config

    def configs(self) -> dict[str, str]:
        return self.config

    def offsets(self, offsets: dict[TopicPartition, int]) -> None:
        pass


class _NoOffsets(OffsetStorageReader):
    def offsets(self, partitions):
        return [(p, None) for p in partitions]


class _SourceContext(SourceTaskContext):
    def __init__(self, config: dict[str, str]) -> None:
        self.config = config

    def configs(self) -> dict[str, str]:
        return self.config

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _NoOffsets()


def rows(n: int) -> list[dict]:
    return [{"id": i, "region": ("eu", "us", "apac")[i % 3], "qty": i % 11} for i in range(n)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_sink(spark, n: int, fmt: str, flush_size: int, workdir: Path) -> tuple[float, float]:
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    data = rows(n)
    records = [SinkRecord("orders", i % 4, None, v, i // 4, value_schema=SCHEMA) for i, v in enumerate(data)]
    spark_schema = StructType(
        [StructField("id", LongType()), StructField("region", StringType()), StructField("qty", IntegerType())]
    )

    def plain() -> None:  # what a user would write without the connector, batch for batch
        for start in range(0, n, flush_size):
            chunk = [(r["id"], r["region"], r["qty"]) for r in data[start : start + flush_size]]
            spark.createDataFrame(chunk, spark_schema).write.mode("append").format(fmt).save(str(workdir / "plain"))

    def connector() -> None:
        config = {
            "name": "bench",
            "path": str(workdir / "sink"),
            "format": fmt,
            "flush.size": str(flush_size),
            "flush.interval.ms": "3600000",
        }
        task = SparkSinkTask()
        task.initialize(_SinkContext(config))
        task.start(config)
        task.open([TopicPartition("orders", p) for p in range(4)])
        for start in range(0, n, 2000):  # the runtime hands over poll-sized batches
            task.put(records[start : start + 2000])
        task.flush({})

    plain()  # warm up the JVM and code paths once, then measure both
    shutil.rmtree(workdir / "plain")
    return timed(plain), timed(connector)


def bench_source(spark, n: int, fmt: str, bootstrap: str, workdir: Path) -> tuple[float, float]:
    from confluent_kafka import Producer

    dataset = workdir / "source"
    spark.createDataFrame(rows(n)).repartition(8).write.format(fmt).save(str(dataset))

    def produce_all(values) -> None:
        producer = Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 20, "queue.buffering.max.messages": 1_000_000}
        )
        for value in values:
            while True:
                try:
                    producer.produce("bench-source", json.dumps(value).encode())
                    break
                except BufferError:
                    producer.poll(0.05)
        producer.flush(120)

    def plain() -> None:
        reader = spark.read.format(fmt)
        produce_all(r.asDict() for r in reader.load(str(dataset)).collect())

    def connector() -> None:
        config = {
            "name": "bench-src",
            "path": str(dataset),
            "format": fmt,
            "topic": "bench-source",
            "batch.size": "5000",
            "poll.interval.ms": "0",
        }
        task = SparkSourceTask()
        task.initialize(_SourceContext(config))
        task.start(config)

        def values():
            while batch := task.poll():
                for record in batch:
                    yield record.value

        produce_all(values())

    return timed(plain), timed(connector)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--format", default="parquet")
    parser.add_argument("--flush-size", type=int, default=50_000)
    parser.add_argument("--bootstrap", default=os.environ.get("CONNECT_TEST_BOOTSTRAP_SERVERS"))
    parser.add_argument("--skip-source", action="store_true")
    args = parser.parse_args()

    spark = get_spark({"spark.master": "local[*]", "spark.log.level": "ERROR"})
    workdir = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    broker = None
    try:
        plain_s, conn_s = bench_sink(spark, args.rows, args.format, args.flush_size, workdir)
        print(
            f"sink   {args.format}: plain Spark {args.rows / plain_s:>10,.0f} rows/s | "
            f"SparkSinkConnector {args.rows / conn_s:>10,.0f} rows/s | ratio {plain_s / conn_s:.2f}"
        )
        if not args.skip_source:
            bootstrap = args.bootstrap
            if not bootstrap:
                from runtime.embedded_broker import EmbeddedBroker

                broker = EmbeddedBroker().start()
                bootstrap = broker.bootstrap_servers
            plain_s, conn_s = bench_source(spark, args.rows, args.format, bootstrap, workdir)
            print(
                f"source {args.format}: plain Spark+producer {args.rows / plain_s:>10,.0f} rows/s | "
                f"SparkSourceConnector {args.rows / conn_s:>10,.0f} rows/s | ratio {plain_s / conn_s:.2f}"
            )
    finally:
        if broker is not None:
            broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
