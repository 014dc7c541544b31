"""Small helpers for the black-box scenarios: a REST client, connector configs and Kafka checks.

Everything here talks to the worker over HTTP or to the broker with confluent_kafka; nothing imports
the runtime, so the tests stay black-box.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.worker import wait_for

SOURCE = "runtime.connectors.testing.SequenceSourceConnector"
SINK = "runtime.connectors.testing.RecordingSinkConnector"
FILE_SOURCE = "runtime.connectors.file.FileStreamSourceConnector"
FILE_SINK = "runtime.connectors.file.FileStreamSinkConnector"

# Section 1.3: the exact top-level keys clients with strict models expect (section 8).
STATUS_KEYS = {"name", "connector", "tasks", "type"}
INFO_KEYS = {"name", "config", "tasks", "type"}

POSSIBLE_ALTERED = (
    "The Connect framework-managed offsets for this connector have been altered successfully. However, if this "
    "connector manages offsets externally, they will need to be manually altered in the system that the "
    "connector uses."
)
POSSIBLE_RESET = POSSIBLE_ALTERED.replace("altered", "reset")
DEFINITE_ALTERED = "The offsets for this connector have been altered successfully"
DEFINITE_RESET = "The offsets for this connector have been reset successfully"


def not_stopped_message(name: str) -> str:
    return (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        f"specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    )


def source_config(topic: str, tasks: int = 1, **extra: Any) -> dict[str, str]:
    config = {"connector.class": SOURCE, "topic": topic, "tasks.max": str(tasks)}
    config.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    return config


def sink_config(topics: str, output_file: Path | str, tasks: int = 1, **extra: Any) -> dict[str, str]:
    config = {"connector.class": SINK, "topics": topics, "tasks.max": str(tasks), "output.file": str(output_file)}
    config.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    return config


class Api:
    """A thin REST client; every method returns the raw httpx.Response so tests assert codes and bodies."""

    def __init__(self, base_url: str, timeout_s: float = 30.0) -> None:
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=timeout_s)

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.request(method, path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def put(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if body is not None:
            kwargs["json"] = body
        return self.request("PUT", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if body is not None:
            kwargs["json"] = body
        return self.request("POST", path, **kwargs)

    def patch(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if body is not None:
            kwargs["json"] = body
        return self.request("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    # --- conveniences ------------------------------------------------------------------------------
    def create(
        self,
        name: str,
        config: dict[str, str],
        initial_state: str | None = None,
        initial_offsets: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "config": config}
        if initial_state is not None:
            body["initial_state"] = initial_state
        if initial_offsets is not None:
            body["initial_offsets"] = initial_offsets
        response = self.post("/connectors", body)
        assert response.status_code == 201, f"create {name}: {response.status_code} {response.text}"
        return response.json()

    def status(self, name: str) -> dict[str, Any]:
        response = self.get(f"/connectors/{name}/status")
        assert response.status_code == 200, f"status {name}: {response.status_code} {response.text}"
        return response.json()

    def offsets(self, name: str) -> list[dict[str, Any]]:
        response = self.get(f"/connectors/{name}/offsets")
        assert response.status_code == 200, f"offsets {name}: {response.status_code} {response.text}"
        return response.json()["offsets"]

    def stop(self, name: str) -> None:
        response = self.put(f"/connectors/{name}/stop")
        assert response.status_code == 204, response.text

    def resume(self, name: str) -> None:
        response = self.put(f"/connectors/{name}/resume")
        assert response.status_code == 202, response.text

    def wait_state(
        self,
        name: str,
        connector: str | None,
        tasks: int | None = None,
        task_state: str | None = "RUNNING",
        timeout_s: float = 30.0,
    ) -> dict[str, Any]:
        """Poll the status until the connector is in `connector` with exactly `tasks` tasks in `task_state`."""

        def check() -> dict[str, Any] | None:
            response = self.get(f"/connectors/{name}/status")
            if response.status_code != 200:
                return None
            body = response.json()
            if connector is not None and body["connector"]["state"] != connector:
                return None
            if tasks is not None:
                if len(body["tasks"]) != tasks:
                    return None
                if task_state is not None and any(t["state"] != task_state for t in body["tasks"]):
                    return None
            return body

        return wait_for(check, timeout_s, what=f"{name}: connector {connector}, {tasks} tasks {task_state}")

    def wait_offsets(
        self,
        name: str,
        predicate: Callable[[list[dict[str, Any]]], bool],
        timeout_s: float = 30.0,
        what: str = "offsets",
    ) -> list[dict[str, Any]]:
        def check() -> list[dict[str, Any]] | None:
            response = self.get(f"/connectors/{name}/offsets")
            if response.status_code != 200:
                return None
            offsets = response.json()["offsets"]
            return offsets if predicate(offsets) else None

        return wait_for(check, timeout_s, what=f"{name}: {what}")

    def alter_offsets_retrying(
        self, name: str, body: Any, method: str = "PATCH", timeout_s: float = 30.0
    ) -> httpx.Response:
        """Sink offset changes may answer a retriable 500 while the group's members leave (scenario 56)."""

        def answer() -> httpx.Response | None:
            kwargs = {"json": body} if body is not None else {}
            response = self.request(method, f"/connectors/{name}/offsets", **kwargs)
            retriable = response.status_code == 500 and "can be safely retried" in response.text
            return None if retriable else response

        return wait_for(answer, timeout_s, 0.5, what=f"{method} /connectors/{name}/offsets not to be refused")


def assert_error(response: httpx.Response, status: int, contains: str | None = None) -> dict[str, Any]:
    """Every error is `{"error_code", "message"}` with a JSON content type (section 0)."""
    assert response.status_code == status, f"expected {status}, got {response.status_code}: {response.text}"
    assert response.headers.get("content-type", "").startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"error_code", "message"}, body
    assert body["error_code"] == status, body
    if contains is not None:
        assert contains in (body["message"] or ""), f"{contains!r} not in {body['message']!r}"
    return body


def source_offsets(offsets: list[dict[str, Any]]) -> dict[str, Any]:
    """`{task.id: saved}` from a source connector's offsets listing."""
    return {entry["partition"]["task.id"]: (entry["offset"] or {}).get("saved") for entry in offsets}


def sink_offsets(offsets: list[dict[str, Any]]) -> dict[tuple[str, int], Any]:
    return {
        (entry["partition"]["kafka_topic"], int(entry["partition"]["kafka_partition"])): (entry["offset"] or {}).get(
            "kafka_offset"
        )
        for entry in offsets
    }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            # a line still being written by the sink; the next poll sees it whole
            break
    return records


class Kafka:
    """Direct broker access with confluent_kafka, to create topics, produce and read back records."""

    def __init__(self, bootstrap_servers: str) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.admin = AdminClient({"bootstrap.servers": bootstrap_servers})

    def create_topic(self, topic: str, partitions: int = 1) -> str:
        futures = self.admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
        futures[topic].result(30)
        wait_for(lambda: self._partition_count(topic) == partitions, 30, what=f"topic {topic} metadata")
        return topic

    def _partition_count(self, topic: str) -> int:
        meta = self.admin.list_topics(topic, timeout=5)
        return len(meta.topics[topic].partitions) if topic in meta.topics and not meta.topics[topic].error else 0

    def produce(self, topic: str, values: list[Any], partition: int | None = None, key: str | None = None) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap_servers, "linger.ms": 5})
        for value in values:
            payload = json.dumps(value).encode()
            kwargs: dict[str, Any] = {"value": payload}
            if key is not None:
                kwargs["key"] = json.dumps(key).encode()
            if partition is not None:
                kwargs["partition"] = partition
            producer.produce(topic, **kwargs)
        assert producer.flush(30) == 0, "records not delivered"

    def read_all(self, topic: str, timeout_s: float = 30.0) -> list[tuple[int, int, bytes | None, bytes | None]]:
        """Every record now in `topic` (partition, offset, key, value): write a marker per partition and read
        until each comes back, since Tansu's high watermark cannot be trusted."""
        partitions = self._partition_count(topic)
        marker = f"marker-{uuid.uuid4().hex}".encode()
        producer = Producer({"bootstrap.servers": self.bootstrap_servers})
        for p in range(partitions):
            producer.produce(topic, value=marker, key=b"__marker__", partition=p)
        assert producer.flush(30) == 0
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        records: list[tuple[int, int, bytes | None, bytes | None]] = []
        pending = set(range(partitions))
        deadline = time.monotonic() + timeout_s
        try:
            while pending and time.monotonic() < deadline:
                for msg in consumer.consume(500, 0.5):
                    if msg.error():
                        continue
                    if msg.value() == marker:
                        pending.discard(msg.partition())
                    elif msg.key() != b"__marker__":
                        records.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
        finally:
            consumer.close()
        assert not pending, f"markers of partitions {pending} of {topic} not read back in {timeout_s}s"
        return records

    def group_offsets(self, group: str) -> dict[tuple[str, int], int]:
        from confluent_kafka import ConsumerGroupTopicPartitions

        futures = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
        result = futures[group].result(30)
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def values_by_key(records: list[tuple[int, int, bytes | None, bytes | None]]) -> dict[str, list[dict[str, Any]]]:
    """Group SequenceSource records (JSON converter, schemas possibly enabled) by their task key."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for _, _, key, value in records:
        k = json.loads(key) if key else None
        v = json.loads(value) if value else None
        if isinstance(k, dict) and "payload" in k:
            k = k["payload"]
        if isinstance(v, dict) and "payload" in v and "schema" in v:
            v = v["payload"]
        grouped.setdefault(str(k), []).append(v)
    return grouped
