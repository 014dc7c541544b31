"""Kafka client metrics from librdkafka's statistics at /metrics: bytes sent by a source task's producer and
received by a sink task's consumer, and the sink's lag per partition (zero once it has read everything)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.errors.metrics_reader import sample, samples
from tests.integration.scenarios.helpers import Api, read_jsonl, sink_config, source_config
from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

RECORDS = 200


def test_producer_bytes_and_consumer_lag(bootstrap_servers: str, tmp_path: Path) -> None:
    props = {"producer.statistics.interval.ms": 500, "consumer.statistics.interval.ms": 500}
    with WorkerProcess(tmp_path / "w", bootstrap_servers, props=props) as worker:
        api = Api(worker.url)
        try:
            topic = unique("stats")
            source, sink = unique("src"), unique("snk")
            out = tmp_path / "out.jsonl"
            config = source_config(topic, **{"messages.per.task": RECORDS})
            assert api.post("/connectors", {"name": source, "config": config}).status_code == 201
            wait_for(
                lambda: (sample(api, "kafka_producer_outgoing_byte_total") or 0) > 0,
                30,
                what="producer bytes from librdkafka's statistics",
            )
            wait_for(
                lambda: (sample(api, "kafka_producer_topic_byte_total", topic=topic) or 0) > 0,
                30,
                what="producer bytes of the topic",
            )
            assert api.post("/connectors", {"name": sink, "config": sink_config(topic, out)}).status_code == 201
            wait_for(lambda: len(read_jsonl(out)) >= RECORDS, 60, what="every record in the sink")
            # the lag of every partition the sink reads (the topic was created with the broker's default count)
            wait_for(
                lambda: (
                    (lags := samples(api, "kafka_consumer_fetch_manager_records_lag", topic=topic))
                    and all(lag == 0 for lag in lags)
                ),
                30,
                what="the sink's lag at zero",
            )
            assert (sample(api, "kafka_consumer_incoming_byte_total", clientId=f"connector-consumer-{sink}-0") or 0) > 0
        finally:
            api.close()
            worker.stop()
