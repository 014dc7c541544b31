"""Shared pieces of the conformance scenarios: connector configs, files, status predicates."""

from __future__ import annotations

from typing import Any

from .harness import Conformance

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"

# The FileStream connectors' own config keys (ConnectorConfig keys follow them in /config answers).
SOURCE_OWN_KEYS = ("file", "topic", "batch.size")
SINK_OWN_KEYS = ("file",)


def source_config(topic: str = "<<topic>>", file: str = "<<dir>>/<<topic>>.in", **extra: Any) -> dict[str, Any]:
    return {"connector.class": SOURCE, "tasks.max": "1", "file": file, "topic": topic, **extra}


def sink_config(topics: str = "<<topic>>", file: str = "<<dir>>/<<topic>>.out", **extra: Any) -> dict[str, Any]:
    return {"connector.class": SINK, "tasks.max": "1", "file": file, "topics": topics, **extra}


def write_lines(cf: Conformance, path: str, lines: list[str]) -> None:
    """Create the same input file on every target (paths hold <<dir>>/<<token>> placeholders)."""
    for target in cf.targets:
        real = cf.path_of(target, path)
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text("".join(line + "\n" for line in lines))


def create_topic(cf: Conformance, topic: str, partitions: int = 1) -> None:
    """Create `topic` (a placeholder) on the broker for every target, so that record placement is
    deterministic (the broker's auto-created topics have several partitions)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cf.bootstrap_servers})
    names = [cf.expand(target, topic) for target in cf.targets]
    futures = admin.create_topics([NewTopic(n, num_partitions=partitions, replication_factor=1) for n in names])
    for future in futures.values():
        future.result(timeout=30)


def state_is(connector: str, tasks: list[str] | None = None):
    """Status predicate: the connector is in `connector` and the tasks (by id order) in `tasks`.

    A cluster worker that has read the status records but not yet the connector's config answers type
    "unknown": not settled yet either."""

    def check(body: Any) -> bool:
        if body["connector"]["state"] != connector or body.get("type") == "unknown":
            return False
        if tasks is None:
            return True
        return [t["state"] for t in sorted(body["tasks"], key=lambda t: t["id"])] == tasks

    return check


def only_test_connectors(body: Any) -> Any:
    """GET /connectors lists every test's connectors; keep this test's (already `<<token>>`-named)."""
    if isinstance(body, list):
        return sorted(n for n in body if isinstance(n, str) and n.startswith("<<"))
    if isinstance(body, dict):
        return {k: v for k, v in sorted(body.items()) if k.startswith("<<")}
    return body
