"""KIP-875's offset changes of a STOPPED source connector on an exactly-once worker: a round of zombie
fencing first (a producer of its earlier tasks still in a transaction cannot commit it afterwards), then the
offsets written in one transaction under `<group.id>-<connector>`; the resumed connector continues exactly
from them. A create's offsets (KIP-995) are written the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import KafkaError, KafkaException, Producer

from runtime.storage.offset_codec import decode_key
from tests.integration.scenarios.helpers import source_offsets
from tests.support.cluster import Cluster
from tests.support.committed import committed_records, committed_transactions

from .faults.workload import Sequence

pytestmark = pytest.mark.integration

TASKS = 2


def cannot_commit(error: KafkaException) -> bool:
    """A fenced producer's commit: PRODUCER_FENCED (fatal) on Apache Kafka; Tansu never answers the EndTxn of
    a fenced epoch, so the commit times out (and so on each retry) and the transaction stays uncommitted."""
    kafka_error = error.args[0]
    return kafka_error.fatal() or kafka_error.code() == KafkaError._TIMED_OUT


def zombie(bootstrap: str, transactional_id: str, topic: str, partition: int) -> Producer:
    """A producer of an earlier task generation, in the middle of a transaction."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b'{"zombie": true}', partition=partition)
    assert producer.flush(30) == 0
    return producer


def first_seqnos_after(bootstrap: str, seq: Sequence, task: int, count: int) -> list[int]:
    values = [orjson.loads(r.value) for r in committed_records(bootstrap, seq.topic, seq.tasks) if r.partition == task]
    return [v.get("payload", v)["seqno"] for v in values if "zombie" not in v][-count:]


def committed_offsets(bootstrap: str, cluster: Cluster, name: str) -> dict[str, Any]:
    """task.id -> the connector's latest offset (None: a tombstone) in the committed view of the worker's
    offsets topic (a key always lands in the same partition: its records there are in write order)."""
    topic = cluster.props["offset.storage.topic"]
    latest: dict[str, Any] = {}
    for record in committed_records(bootstrap, topic, cluster.props["offset.storage.partitions"]):
        key = decode_key(record.key) if record.key is not None else None
        if key is not None and key[0] == name:
            latest[key[1]["task.id"]] = None if record.value is None else orjson.loads(record.value)
    return latest


def test_offsets_of_a_stopped_exactly_once_source_are_changed_after_fencing_its_earlier_tasks(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    cluster = Cluster(tmp_path, bootstrap_servers, 1, **{"exactly.once.source.support": "enabled"}).start()
    try:
        group = cluster.props["group.id"]
        api = cluster.api(0)
        offsets_topic = (cluster.props["offset.storage.topic"], cluster.props["offset.storage.partitions"])
        seq = Sequence.create(cluster, bootstrap_servers, TASKS, **{"exactly.once.support": "required"})
        cluster.wait_state(seq.name, "RUNNING", TASKS, timeout_s=60)
        seq.wait_committed_past(cluster, {})
        assert api.put(f"/connectors/{seq.name}/stop").status_code == 204
        cluster.wait_state(seq.name, "STOPPED", 0)

        # PATCH: task 1's producer of the stopped generation is still in a transaction
        stale = zombie(bootstrap_servers, f"{group}-{seq.name}-1", seq.topic, 1)
        transactions = committed_transactions(bootstrap_servers, *offsets_topic)
        altered = {"partition": {"task.id": f"{seq.name}-0"}, "offset": {"saved": 1000}}
        response = api.patch(f"/connectors/{seq.name}/offsets", json={"offsets": [altered]})
        assert response.status_code == 200, response.text
        with pytest.raises(KafkaException) as failure:
            stale.commit_transaction(10)
        assert cannot_commit(failure.value), failure.value
        # in the worker's offsets topic (the primary: the connector has none of its own), committed
        assert committed_offsets(bootstrap_servers, cluster, seq.name)[f"{seq.name}-0"] == {"saved": 1000}
        assert committed_transactions(bootstrap_servers, *offsets_topic) == transactions + 1  # in one transaction
        assert source_offsets(api.get(f"/connectors/{seq.name}/offsets").json()["offsets"])[f"{seq.name}-0"] == 1000
        assert api.put(f"/connectors/{seq.name}/resume").status_code == 202
        cluster.wait_state(seq.name, "RUNNING", TASKS, timeout_s=60)
        seq.wait_committed_past(cluster, {0: 1001})
        resumed = first_seqnos_after(bootstrap_servers, seq, 0, 10**6)
        assert 1000 in resumed and all(s >= 1000 for s in resumed[resumed.index(1000) :])
        assert resumed[resumed.index(1000) - 1] < 1000  # task 0 went on from exactly the altered offset

        # DELETE: again with a producer of the generation just stopped in a transaction
        assert api.put(f"/connectors/{seq.name}/stop").status_code == 204
        cluster.wait_state(seq.name, "STOPPED", 0)
        stale = zombie(bootstrap_servers, f"{group}-{seq.name}-0", seq.topic, 0)
        response = api.delete(f"/connectors/{seq.name}/offsets")
        assert response.status_code == 200, response.text
        with pytest.raises(KafkaException) as failure:
            stale.commit_transaction(10)
        assert cannot_commit(failure.value), failure.value
        assert api.get(f"/connectors/{seq.name}/offsets").json() == {"offsets": []}
        assert committed_offsets(bootstrap_servers, cluster, seq.name) == {
            f"{seq.name}-{i}": None for i in range(TASKS)
        }

        # KIP-995: a source created with offsets on this worker gets them the way PATCH writes them here
        fresh = Sequence.define(bootstrap_servers, 1, **{"exactly.once.support": "required"})
        transactions = committed_transactions(bootstrap_servers, *offsets_topic)
        initial = [{"partition": {"task.id": f"{fresh.name}-0"}, "offset": {"saved": 500}}]
        body = {"name": fresh.name, "config": fresh.config, "initial_state": "STOPPED", "initial_offsets": initial}
        response = api.post("/connectors", json=body)
        assert response.status_code == 201, response.text
        assert committed_offsets(bootstrap_servers, cluster, fresh.name) == {f"{fresh.name}-0": {"saved": 500}}
        assert committed_transactions(bootstrap_servers, *offsets_topic) == transactions + 1  # in one transaction
    finally:
        cluster.stop()
