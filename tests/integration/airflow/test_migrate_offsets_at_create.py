"""The migration operator between the reference Apache Kafka Connect 3.9 and this runtime, both ways.

A FileStreamSource (both runtimes ship it; its offsets are byte positions in the file, which agree for
ASCII) runs on the reference, moves to our worker, then back, while lines keep being appended to its file:
the topic ends up with every line exactly once and in order. To our worker the offsets go in the create
(KIP-995); the reference refuses `initial_offsets` (500 `Unrecognized field`, nothing created), so the way
back is KIP-980's recipe: created STOPPED, offsets PATCHed, resumed. The operator finds out which from the
answers; nothing tells it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator
from tests.integration.scenarios.helpers import Kafka
from tests.support.broker import unique
from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.timeout(300)]

STRINGS = "org.apache.kafka.connect.storage.StringConverter"


@pytest.fixture(scope="module")
def ours(tmp_path_factory, bootstrap_servers) -> Iterator[str]:
    worker = WorkerProcess(tmp_path_factory.mktemp("migrate-ours"), bootstrap_servers).start()
    yield worker.url
    worker.stop()


@pytest.fixture(scope="module")
def oracle(tmp_path_factory, bootstrap_servers) -> Iterator[str]:
    process = OracleProcess(
        tmp_path_factory.mktemp("migrate-oracle"),
        bootstrap_servers,
        tool=require_oracle(),
        java_options=FAST_START_JAVA,
    ).start()
    yield process.url
    process.kill()


def test_the_reference_refuses_initial_offsets_and_creates_nothing(oracle: str, tmp_path: Path) -> None:
    name, file = unique("refused"), tmp_path / "in.txt"
    body = {
        "name": name,
        "config": {"connector.class": "FileStreamSource", "file": str(file), "topic": unique("t"), "tasks.max": "1"},
        "initial_offsets": [{"partition": {"filename": str(file)}, "offset": {"position": 0}}],
    }
    answer = httpx.post(f"{oracle}/connectors", json=body, timeout=30)
    assert answer.status_code == 500, answer.text
    assert 'Unrecognized field "initial_offsets"' in answer.json()["message"]
    assert httpx.get(f"{oracle}/connectors/{name}", timeout=30).status_code == 404


def test_a_running_source_moves_to_us_and_back_without_a_gap(
    oracle: str, ours: str, bootstrap_servers: str, tmp_path: Path, monkeypatch
) -> None:
    for conn_id, url in (("reference", oracle), ("ours", ours)):
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps({"conn_type": "kafka_connect", "host": url}))
    name, topic, file = unique("moving"), unique("moving"), tmp_path / "in.txt"
    kafka = Kafka(bootstrap_servers)
    kafka.create_topic(topic)
    lines: list[str] = []

    def append(count: int) -> None:
        new = [f"line {len(lines) + i:03d}" for i in range(count)]
        with file.open("a", encoding="ascii") as handle:
            handle.write("".join(f"{line}\n" for line in new))
        lines.extend(new)

    def read_to_end(url: str) -> None:
        end = file.stat().st_size

        def position() -> int | None:
            offsets = httpx.get(f"{url}/connectors/{name}/offsets", timeout=30).json().get("offsets") or []
            return offsets[0]["offset"]["position"] if offsets else None

        wait_for(lambda: position() == end, 60, 0.2, f"{name} on {url} to read to byte {end}")

    def migrate(source: str, target: str) -> list[str]:
        operator = ConnectorMigrateOperator(
            task_id="migrate", connector_name=name, source_conn_id=source, target_conn_id=target, poll_interval=0.2
        )
        return operator.execute({})["steps"]

    append(10)
    config = {"connector.class": "FileStreamSource", "file": str(file), "topic": topic, "tasks.max": "1"}
    config |= {"key.converter": STRINGS, "value.converter": STRINGS}
    assert httpx.post(f"{oracle}/connectors", json={"name": name, "config": config}, timeout=30).status_code == 201
    read_to_end(oracle)

    there = migrate("reference", "ours")
    assert "created on target with its offsets (KIP-995)" in there and "altered offsets on target" not in there
    append(10)
    read_to_end(ours)

    back = migrate("ours", "reference")
    assert {"created stopped on target", "altered offsets on target", "resumed on target"} <= set(back)
    assert name not in httpx.get(f"{ours}/connectors", timeout=30).json()
    append(10)
    read_to_end(oracle)

    def values() -> list[str] | None:
        found = [value.decode() for _, _, _, value in kafka.read_all(topic) if value is not None]
        return found if len(found) >= len(lines) else None

    assert wait_for(values, 30, 0.5, f"{len(lines)} records in {topic}") == lines  # each line once, in order
