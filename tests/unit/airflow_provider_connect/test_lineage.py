"""OpenLineage datasets of connectors: Kafka topics in OpenLineage's Kafka naming, files, Spark datasets."""

from __future__ import annotations

from dataclasses import replace

from airflow_provider_connect.lineage import connector_datasets
from airflow_provider_connect.operators.connector import ConnectorResumeOperator
from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator


def test_source_reads_its_file_and_writes_its_topic():
    config = {
        "connector.class": "FileStreamSource",
        "file": "/data/in.txt",
        "topic": "lines",
        "producer.override.bootstrap.servers": "SASL_SSL://k1:9093,k2:9093",
    }
    assert connector_datasets(config, [], None) == ([("file", "/data/in.txt")], [("kafka://k1:9093", "lines")])


def test_sink_reads_its_topics_and_writes_its_dataset():
    config = {"connector.class": "SparkSinkConnector", "topics": "a, b", "path": "file:///lake/orders"}
    assert connector_datasets(config, ["c"], "broker:9092") == (
        [("kafka://broker:9092", "a"), ("kafka://broker:9092", "b"), ("kafka://broker:9092", "c")],
        [("file", "/lake/orders")],
    )


def test_without_a_known_kafka_cluster_topics_are_left_out():
    assert connector_datasets({"topic": "x", "file": "/f"}, [], None) == ([("file", "/f")], [])


def test_operators_report_the_lineage_of_their_connector(fake):
    fake.add("c", {"connector.class": "FileStreamSource", "file": "/in.txt", "topic": "t"})
    operator = ConnectorResumeOperator(task_id="x", connector_name="c")
    operator.hook.__dict__["settings"] = replace(operator.hook.settings, kafka_bootstrap_servers="b1:9092,b2:9092")
    lineage = operator.get_openlineage_facets_on_complete(None)
    assert [(d.namespace, d.name) for d in lineage.inputs] == [("file", "/in.txt")]
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("kafka://b1:9092", "t")]
    gone = ConnectorResumeOperator(task_id="y", connector_name="missing").get_openlineage_facets_on_complete(None)
    assert gone.inputs == [] and gone.outputs == []


def test_a_migration_reports_the_connector_on_the_target(fake, fake_target):
    fake_target.add(
        "c2",
        {
            "connector.class": "FileStreamSink",
            "topics": "orders",
            "file": "/out.txt",
            "consumer.override.bootstrap.servers": "k:9092",
        },
    )
    operator = ConnectorMigrateOperator(
        task_id="m", connector_name="c", target_connector_name="c2", source_conn_id="source", target_conn_id="target"
    )
    lineage = operator.get_openlineage_facets_on_complete(None)
    assert [(d.namespace, d.name) for d in lineage.inputs] == [("kafka://k:9092", "orders")]
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("file", "/out.txt")]
