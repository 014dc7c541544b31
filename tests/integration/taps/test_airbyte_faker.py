"""The Airbyte source with a real source: airbyte-source-faker (in a virtualenv of its own, named by path) with a
fixed seed, through a real worker (task threads), broker and Schema Registry (values in Avro).

Faker with `always_updated: false` writes its `count` users once: a read from a committed state writes none.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.integration.scenarios.helpers import Api, Kafka, assert_error
from tests.support.broker import unique
from tests.support.schema_registry import SchemaRegistryServer
from tests.support.tool_venvs import SOURCE_FAKER, tool_venv
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.tool_venvs("source-faker")]

AIRBYTE = "AirbyteSourceConnector"
USERS = 10


@pytest.fixture(scope="module")
def source() -> str:
    return str(tool_venv("source-faker", SOURCE_FAKER) / "bin" / "source-faker")


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    with SchemaRegistryServer() as server:
        yield server.url


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    with WorkerProcess(tmp_path_factory.mktemp("worker"), bootstrap_servers) as proc:
        yield proc
        proc.stop()


@pytest.fixture(scope="module")
def api(worker: WorkerProcess) -> Iterator[Api]:
    client = Api(worker.url, timeout_s=180)  # a create waits for the source's spec, check and discover
    yield client
    client.close()


def faker_config(source: str, prefix: str, registry: str, **settings: Any) -> dict[str, str]:
    config = {"count": USERS, "seed": 42, "records_per_slice": 4, "always_updated": False, "parallelism": 1}
    return {
        "connector.class": AIRBYTE,
        "source": source,
        "source.config": json.dumps({**config, **settings}),
        "streams": "users,products",
        "topic.prefix": prefix,
        "poll.interval.ms": "1000",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": registry,
    }


def users(kafka: Kafka, registry: str, topic: str) -> list[dict[str, Any]]:
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": registry}))
    context = SerializationContext(topic, MessageField.VALUE)
    return [deserialize(value, context) for _, _, _, value in kafka.read_all(topic, timeout_s=60)]


def runs_ended(worker: WorkerProcess, name: str) -> int:
    return sum(
        1 for line in worker.log_path.read_text().splitlines() if f"[{name}|task-0]" in line and "run ended" in line
    )


def test_faker_streams_with_incremental_state_across_a_restart(
    source: str, registry: str, worker: WorkerProcess, api: Api, bootstrap_servers: str
) -> None:
    kafka = Kafka(bootstrap_servers)
    name, prefix = unique("faker"), unique("fk") + "."
    api.create(name, faker_config(source, prefix, registry))
    topic = prefix + "users"
    rows = wait_for(lambda: (r := users(kafka, registry, topic)) and len(r) >= USERS and r, 120, 1.0, "the users")
    assert sorted(u["id"] for u in rows) == list(range(1, USERS + 1))
    first = next(u for u in rows if u["id"] == 1)
    assert first["name"] == "Conception" and first["age"] == 48  # the seed makes the data the same every time
    assert first["created_at"].isoformat() == "2001-05-23T04:29:23+00:00"  # a Timestamp, as Avro's timestamp-millis
    assert isinstance(first["address"], dict) and "city" in first["address"]  # a nested object: a struct
    assert users(kafka, registry, prefix + "products"), "no products"

    # the users stream's state is the connector's offset
    def users_state() -> dict[str, Any] | None:
        found = [e["offset"] for e in api.offsets(name) if e["partition"] == {"stream": "users"}]
        return found[0] if found else None

    state = wait_for(lambda: (s := users_state()) and s.get("loop_offset") == USERS and s, 60, 0.5, "the users state")
    assert state["seed"] == 42

    # a restarted task reads from the committed state: its reads (two of them, to be sure) add no users
    response = api.post(f"/connectors/{name}/restart?includeTasks=true")
    assert response.status_code in (202, 204), response.text
    ended = runs_ended(worker, name)
    wait_for(lambda: runs_ended(worker, name) >= ended + 2, 120, 0.5, "two reads after the restart")
    assert len(users(kafka, registry, topic)) == USERS

    # without its offsets the connector reads every user again
    api.stop(name)
    api.wait_state(name, "STOPPED", 0, None, timeout_s=60)
    response = api.delete(f"/connectors/{name}/offsets")
    assert response.status_code == 200, response.text
    assert response.json()["message"] == "The offsets for this connector have been reset successfully"
    api.resume(name)
    rows = wait_for(lambda: (r := users(kafka, registry, topic)) and len(r) >= 2 * USERS and r, 120, 1.0, "a reread")
    assert Counter(u["id"] for u in rows) == {i: 2 for i in range(1, USERS + 1)}
    api.delete(f"/connectors/{name}")


def test_a_config_the_source_refuses_is_a_400_with_its_message(source: str, registry: str, api: Api) -> None:
    config = faker_config(source, "bad.", registry, count=-1)
    assert_error(
        api.post("/connectors", {"name": unique("faker-bad"), "config": config}),
        400,
        "-1 is less than the minimum of 1",
    )
    body = api.put(f"/connector-plugins/{AIRBYTE}/config/validate", {**config, "name": "faker-bad"}).json()
    assert body["error_count"] == 1
    [entry] = [c["value"] for c in body["configs"] if c["value"] and c["value"]["errors"]]
    assert entry["name"] == "source.config" and entry["value"] == "[hidden]"
    streams = next(c["value"] for c in body["configs"] if c["value"] and c["value"]["name"] == "streams")
    assert streams["errors"] == []
    good = api.put(
        f"/connector-plugins/{AIRBYTE}/config/validate", {**faker_config(source, "ok.", registry), "name": "ok"}
    )
    streams = next(c["value"] for c in good.json()["configs"] if c["value"] and c["value"]["name"] == "streams")
    assert sorted(streams["recommended_values"]) == ["products", "purchases", "users"]
