"""Exactly-once source tasks run through the real runner (`ExactlyOnceSourceTaskRunner`) against the test broker:
a SequenceSource task, JsonConverters, and an offsets topic read read_committed (`KafkaOffsetStore`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.api.task import SourceTask
from runtime.api.transactions import TransactionBoundary
from runtime.connectors.testing import SequenceSourceTask
from runtime.converters.json import JsonConverter
from runtime.plugins import Plugins
from runtime.storage.base import InstanceStatus, StatusStore
from runtime.storage.connector_offset_store import ConnectorOffsetStore
from runtime.storage.kafka_log import TopicSpec
from runtime.storage.kafka_offset_store import KafkaOffsetStore
from runtime.storage.offset_codec import decode_value, encode_key
from runtime.storage.states import State, TargetState
from runtime.worker.clients import PRODUCER_DEFAULTS
from runtime.worker.exactly_once import ExactlyOnceTask
from runtime.worker.source_runner import SourceTaskRunner
from runtime.worker.transactional_source import ExactlyOnceSourceTaskRunner
from runtime.worker.transform_chain import TransformationChain
from tests.support.broker import unique
from tests.support.committed import committed_records

pytestmark = pytest.mark.integration


class Statuses(StatusStore):
    """Statuses in memory, with a condition to wait on."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = threading.Condition()

    def put_task(self, name: str, index: int, status: InstanceStatus) -> None:
        with self.changed:
            super().put_task(name, index, status)
            self.changed.notify_all()

    def wait_for(self, name: str, index: int, state: State, timeout_s: float = 30.0) -> InstanceStatus:
        with self.changed:
            assert self.changed.wait_for(
                lambda: (s := self.task(name, index)) is not None and s.state is state, timeout_s
            ), f"task {name}-{index} is {self.task(name, index)}, not {state}"
            status = self.task(name, index)
            assert status is not None
            return status


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)  # the poll interval: what is waited on is `condition`


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept while the request runs
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    return topic


def seqnos(bootstrap: str, topic: str) -> list[tuple[int, int]]:
    """(task, seqno) of every committed SequenceSource record of `topic`, in log order."""
    values = [orjson.loads(r.value)["payload"] for r in committed_records(bootstrap, topic)]
    return [(v["task"], v["seqno"]) for v in values]


class Harness:
    """One connector's exactly-once tasks on one data topic and one offsets topic."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.connector = unique("eos")
        self.topic = create_topic(bootstrap, unique("eos-data"))
        self.offsets_topic = unique("eos-offsets")
        self.statuses = Statuses()
        self.store = KafkaOffsetStore(
            TopicSpec(self.offsets_topic, 3, 1, "offset.storage.topic"),
            {"bootstrap.servers": bootstrap, "group.id": unique("eos-worker")},
            consumer_config={"isolation.level": "read_committed"},
        )
        self.store.start()
        self.runners: list[SourceTaskRunner] = []

    def transactional_id(self, index: int) -> str:
        return f"group-{self.connector}-{index}"

    def runner(
        self,
        index: int = 0,
        boundary: TransactionBoundary = TransactionBoundary.POLL,
        interval_s: float = 60.0,
        task_class: type[SourceTask] = SequenceSourceTask,
        clock: Callable[[], float] = time.monotonic,
        statuses: StatusStore | None = None,
        offsets_topics: tuple[str, ...] | None = None,
        exactly_once: bool = True,
        still_current: Callable[[], None] | None = None,
        on_fenced: Callable[[], None] | None = None,
        pipeline_commits: bool = True,
        **settings: str,
    ) -> Any:
        """A runner of task `index` (not started); `settings` go to the task and connector configs."""
        config = {"name": self.connector, "topic": self.topic, "task.index": str(index), **settings}

        def converter(is_key: bool) -> JsonConverter:
            c = JsonConverter()
            c.configure({"schemas.enable": "true"}, is_key)
            return c

        common: dict[str, Any] = dict(
            transforms=TransformationChain(config, Plugins().resolve),
            producer_config={"bootstrap.servers": self.bootstrap, **PRODUCER_DEFAULTS},
            offset_store=ConnectorOffsetStore.worker_only(self.store),
            key_converter=converter(True),
            value_converter=converter(False),
            header_converter=None,
            flush_interval_ms=60000,
            flush_timeout_ms=5000,
        )
        args = (self.connector, index, task_class, config, dict(config), TargetState.STARTED)
        if exactly_once:
            topics = offsets_topics or (self.offsets_topic,)
            transactions = ExactlyOnceTask(
                self.transactional_id(index),
                boundary,
                interval_s,
                topics,
                still_current=still_current,
                on_fenced=on_fenced,
            )
            runner: SourceTaskRunner = ExactlyOnceSourceTaskRunner(
                *args,
                statuses or self.statuses,
                "worker-1",
                exactly_once=transactions,
                clock=clock,
                pipeline_commits=pipeline_commits,
                **common,
            )
        else:
            runner = SourceTaskRunner(*args, statuses or self.statuses, "worker-1", **common)
        self.runners.append(runner)
        return runner

    def start(self, runner: Any) -> Any:
        runner.start(wait_s=30)
        runner.statuses.wait_for(runner.connector, runner.index, State.RUNNING)
        return runner

    def stop(self, runner: SourceTaskRunner) -> None:
        runner.stop()
        assert runner.await_stop(30), f"task {runner.id} did not stop"

    def committed_offset(self, index: int = 0) -> dict[str, Any] | None:
        key = encode_key(self.connector, {"task.id": f"{self.connector}-{index}"})
        return decode_value(self.store.get([key])[key])

    def close(self) -> None:
        for runner in self.runners:
            runner.stop()
        for runner in self.runners:
            runner.await_stop(30)
        self.store.stop()


@pytest.fixture
def harness(bootstrap_servers: str) -> Iterator[Harness]:
    h = Harness(bootstrap_servers)
    try:
        yield h
    finally:
        h.close()
