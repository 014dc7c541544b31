"""A task thread ended by whatever its Kafka client raises leaves the task FAILED, never RUNNING and dead.

confluent-kafka re-raises a KafkaException thrown inside a rebalance callback as its bare KafkaError, an
object that is no BaseException (`except BaseException` does not catch it). Here a real consumer on the
broker makes a call librdkafka refuses from its assignment callback.
"""

from __future__ import annotations

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.api.task import Task
from runtime.storage.base import StatusStore
from runtime.storage.states import State, TargetState
from runtime.worker.task_runner import TaskRunner
from tests.support.broker import unique
from tests.support.worker import wait_for


class _IdleTask(Task):
    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass


class _RefusedAssignmentRunner(TaskRunner):
    """Consumes with a callback that asks for an incremental assignment in an eager group, which
    librdkafka refuses (KafkaException in the callback)."""

    def __init__(self, bootstrap: str, topic: str, statuses: StatusStore) -> None:
        super().__init__("c", 0, _IdleTask, {}, {}, TargetState.STARTED, statuses, "w")
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": unique("refused"), "session.timeout.ms": 6000}
        )
        self.topic = topic

    def initialize(self, task: Task) -> None:
        self.consumer.subscribe([self.topic], on_assign=lambda c, partitions: c.incremental_assign(partitions))

    def execute(self) -> None:
        while not self._stopping.is_set():
            self.consumer.consume(10, 0.2)

    def close_resources(self) -> None:
        self.consumer.close()


def test_a_kafka_error_raised_through_a_rebalance_callback_fails_the_task(bootstrap_servers: str) -> None:
    topic = unique("refused")
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1)])[topic].result(30)
    statuses = StatusStore()
    runner = _RefusedAssignmentRunner(bootstrap_servers, topic, statuses)
    runner.start()
    try:
        failed = wait_for(
            lambda: (s := statuses.task("c", 0)) is not None and s.state is State.FAILED and s,
            60,
            what="the task FAILED",
        )
        assert "rebalance protocol type is EAGER" in (failed.trace or "")
        assert runner.failed
    finally:
        runner.stop()
