"""KafkaStatusStore's rule for a key this worker is writing: a record of that key read before the write's
acknowledgement may be older or newer than the write, and the acknowledged offset decides.

The write path is replaced by one that holds the delivery callback, so the order of "record read" and
"write acknowledged" is chosen by the test (with a broker it is a race; the broker-backed store tests are
in tests/integration/storage)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError

from runtime.storage.base import InstanceStatus
from runtime.storage.kafka_log import TopicSpec
from runtime.storage.kafka_status_store import KafkaStatusStore
from runtime.storage.states import State
from runtime.storage.status_codec import encode_status


class HeldWrites:
    """Stands in for the store's KafkaBasedLog: keeps each write's delivery callback for the test to call."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[..., None]] = []

    def send_async(self, key: bytes | None, value: bytes | None, callback: Callable[..., None]) -> None:
        self.callbacks.append(callback)


@pytest.fixture
def store() -> tuple[KafkaStatusStore, HeldWrites]:
    status_store = KafkaStatusStore(TopicSpec("statuses", 1, 1), {"bootstrap.servers": "127.0.0.1:1"})
    writes = HeldWrites()
    status_store.log = writes  # type: ignore[assignment]
    return status_store, writes


OWN = InstanceStatus(State.UNASSIGNED, "w0:8083", None, 4)
OTHER = InstanceStatus(State.PAUSED, "w1:8083", None, 4)
KEY = "status-connector-c"


def read(status_store: KafkaStatusStore, status: InstanceStatus, offset: int) -> None:
    status_store._on_record(KEY.encode(), encode_status(status), 0, offset)


def test_a_newer_record_read_before_the_own_write_is_acknowledged_wins(store) -> None:
    status_store, writes = store
    status_store.put_connector("c", OWN)  # in the log at offset 10, acknowledgement not yet processed
    read(status_store, OTHER, 11)  # another worker's later write
    assert status_store.connector("c") == OWN  # the acknowledgement decides
    writes.callbacks[0](None, 0, 10)
    assert status_store.connector("c") == OTHER


def test_an_older_record_read_before_the_own_write_is_acknowledged_loses(store) -> None:
    status_store, writes = store
    status_store.put_connector("c", OWN)
    read(status_store, OTHER, 9)
    writes.callbacks[0](None, 0, 10)
    assert status_store.connector("c") == OWN
    read(status_store, OWN, 10)  # the own write comes back through the reader
    read(status_store, OTHER, 8)  # and anything older than it is skipped
    assert status_store.connector("c") == OWN


def test_a_failed_own_write_gives_way_to_what_was_read(store) -> None:
    status_store, writes = store
    status_store.put_connector("c", OWN)
    read(status_store, OTHER, 3)
    writes.callbacks[0](KafkaError(KafkaError._MSG_TIMED_OUT), 0, -1)  # not written
    assert status_store.connector("c") == OTHER


LOST = InstanceStatus(State.UNASSIGNED, "w0:8083", None, 1)  # written by a worker back from a freeze
NEW_OWNER = [InstanceStatus(State.UNASSIGNED, "w1:8083", None, 2), InstanceStatus(State.RUNNING, "w1:8083", None, 2)]
TASK_KEY = "status-task-c-1"


@pytest.mark.parametrize("acknowledged_first", [False, True])
def test_every_newer_record_of_another_worker_follows_the_first_one_over_an_own_stale_write(
    store, acknowledged_first: bool
) -> None:
    # the new owner wrote UNASSIGNED then RUNNING (offsets 7, 8) while this worker was frozen; back, it
    # stops the task and writes UNASSIGNED (offset 10) under the generation it lost, before reading them
    status_store, writes = store
    status_store.put_task("c", 1, LOST)
    if acknowledged_first:
        writes.callbacks[0](None, 0, 10)
    for offset, status in zip((7, 8), NEW_OWNER):
        status_store._on_record(TASK_KEY.encode(), encode_status(status), 0, offset)
    if not acknowledged_first:
        writes.callbacks[0](None, 0, 10)
    status_store._on_record(TASK_KEY.encode(), encode_status(LOST), 0, 10)  # the own write, read back
    assert status_store.task("c", 1) == NEW_OWNER[1]
