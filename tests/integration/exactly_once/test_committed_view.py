"""The committed-view verifier (tests/support/committed.py) against the broker: committed, aborted, fenced,
open and plain records on one partition, read as a read_committed consumer of Apache Kafka reads them."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from tests.support.broker import unique
from tests.support.committed import committed_records

from .conftest import create_topic


def values(bootstrap: str, topic: str, timeout_s: float = 30.0) -> list[bytes | None]:
    return [r.value for r in committed_records(bootstrap, topic, timeout_s=timeout_s)]


def test_the_committed_view_keeps_committed_and_plain_records_and_drops_aborted_ones(bootstrap_servers: str) -> None:
    topic = create_topic(bootstrap_servers, unique("view"))
    tid = unique("view-tx")
    first = Producer({"bootstrap.servers": bootstrap_servers, "transactional.id": tid})
    first.init_transactions(30)
    first.begin_transaction()
    first.produce(topic, b"committed")
    first.commit_transaction(30)
    first.begin_transaction()
    first.produce(topic, b"aborted")
    assert first.flush(30) == 0  # on the broker before the abort
    first.abort_transaction(30)
    first.begin_transaction()
    first.produce(topic, b"fenced")
    assert first.flush(30) == 0
    second = Producer({"bootstrap.servers": bootstrap_servers, "transactional.id": tid})
    second.init_transactions(30)  # fences the first: its open transaction is aborted
    plain = Producer({"bootstrap.servers": bootstrap_servers})
    plain.produce(topic, b"plain")
    assert plain.flush(30) == 0
    assert values(bootstrap_servers, topic) == [b"committed", b"plain"]

    # an open transaction: the view stops before it (and waits for it), as the consumer's last stable offset
    second.begin_transaction()
    second.produce(topic, b"pending")
    assert second.flush(30) == 0
    plain.produce(topic, b"after the pending one")
    assert plain.flush(30) == 0
    with pytest.raises(AssertionError, match="Timed out after"):
        values(bootstrap_servers, topic, timeout_s=1.0)
    second.commit_transaction(30)
    assert values(bootstrap_servers, topic) == [b"committed", b"plain", b"pending", b"after the pending one"]
