"""Kafka's own FileStreamSource jar, hosted by this runtime, moved to the reference 3.9 (the oracle) and back
by the provider's migration operator while lines keep being appended to its file: the offsets the hosted
Java task committed are the reference's offsets and back again, so the topic ends up with every line exactly
once, in order. (tests/integration/airflow/test_migrate_offsets_at_create.py does the same with this
runtime's Python FileStreamSource.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator
from tests.integration.scenarios.helpers import Api, Kafka
from tests.support.broker import unique
from tests.support.worker import wait_for

from .conftest import FILE_SOURCE

pytestmark = [pytest.mark.integration, pytest.mark.airflow]

STRINGS = "org.apache.kafka.connect.storage.StringConverter"


def test_the_hosted_java_source_moves_to_the_reference_and_back_without_a_gap(
    worker: Api, oracle: Api, bootstrap_servers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for conn_id, api in (("reference", oracle), ("ours", worker)):
        connection = json.dumps({"conn_type": "kafka_connect", "host": api.base_url})
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", connection)
    name, topic, file = unique("java-moving"), unique("java-moving"), tmp_path / "in.txt"
    kafka = Kafka(bootstrap_servers)
    kafka.create_topic(topic)
    lines: list[str] = []

    def append(count: int) -> None:
        new = [f"line {len(lines) + i:03d}" for i in range(count)]
        with file.open("a", encoding="ascii") as handle:  # ASCII: character and byte positions agree
            handle.write("".join(f"{line}\n" for line in new))
        lines.extend(new)

    def read_to_end(api: Api) -> None:
        end = file.stat().st_size

        def position() -> int | None:
            offsets = api.get(f"/connectors/{name}/offsets").json().get("offsets") or []
            return offsets[0]["offset"]["position"] if offsets else None

        wait_for(lambda: position() == end, 60, 0.2, f"{name} on {api.base_url} to read to byte {end}")

    def migrate(source: str, target: str) -> list[str]:
        operator = ConnectorMigrateOperator(
            task_id="migrate", connector_name=name, source_conn_id=source, target_conn_id=target, poll_interval=0.2
        )
        return operator.execute({})["steps"]

    append(10)
    config = {"connector.class": FILE_SOURCE, "file": str(file), "topic": topic, "tasks.max": "1"}
    config |= {"key.converter": STRINGS, "value.converter": STRINGS}
    assert worker.post("/connectors", {"name": name, "config": config}).status_code == 201
    read_to_end(worker)

    there = migrate("ours", "reference")  # the reference refuses KIP-995: created STOPPED, PATCHed, resumed
    assert {"created stopped on target", "altered offsets on target", "resumed on target"} <= set(there)
    assert name not in worker.get("/connectors").json()
    append(10)
    read_to_end(oracle)

    back = migrate("reference", "ours")
    assert "created on target with its offsets (KIP-995)" in back
    append(10)
    read_to_end(worker)
    assert worker.get(f"/connectors/{name}/config").json()["connector.class"] == FILE_SOURCE  # still the jar

    def values() -> list[str] | None:
        found = [value.decode() for _, _, _, value in kafka.read_all(topic) if value is not None]
        return found if len(found) >= len(lines) else None

    assert wait_for(values, 30, 0.5, f"{len(lines)} records in {topic}") == lines  # each line once, in order
