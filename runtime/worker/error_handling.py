"""KIP-298 error handling for one task: retries with backoff, tolerance, and the error reporters.

The reference's RetryWithToleranceOperator, in this runtime's terms:
- an operation that raises a `RetriableError` is tried again with exponential backoff (300 ms doubling,
  capped at `errors.retry.delay.max.ms`) until `errors.retry.timeout` has passed (0: no retry, -1: forever);
  any other error fails the operation at once;
- a record whose operation failed is reported (`errors.log.enable`, the dead letter queue of sinks) and
  then skipped under `errors.tolerance=all`, or the task fails with "Tolerance exceeded in error handler"
  and the cause chained, under `none`;
- `ErrorCounters` (task-error-metrics) count every failed attempt, erroneous record, skip, retry, log line
  and dead-letter-queue send.

Runners call `execute` only on their slow path, once the fast path over a whole batch has thrown, so a
healthy batch pays nothing for error handling. Retries use tenacity, with a stop request ending them.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_any,
    stop_never,
    stop_when_event_set,
    wait_exponential,
)
from tenacity.stop import stop_base

from ..api.errors import ConnectError, RetriableError
from ..clock import SYSTEM_CLOCK, Clock
from .counters import ErrorCounters

log = logging.getLogger(__name__)

T = TypeVar("T")

TOLERANCE_EXCEEDED = "Tolerance exceeded in error handler"
_INITIAL_BACKOFF_S = 0.3  # the reference's RETRIES_DELAY_MIN_MS


class Stage(str, Enum):
    """Where in the pipeline a record failed (the reference's names, shown in logs and DLQ headers)."""

    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    TRANSFORMATION = "TRANSFORMATION"
    TASK_PUT = "TASK_PUT"
    TASK_POLL = "TASK_POLL"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


class ErrorSettings(BaseModel):
    """The connector's `errors.*` settings (validated at create time; parsed here leniently again)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    retry_timeout_ms: int = Field(0, alias="errors.retry.timeout")
    retry_delay_max_ms: int = Field(60_000, alias="errors.retry.delay.max.ms")
    tolerance: str = Field("none", alias="errors.tolerance")
    log_enable: bool = Field(False, alias="errors.log.enable")
    log_include_messages: bool = Field(False, alias="errors.log.include.messages")
    dlq_topic: str = Field("", alias="errors.deadletterqueue.topic.name")
    dlq_replication_factor: int = Field(3, alias="errors.deadletterqueue.topic.replication.factor")
    dlq_context_headers: bool = Field(False, alias="errors.deadletterqueue.context.headers.enable")

    @field_validator("tolerance", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> str:
        return str(value or "").strip().lower()

    @field_validator("dlq_topic", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> str:
        return str(value or "").strip()  # topic names are case-sensitive

    @classmethod
    def of(cls, connector_config: dict[str, str]) -> ErrorSettings:
        keys = {f.alias for f in cls.model_fields.values() if f.alias}
        return cls.model_validate({k: v for k, v in connector_config.items() if k in keys})

    @property
    def tolerate_all(self) -> bool:
        return self.tolerance == "all"


@dataclass
class FailedRecord:
    """What the reporters know of the record being processed: the consumed one (sinks) or the source one."""

    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    key: bytes | None = None
    value: bytes | None = None
    headers: list[tuple[str, bytes | None]] | None = None
    timestamp: int | None = None
    source_record: Any = None  # sources: the SourceRecord (shown only with errors.log.include.messages)


@dataclass
class ErrorContext:
    """One failed operation, as reporters see it."""

    stage: Stage
    class_name: str
    error: BaseException
    record: FailedRecord | None
    attempts: int = 1
    extra: dict[str, Any] = field(default_factory=dict)


class ErrorReporter(Protocol):
    def report(self, context: ErrorContext) -> None:
        """Report the failure (a dead letter queue send completes by `flush`)."""

    def flush(self, timeout_s: float) -> None: ...

    def close(self) -> None: ...


class LogReporter:
    """`errors.log.enable`: one ERROR line per failed record, with its coordinates (and contents only with
    `errors.log.include.messages`: record contents may hold secrets)."""

    def __init__(self, task_id: str, include_messages: bool, counters: ErrorCounters) -> None:
        self.task_id = task_id
        self.include_messages = include_messages
        self.counters = counters

    def report(self, context: ErrorContext) -> None:
        self.counters.total_errors_logged += 1
        log.error(
            "Error encountered in task %s. Executing stage '%s' with class '%s'%s.",
            self.task_id,
            context.stage.value,
            context.class_name,
            _describe(context.record, self.include_messages),
            exc_info=context.error,
        )

    def flush(self, timeout_s: float) -> None:
        return None

    def close(self) -> None:
        return None


def _describe(record: FailedRecord | None, include_messages: bool) -> str:
    if record is None:
        return ""
    if record.topic is not None and record.offset is not None:
        text = (
            f", where consumed record is {{topic='{record.topic}', partition={record.partition}, offset={record.offset}"
        )
        if record.timestamp is not None:
            text += f", timestamp={record.timestamp}"
        if include_messages:
            text += f", key={record.key!r}, value={record.value!r}"
        return text + "}"
    if record.source_record is not None:
        return (
            f", where source record is = {record.source_record!r}" if include_messages else ", where source record is"
        )
    return ""


def class_name(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


class ToleranceExceeded(ConnectError):
    """errors.tolerance=none and an operation failed: the task fails with the cause chained."""


class RetryWithTolerance:
    """Runs one operation of one record under the task's `errors.*` settings."""

    def __init__(
        self,
        settings: ErrorSettings,
        counters: ErrorCounters,
        reporters: list[ErrorReporter],
        stop_event: threading.Event,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.settings = settings
        self.counters = counters
        self.reporters = reporters
        self._stop = stop_event
        self._clock = clock  # the retries' backoff and timeout (a test's clock asserts the timing)

    def execute(
        self, stage: Stage, cls: Any, operation: Callable[[], T], record: FailedRecord | None
    ) -> tuple[bool, T | None]:
        """(True, result), or (False, None) when the record is to be skipped; raises ToleranceExceeded."""
        attempts = 0

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            try:
                return operation()
            except Exception:
                self.counters.total_record_failures += 1
                raise

        try:
            return True, self._retrying()(attempt)
        except Exception as exc:  # noqa: BLE001 - plugin code on one record: whatever it raises fails that record, which the tolerance handles
            self.handle(ErrorContext(stage, class_name(cls), exc, record, attempts))
            return False, None

    def transform(self, chain: Any, record: Any, failed: FailedRecord) -> Any:
        """A record through a TransformationChain stage by stage: the result, or None when filtered or skipped."""
        for stage in chain.stages:
            ok, record = self.execute(
                Stage.TRANSFORMATION, stage.transformation, functools.partial(stage.apply, record), failed
            )
            if not ok or record is None:
                return None
        return record

    def handle(self, context: ErrorContext) -> None:
        """A record failed for good: report it, then skip it (tolerance all) or fail the task."""
        counters = self.counters
        counters.total_record_errors += 1
        counters.last_error_timestamp = int(time.time() * 1000)
        for reporter in self.reporters:
            try:
                reporter.report(context)
            except Exception as exc:  # noqa: BLE001 - a reporter failing must not hide the original error
                log.error("Reporting an error of stage %s failed: %s", context.stage.value, exc)
        if not self.settings.tolerate_all:
            raise ToleranceExceeded(TOLERANCE_EXCEEDED) from context.error
        counters.total_records_skipped += 1

    def flush(self, timeout_s: float) -> None:
        """Wait until every report so far is durable (offsets are committed only after it)."""
        for reporter in self.reporters:
            reporter.flush(timeout_s)

    def close(self) -> None:
        for reporter in self.reporters:
            try:
                reporter.close()
            except Exception as exc:  # noqa: BLE001 - one reporter failing to close must not leave the others open
                log.warning("Closing an error reporter failed: %s", exc)

    def _retrying(self) -> Retrying:
        timeout_ms = self.settings.retry_timeout_ms
        stop = stop_never if timeout_ms < 0 else _StopAfterDelay(self._clock, max(0, timeout_ms) / 1000)
        return Retrying(
            retry=retry_if_exception_type(RetriableError),
            stop=stop_any(stop, stop_when_event_set(self._stop)),
            wait=wait_exponential(
                multiplier=_INITIAL_BACKOFF_S,
                min=_INITIAL_BACKOFF_S,
                max=max(self.settings.retry_delay_max_ms, 1) / 1000,
            ),
            sleep=self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )

    def _count_retry(self, retry_state: RetryCallState) -> None:
        self.counters.total_retries += 1

    def _sleep(self, seconds: float) -> None:
        self._clock.wait(self._stop, seconds)  # a stop request ends the backoff at once


class _StopAfterDelay(stop_base):
    """tenacity's stop_after_delay on an injected clock (tenacity reads time.monotonic itself)."""

    def __init__(self, clock: Clock, delay_s: float) -> None:
        self._clock = clock
        self._deadline = clock.monotonic() + delay_s

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self._clock.monotonic() >= self._deadline


def build_operator(
    connector: str,
    task_id: str,
    connector_config: dict[str, str],
    counters: ErrorCounters,
    stop_event: threading.Event,
    dlq_factory: Callable[[ErrorSettings], ErrorReporter] | None = None,
) -> RetryWithTolerance:
    """The operator of one task: log reporter when enabled, dead letter queue (sinks) when a topic is set."""
    settings = ErrorSettings.of(connector_config)
    reporters: list[ErrorReporter] = []
    if settings.dlq_topic and dlq_factory is not None:
        reporters.append(dlq_factory(settings))
    if settings.log_enable:
        reporters.append(LogReporter(task_id, settings.log_include_messages, counters))
    return RetryWithTolerance(settings, counters, reporters, stop_event)


__all__ = [
    "TOLERANCE_EXCEEDED",
    "ErrorContext",
    "ErrorReporter",
    "ErrorSettings",
    "FailedRecord",
    "LogReporter",
    "RetryWithTolerance",
    "Stage",
    "ToleranceExceeded",
    "build_operator",
    "class_name",
]
