"""PySpark job shipped beside dags/spark_pipeline.py: aggregate the dataset the Spark sink wrote.

Usage: spark-submit aggregate_dataset.py <dataset path> <format> <output json path>
Readers skip `_`-prefixed paths, so only committed batches (published files) are counted.
Output: total rows, rows and summed qty per region, distinct ids, and, when the sink wrote its Kafka
columns, per "topic:partition" the rows, distinct offsets and first/last offset (what proves exactly once).
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main(path: str, fmt: str, output: str) -> None:
    spark = SparkSession.builder.appName("aggregate-connect-dataset").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    df = reader.load(path).cache()
    total = df.count()
    by_region = {}
    if {"region", "qty"} <= set(df.columns):
        by_region = {
            row["region"]: {"rows": row["rows"], "qty": row["qty"]}
            for row in df.groupBy("region").agg(F.count("*").alias("rows"), F.sum("qty").alias("qty")).collect()
        }
    distinct_ids = df.select("id").distinct().count() if "id" in df.columns else None
    offsets = {}
    if {"kafka_topic", "kafka_partition", "kafka_offset"} <= set(df.columns):
        stats = df.groupBy("kafka_topic", "kafka_partition").agg(
            F.count("*").alias("rows"),
            F.countDistinct("kafka_offset").alias("distinct_offsets"),
            F.min("kafka_offset").alias("min_offset"),
            F.max("kafka_offset").alias("max_offset"),
        )
        offsets = {
            f"{r['kafka_topic']}:{r['kafka_partition']}": {
                k: r[k] for k in ("rows", "distinct_offsets", "min_offset", "max_offset")
            }
            for r in stats.collect()
        }
    with open(output, "w") as out:
        json.dump({"rows": total, "distinct_ids": distinct_ids, "by_region": by_region, "offsets": offsets}, out)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
