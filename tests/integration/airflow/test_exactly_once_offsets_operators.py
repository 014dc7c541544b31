"""The provider's offsets operators against an exactly-once cluster (a distributed worker with
`exactly.once.source.support=enabled`): an exactly-once FileStreamSource, STOPPED, has its offsets altered by
ConnectorAlterOffsetsOperator while a producer of its stopped task generation is still in a transaction. The
worker fences first (that producer can no longer commit), then writes the offsets; resumed, the connector
reads the file again from exactly the altered position. Then ConnectorMigrateOperator moves it to a new name
on the same cluster (KIP-995: the offsets go in the create) and the copy continues where it stopped.
Everything is checked in the committed view of the data topic (tests/support/committed.py: on Tansu, from
the record batches' transaction markers, as its read_committed consumers still see aborted records).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import KafkaException

from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.operators.connector import ConnectorResumeOperator, ConnectorStopOperator
from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator
from airflow_provider_connect.operators.offsets import ConnectorAlterOffsetsOperator
from airflow_provider_connect.status import ConnectState
from tests.integration.distributed.test_exactly_once_offsets import cannot_commit, zombie
from tests.integration.scenarios.helpers import Kafka
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.committed import committed_records
from tests.support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.airflow, pytest.mark.timeout(240)]

CONN_ID = "exactly_once"


@pytest.fixture
def cluster(tmp_path: Path, bootstrap_servers: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path / "cluster", bootstrap_servers, 1, **{"exactly.once.source.support": "enabled"})
    cluster.start()
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps({"conn_type": "kafka_connect", "host": cluster.workers[0].url})
    )
    try:
        yield cluster
    finally:
        cluster.stop()


def test_offsets_altered_and_migrated_on_an_exactly_once_cluster(
    cluster: Cluster, bootstrap_servers: str, tmp_path: Path
) -> None:
    hook = ConnectHook(CONN_ID)
    name, moved = unique("eos-airflow"), unique("eos-moved")
    topic = Kafka(bootstrap_servers).create_topic(unique("eos-airflow"), partitions=1)
    source = tmp_path / "in.txt"
    lines: list[str] = []
    positions: list[int] = []  # positions[i]: the byte line i starts at

    def append(count: int) -> None:
        for _ in range(count):
            positions.append(source.stat().st_size if source.exists() else 0)
            lines.append(f"line {len(lines)}")
            with source.open("a") as out:
                out.write(f"{lines[-1]}\n")

    def committed_to_end(connector: str) -> None:
        end = source.stat().st_size
        wait_for(
            lambda: [o["offset"] for o in hook.get_offsets(connector)] == [{"position": end}],
            60,
            0.3,
            f"{connector} committing position {end}\n{cluster.logs()}",
        )

    def ran(operator_class: type, **kwargs: object) -> Any:
        return operator_class(task_id=unique("task"), **kwargs).execute({})

    append(5)
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": topic,
        "tasks.max": "1",
        "exactly.once.support": "required",
    }
    hook.create_connector(name, config)
    committed_to_end(name)
    ran(
        ConnectorStopOperator,
        connector_name=name,
        kafka_connect_conn_id=CONN_ID,
        wait_for_state=True,
        poll_interval=0.3,
    )

    # a producer of the stopped generation still in a transaction: the alter fences it before writing
    stale = zombie(bootstrap_servers, f"{cluster.props['group.id']}-{name}-0", topic, 0)
    partition = {"filename": str(source)}
    message = ran(
        ConnectorAlterOffsetsOperator,
        connector_name=name,
        kafka_connect_conn_id=CONN_ID,
        offsets=[{"partition": partition, "offset": {"position": positions[2]}}],
    )
    assert message == "The offsets for this connector have been altered successfully"
    with pytest.raises(KafkaException) as failure:
        stale.commit_transaction(10)
    assert cannot_commit(failure.value), failure.value
    del stale  # its client threads end now, not after the broker is gone
    assert hook.get_offsets(name) == [{"partition": partition, "offset": {"position": positions[2]}}]

    ran(
        ConnectorResumeOperator,
        connector_name=name,
        kafka_connect_conn_id=CONN_ID,
        wait_for_state=True,
        poll_interval=0.3,
    )
    committed_to_end(name)  # read again from line 2
    append(1)
    committed_to_end(name)

    # the migration's offsets step: stopped, offsets read, created under the new name with them, old deleted
    summary = ran(
        ConnectorMigrateOperator,
        connector_name=name,
        target_connector_name=moved,
        source_conn_id=CONN_ID,
        target_conn_id=CONN_ID,
        poll_interval=0.3,
    )
    assert "created on target with its offsets (KIP-995)" in summary["steps"], summary
    append(2)
    committed_to_end(moved)
    ran(
        ConnectorStopOperator,
        connector_name=moved,
        kafka_connect_conn_id=CONN_ID,
        wait_for_state=True,
        poll_interval=0.3,
    )
    assert hook.get_connector_status(moved)["connector"]["state"] == ConnectState.STOPPED.value

    values = [orjson.loads(r.value) for r in committed_records(bootstrap_servers, topic, 1)]
    seen = [v["payload"] if "payload" in v else v for v in values]  # the zombie's record, if it were there
    # lines 0-4; from the altered position, 2-4 once more, then 5; after the migration only 6 and 7
    assert seen == lines[:5] + lines[2:6] + lines[6:8]
