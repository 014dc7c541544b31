"""The dead letter queue of a sink connector (`errors.deadletterqueue.topic.name`, KIP-298).

A failed record goes to the queue as it was consumed (key, value and headers bytes), plus, with
`errors.deadletterqueue.context.headers.enable`, the reference's `__connect.errors.*` headers saying where
it came from and why it failed. The topic is created when missing, with one partition and
`errors.deadletterqueue.topic.replication.factor` replicas, as the reference does.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from ..api.errors import ConnectError
from .clients import create_client
from .counters import ErrorCounters
from .error_handling import ErrorContext, ErrorSettings, FailedRecord

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
ERROR_HEADER_ORIG_TOPIC = HEADER_PREFIX + "topic"
ERROR_HEADER_ORIG_PARTITION = HEADER_PREFIX + "partition"
ERROR_HEADER_ORIG_OFFSET = HEADER_PREFIX + "offset"
ERROR_HEADER_CONNECTOR_NAME = HEADER_PREFIX + "connector.name"
ERROR_HEADER_TASK_ID = HEADER_PREFIX + "task.id"
ERROR_HEADER_STAGE = HEADER_PREFIX + "stage"
ERROR_HEADER_EXECUTING_CLASS = HEADER_PREFIX + "class.name"
ERROR_HEADER_EXCEPTION = HEADER_PREFIX + "exception.class.name"
ERROR_HEADER_EXCEPTION_MESSAGE = HEADER_PREFIX + "exception.message"
ERROR_HEADER_EXCEPTION_STACK_TRACE = HEADER_PREFIX + "exception.stacktrace"

_ADMIN_TIMEOUT_S = 30.0


def ensure_topic(admin_config: dict[str, Any], topic: str, replication_factor: int) -> None:
    """Create the queue's topic when it does not exist (one partition, as the reference)."""
    admin = create_client(AdminClient, admin_config, "admin client of a dead letter queue")
    if topic in admin.list_topics(timeout=_ADMIN_TIMEOUT_S).topics:
        return
    future = admin.create_topics([NewTopic(topic, 1, replication_factor)])[topic]
    try:
        future.result(_ADMIN_TIMEOUT_S)
        log.info("Created dead letter queue topic %s", topic)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return
        raise ConnectError(f"Could not create dead letter queue topic '{topic}': {exc}") from exc


class DeadLetterQueueReporter:
    """Sends each failed record to the queue; `flush` waits for the broker's acknowledgements."""

    def __init__(
        self,
        settings: ErrorSettings,
        producer_config: dict[str, Any],
        admin_config: dict[str, Any],
        connector: str,
        task_index: int,
        counters: ErrorCounters,
    ) -> None:
        self.topic = settings.dlq_topic
        self.context_headers = settings.dlq_context_headers
        self.connector = connector
        self.task_index = task_index
        self.counters = counters
        ensure_topic(admin_config, self.topic, settings.dlq_replication_factor)
        config = {**producer_config, "on_delivery": self._on_delivery}
        self.producer = create_client(Producer, config, f"dead letter queue producer of {connector}-{task_index}")

    def _on_delivery(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            self.counters.deadletterqueue_produce_failures += 1
            log.error("Could not produce message to dead letter queue. topic=%s: %s", self.topic, err)

    def report(self, context: ErrorContext) -> None:
        record = context.record
        if record is None or record.topic is None:
            return  # only consumed records go to a sink's queue
        headers: list[tuple[str, str | bytes | None]] = list(record.headers or [])
        if self.context_headers:
            headers.extend(self.error_headers(context, record))
        self.counters.deadletterqueue_produce_requests += 1
        while True:
            try:
                self.producer.produce(self.topic, record.value, record.key, headers=headers)
                break
            except BufferError:
                self.producer.poll(0.05)
            except KafkaException as exc:
                self.counters.deadletterqueue_produce_failures += 1
                log.error("Could not produce message to dead letter queue. topic=%s: %s", self.topic, exc)
                return
        self.producer.poll(0)

    def error_headers(self, context: ErrorContext, record: FailedRecord) -> list[tuple[str, bytes]]:
        """Kafka's `__connect.errors.*` headers: where `record` came from and how it failed."""
        error = context.error
        values = [
            (ERROR_HEADER_ORIG_TOPIC, record.topic),
            (ERROR_HEADER_ORIG_PARTITION, str(record.partition)),
            (ERROR_HEADER_ORIG_OFFSET, str(record.offset)),
            (ERROR_HEADER_CONNECTOR_NAME, self.connector),
            (ERROR_HEADER_TASK_ID, str(self.task_index)),
            (ERROR_HEADER_STAGE, context.stage.value),
            (ERROR_HEADER_EXECUTING_CLASS, context.class_name),
            (ERROR_HEADER_EXCEPTION, f"{type(error).__module__}.{type(error).__qualname__}"),
            (ERROR_HEADER_EXCEPTION_MESSAGE, str(error) or None),
            (
                ERROR_HEADER_EXCEPTION_STACK_TRACE,
                "".join(traceback.format_exception(type(error), error, error.__traceback__)),
            ),
        ]
        return [(k, v.encode("utf-8")) for k, v in values if v is not None]

    def flush(self, timeout_s: float) -> None:
        remaining = self.producer.flush(timeout_s)
        if remaining:
            raise ConnectError(f"{remaining} records not acknowledged by the dead letter queue topic '{self.topic}'")

    def close(self) -> None:
        try:
            self.producer.flush(5.0)
        finally:
            del self.producer  # the last reference: librdkafka's producer is destroyed with it


__all__ = ["HEADER_PREFIX", "DeadLetterQueueReporter", "ensure_topic"]
