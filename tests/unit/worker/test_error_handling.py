"""RetryWithTolerance: KIP-298's retries, tolerance, counting and reporting, without a broker."""

from __future__ import annotations

import threading

import pytest

from runtime.api.errors import DataError, RetriableError
from runtime.worker.counters import ErrorCounters
from runtime.worker.error_handling import (
    ErrorContext,
    ErrorSettings,
    FailedRecord,
    RetryWithTolerance,
    Stage,
    ToleranceExceeded,
    build_operator,
)
from tests.support.clock import FakeClock


class Collecting:
    def __init__(self) -> None:
        self.reports: list[ErrorContext] = []
        self.flushed = 0

    def report(self, context: ErrorContext) -> None:
        self.reports.append(context)

    def flush(self, timeout_s: float) -> None:
        self.flushed += 1

    def close(self) -> None:
        pass


def operator(
    config: dict[str, str], stop: threading.Event | None = None, clock: FakeClock | None = None
) -> tuple[RetryWithTolerance, Collecting]:
    reporter = Collecting()
    op = RetryWithTolerance(
        ErrorSettings.of(config), ErrorCounters(), [reporter], stop or threading.Event(), clock or FakeClock()
    )
    return op, reporter


class Flaky:
    """Fails with `error` the first `failures` calls, then returns 'ok'."""

    def __init__(self, failures: int, error: type[Exception] = RetriableError) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error(f"failure {self.calls}")
        return "ok"


def test_a_retriable_error_is_retried_within_the_timeout() -> None:
    op, reporter = operator({"errors.retry.timeout": "10000", "errors.retry.delay.max.ms": "1"})
    flaky = Flaky(2)
    assert op.execute(Stage.VALUE_CONVERTER, object, flaky, FailedRecord("t", 0, 5)) == (True, "ok")
    assert flaky.calls == 3
    assert (op.counters.total_retries, op.counters.total_record_failures, op.counters.total_record_errors) == (2, 2, 0)
    assert reporter.reports == []


def test_retries_back_off_exponentially_from_300_ms_until_the_retry_timeout() -> None:
    # the reference's RETRIES_DELAY_MIN_MS doubling; a retry is tried while the timeout has not passed
    clock = FakeClock()
    op, reporter = operator({"errors.retry.timeout": "10000", "errors.tolerance": "all"}, clock=clock)
    always = Flaky(1000)
    assert op.execute(Stage.VALUE_CONVERTER, object, always, FailedRecord("t", 0, 5)) == (False, None)
    assert clock.waits == pytest.approx([0.3, 0.6, 1.2, 2.4, 4.8, 9.6])  # 9.3 s waited: one more try
    assert always.calls == 7 and op.counters.total_retries == 6 and op.counters.total_record_failures == 7
    assert [r.attempts for r in reporter.reports] == [7]


def test_the_backoff_is_capped_by_the_retry_delay_max() -> None:
    clock = FakeClock()
    config = {"errors.retry.timeout": "5000", "errors.retry.delay.max.ms": "1000", "errors.tolerance": "all"}
    op, _ = operator(config, clock=clock)
    assert op.execute(Stage.TASK_PUT, object, Flaky(1000), None) == (False, None)
    assert clock.waits == pytest.approx([0.3, 0.6, 1.0, 1.0, 1.0, 1.0, 1.0])  # until 5.9 s >= 5 s


def test_a_stop_request_ends_the_backoff_at_once() -> None:
    clock, stop = FakeClock(), threading.Event()
    op, _ = operator({"errors.retry.timeout": "-1", "errors.tolerance": "all"}, stop, clock)
    clock.on_wait = stop.set  # the worker stops the task during the first backoff
    flaky = Flaky(1000)
    assert op.execute(Stage.VALUE_CONVERTER, object, flaky, None) == (False, None)
    assert clock.waits == [0.3] and clock.woken == [True]  # no further backoff


def test_without_a_retry_timeout_a_retriable_error_fails_at_once() -> None:
    op, reporter = operator({"errors.tolerance": "all"})
    flaky = Flaky(1)
    assert op.execute(Stage.TRANSFORMATION, object, flaky, None) == (False, None)
    assert flaky.calls == 1
    assert op.counters.total_records_skipped == 1
    assert reporter.reports[0].stage is Stage.TRANSFORMATION


def test_other_errors_are_never_retried() -> None:
    op, _ = operator({"errors.tolerance": "all", "errors.retry.timeout": "-1"})
    flaky = Flaky(1, DataError)
    assert op.execute(Stage.KEY_CONVERTER, object, flaky, None) == (False, None)
    assert flaky.calls == 1


def test_tolerance_none_fails_with_the_cause_chained() -> None:
    op, reporter = operator({})
    with pytest.raises(ToleranceExceeded, match="Tolerance exceeded in error handler") as raised:
        op.execute(Stage.VALUE_CONVERTER, object, Flaky(1, DataError), FailedRecord("t", 0, 1))
    assert isinstance(raised.value.__cause__, DataError)
    assert len(reporter.reports) == 1  # reported before failing, as the reference does
    assert op.counters.total_record_errors == 1 and op.counters.total_records_skipped == 0


def test_a_stop_request_ends_an_endless_retry() -> None:
    stop = threading.Event()
    op, _ = operator({"errors.tolerance": "all", "errors.retry.timeout": "-1"}, stop)

    def fails_then_stops() -> str:
        stop.set()  # the worker asks the task to stop while it is retrying
        raise RetriableError("registry away")

    assert op.execute(Stage.VALUE_CONVERTER, object, fails_then_stops, None) == (False, None)
    assert op.counters.total_records_skipped == 1


def test_the_log_reporter_is_built_only_when_enabled(caplog: pytest.LogCaptureFixture) -> None:
    counters = ErrorCounters()
    quiet = build_operator("c", "c-0", {"errors.tolerance": "all"}, counters, threading.Event())
    assert quiet.reporters == []
    op = build_operator(
        "c", "c-0", {"errors.tolerance": "all", "errors.log.enable": "true"}, counters, threading.Event()
    )
    op.execute(Stage.VALUE_CONVERTER, DataError, Flaky(1, DataError), FailedRecord("t", 2, 7, b"k", b"secret"))
    assert counters.total_errors_logged == 1
    line = next(r.getMessage() for r in caplog.records if "Error encountered in task" in r.getMessage())
    assert "Executing stage 'VALUE_CONVERTER'" in line and "offset=7" in line
    assert "secret" not in line  # record contents only with errors.log.include.messages


class Upper:
    def apply(self, record: str) -> str:
        return record.upper()


class Refuses:
    def apply(self, record: str) -> str:
        raise DataError(f"cannot take {record}")


def chain(*transformations):
    return type(
        "Chain", (), {"stages": [type("Stage", (), {"transformation": t, "apply": t.apply})() for t in transformations]}
    )()


def test_a_failing_transformation_is_reported_with_its_class_and_the_record_skipped() -> None:
    op, reporter = operator({"errors.tolerance": "all"})
    assert op.transform(chain(Upper()), "a", FailedRecord()) == "A"
    assert op.transform(chain(Upper(), Refuses()), "b", FailedRecord()) is None
    assert reporter.reports[0].stage is Stage.TRANSFORMATION
    assert reporter.reports[0].class_name.endswith("Refuses")
    assert str(reporter.reports[0].error) == "cannot take B"  # the first transformation had run
