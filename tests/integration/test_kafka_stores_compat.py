"""The Kafka-backed stores against the reference: Kafka Connect 3.9 in distributed mode on the same topics.

One direction: the oracle creates connectors, pauses/stops them and commits source offsets; our stores then
read its config, offsets and status topics. The other: our stores write a STOPPED connector and source offsets;
the oracle, started on those topics (which our stores created), reports them over its REST API.
Runs on the Tansu broker; the oracle's distributed herder joins its group there (no members are listed by
describe-groups on Tansu, which nothing here needs).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import orjson
import pytest
from confluent_kafka import Consumer, TopicPartition

from runtime.embedded_broker import free_port
from runtime.storage import offset_codec
from runtime.storage.config_codec import ConnectorState
from runtime.storage.kafka_stores import KafkaStoreSettings
from runtime.storage.states import State, TargetState
from tests.support.broker import unique
from tests.support.cluster import group_topics
from tests.support.oracle import FAST_START_JAVA, require_oracle
from tests.support.process import ServiceProcess
from tests.support.worker import wait_for, write_properties

pytestmark = [pytest.mark.integration, pytest.mark.oracle]

TASK_CLASS = "org.apache.kafka.connect.file.FileStreamSourceTask"


def worker_props(bootstrap: str, port: int) -> dict[str, object]:
    group = unique("connect-compat")
    return {
        "bootstrap.servers": bootstrap,
        **group_topics(group),
        "listeners": f"http://127.0.0.1:{port}",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.flush.interval.ms": 500,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "plugin.discovery": "service_load",
    }


class DistributedOracle(ServiceProcess):
    """`kafka-connect-oracle distributed worker.properties` as a process of its own."""

    process_group = True  # the launcher is a shell script; its java child must get the signals too

    def __init__(self, tool: Path, workdir: Path, props: dict[str, object]) -> None:
        super().__init__(workdir / f"oracle-distributed-{free_port()}.log")
        self.tool, self.workdir, self.props = tool, workdir, props
        self.url = str(props["listeners"])

    def __enter__(self) -> DistributedOracle:
        props_file = write_properties(self.workdir / "oracle-worker.properties", self.props)
        self.launch(
            [str(self.tool), "distributed", str(props_file)],
            self.url + "/health",
            120,
            env={**os.environ, "JAVA_TOOL_OPTIONS": FAST_START_JAVA},
            poll_s=0.3,
            what="distributed oracle",
        )
        return self

    def tail(self, lines: int = 60) -> str:
        return self.log_tail(lines)

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30)


def source_config(path: Path, topic: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": str(path), "topic": topic, "tasks.max": "1"}


def test_stores_read_what_the_reference_wrote(bootstrap_servers, tmp_path):
    tool = require_oracle()
    props = worker_props(bootstrap_servers, free_port())
    paused_file, stopped_file = tmp_path / "paused.txt", tmp_path / "stopped.txt"
    paused_file.write_text("one\ntwo\nthree\n")  # 14 bytes
    stopped_file.write_text("alpha\nbeta\n")  # 11 bytes
    with DistributedOracle(tool, tmp_path, props) as oracle:
        for name, path in (("src-paused", paused_file), ("src-stopped", stopped_file)):
            body = {"name": name, "config": source_config(path, unique("compat-data"))}
            response = httpx.post(oracle.url + "/connectors", json=body, timeout=30)
            assert response.status_code == 201, response.text
        for name, position in (("src-paused", 14), ("src-stopped", 11)):
            # the reference may commit a partial position first: wait for the whole file's
            wait_for(
                lambda: (
                    [e["offset"] for e in oracle.get(f"/connectors/{name}/offsets").json()["offsets"]]
                    == [{"position": position}]
                ),
                60,
                what=f"{name} committing offsets\n{oracle.tail()}",
            )
            assert oracle.get(f"/connectors/{name}/offsets").json()["offsets"][0]["offset"] == {"position": position}
        assert httpx.put(oracle.url + "/connectors/src-paused/pause", timeout=30).status_code == 202
        assert httpx.put(oracle.url + "/connectors/src-stopped/stop", timeout=30).status_code == 204
        wait_for(
            lambda: oracle.get("/connectors/src-paused/status").json()["connector"]["state"] == "PAUSED",
            30,
            what="oracle pausing",
        )
        wait_for(
            lambda: oracle.get("/connectors/src-stopped/status").json()["connector"]["state"] == "STOPPED",
            30,
            what="oracle stopping",
        )
        oracle_worker_id = oracle.get("/connectors/src-paused/status").json()["connector"]["worker_id"]

    settings = KafkaStoreSettings.from_worker(props)
    configs, offsets, statuses = settings.config_store(), settings.offset_store(), settings.status_store()
    for store in (configs, offsets, statuses):
        store.start()
    try:
        snapshot = configs.snapshot()
        paused = snapshot.connectors["src-paused"]
        assert paused.target_state is TargetState.PAUSED
        assert {k: paused.config[k] for k in ("connector.class", "file", "name")} == {
            "connector.class": "FileStreamSource",
            "file": str(paused_file),
            "name": "src-paused",
        }
        assert len(paused.task_configs) == 1 and paused.task_configs[0]["task.class"] == TASK_CLASS
        assert paused.task_configs[0]["file"] == str(paused_file)
        stopped = snapshot.connectors["src-stopped"]
        assert stopped.target_state is TargetState.STOPPED and stopped.task_configs == []
        assert snapshot.session_key is not None and snapshot.session_key.algorithm == "HmacSHA256"

        decoded = {
            offset_codec.decode_key(k)[0]: (offset_codec.decode_key(k)[1], offset_codec.decode_value(v))
            for k, v in offsets.items()
        }
        assert decoded == {
            "src-paused": ({"filename": str(paused_file)}, {"position": 14}),
            "src-stopped": ({"filename": str(stopped_file)}, {"position": 11}),
        }
        # our key bytes for the same partition are the oracle's, so lookups by key find its offsets
        key = offset_codec.encode_key("src-paused", {"filename": str(paused_file)})
        assert offsets.get([key]) == {key: b'{"position":14}'}

        for name in ("src-paused", "src-stopped"):
            status = statuses.connector(name)
            assert status is not None and status.worker_id == oracle_worker_id and status.generation >= 1
            assert status.state in (State.PAUSED, State.STOPPED, State.UNASSIGNED)  # UNASSIGNED: oracle shut down
    finally:
        for store in (configs, offsets, statuses):
            store.stop()


def test_reference_reads_what_the_stores_wrote(bootstrap_servers, tmp_path):
    tool = require_oracle()
    props = worker_props(bootstrap_servers, free_port())
    source_file = tmp_path / "input.txt"
    source_file.write_text("skipped\nread-me\n")  # 8 bytes before "read-me"
    data_topic = unique("compat-ours")
    settings = KafkaStoreSettings.from_worker(props)
    configs, offsets = settings.config_store(), settings.offset_store()
    configs.start()
    offsets.start()
    try:  # topics created by our stores; the oracle checks them (compacted, one config partition)
        configs.save(
            "ours-src",
            ConnectorState({**source_config(source_file, data_topic), "name": "ours-src"}, TargetState.STOPPED, []),
        )
        offsets.set(
            {
                offset_codec.encode_key("ours-src", {"filename": str(source_file)}): offset_codec.encode_value(
                    {"position": 8}
                )
            }
        )
    finally:
        configs.stop()
        offsets.stop()

    with DistributedOracle(tool, tmp_path, props) as oracle:
        assert oracle.get("/connectors").json() == ["ours-src"]
        assert oracle.get("/connectors/ours-src").json()["tasks"] == []
        wait_for(
            lambda: oracle.get("/connectors/ours-src/status").json()["connector"]["state"] == "STOPPED",
            60,
            what=f"the oracle reporting ours-src STOPPED\n{oracle.tail()}",
        )
        assert oracle.get("/connectors/ours-src/status").json()["tasks"] == []
        assert oracle.get("/connectors/ours-src/offsets").json() == {
            "offsets": [{"partition": {"filename": str(source_file)}, "offset": {"position": 8}}]
        }
        # and it acts on them: resumed, the task starts reading at our offset
        assert httpx.put(oracle.url + "/connectors/ours-src/resume", timeout=30).status_code == 202
        wait_for(
            lambda: oracle.get("/connectors/ours-src/offsets").json()["offsets"][0]["offset"] == {"position": 16},
            60,
            what=f"the oracle resuming from our offset\n{oracle.tail()}",
        )
    produced = read_values(bootstrap_servers, data_topic)
    assert [orjson.loads(v)["payload"] for v in produced] == ["read-me"]  # "skipped" was before our offset


def read_values(bootstrap: str, topic: str, timeout_s: float = 15.0) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("compat-read"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.3)
            if msg is None:
                if values:
                    break
            elif not msg.error():
                values.append(msg.value())
    finally:
        consumer.close()
    return values
