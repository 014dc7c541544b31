"""The thread that runs one task instance, and what source and sink runners share."""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import orjson
from confluent_kafka import KafkaException

from ..api.task import Task
from ..log_context import set_task_context
from ..storage.base import InstanceStatus, StatusStore
from ..storage.states import State, TargetState
from .counters import ErrorCounters, TaskCounters
from .transform_chain import TransformationChain

log = logging.getLogger(__name__)

T = TypeVar("T", bound=Task)  # the kind of task a runner runs: SourceTask or SinkTask


# Optional, private to this runtime: a task class may define this method to cut a waiting poll() short
# when the worker needs the task's thread back: a stop, or a pause or resume. As in the reference
# (KAFKA-10792), Task.stop() runs only on the task's own thread once the current poll() has returned, and
# the loop sees a new target state only then, so without it both wait out an idle poll (e.g.
# FileStreamSource's wait for new lines). With it, a task with nothing to do may wait long: thousands of
# idle tasks then cost no wake-ups. The hook is called from the herder's thread: it must be quick,
# thread-safe and release nothing (stop() still does that, on the task thread); it only ends the current
# wait (the next poll() may wait again).
WAKEUP_HOOK = "_connect_wakeup"


def format_trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class TaskRunner(ABC, Generic[T]):
    """Runs a task in its own thread: start, loop until stopped, close. Reports its own status."""

    is_source = False

    def __init__(
        self,
        connector: str,
        index: int,
        task_class: type[T],
        config: dict[str, str],
        connector_config: dict[str, str],
        target_state: TargetState,
        statuses: StatusStore,
        worker_id: str,
        on_topic: Callable[[str, int, str], None] | None = None,
        transforms: TransformationChain | None = None,
    ) -> None:
        self.connector = connector
        self.index = index
        self.id = f"{connector}-{index}"
        self.task_class = task_class
        self.config = config
        self.connector_config = connector_config
        self.statuses = statuses
        self.worker_id = worker_id
        self.on_topic = on_topic
        self.transforms = transforms or TransformationChain({}, lambda name, kind: None)
        self._target = target_state
        self._stopping = threading.Event()
        self._cancelled = False
        self._started = threading.Event()
        self._state_changed = threading.Event()
        self.failed = False
        self.task: T | None = None
        self.counters = TaskCounters()
        self.created_at = time.monotonic()  # where rates of the first metrics scrape start
        self.client_stats: dict[str, Any] | None = None  # librdkafka's latest statistics of the task's client
        self.error_counters = ErrorCounters()
        self._topics_seen: set[str] = set()
        self._thread = threading.Thread(target=self._run, name=f"task-{self.id}", daemon=True)

    # ---- control, from the herder's thread ------------------------------------------------------

    def start(self, wait_s: float = 5.0) -> None:
        self._report(State.UNASSIGNED if self._target is TargetState.STARTED else State.PAUSED)
        self._thread.start()
        self._started.wait(wait_s)

    def transition_to(self, target: TargetState) -> None:
        """PAUSED or STARTED; the status changes now, the loop follows at its next iteration."""
        if self.failed or target is self._target:
            return
        self._target = target
        self._report(State.PAUSED if target is TargetState.PAUSED else State.RUNNING)
        self._state_changed.set()
        self._wake_task()

    def stop(self) -> None:
        self._stopping.set()
        self._state_changed.set()
        self._wake_task()
        self.on_stop_requested()

    def _wake_task(self) -> None:
        hook = getattr(self.task, WAKEUP_HOOK, None)
        if callable(hook):
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - only a shortcut: the change goes on without it
                log.warning("Task %s: waking it failed: %s", self.id, exc)

    def await_stop(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.error("Graceful stop of task %s failed: still running after %.1fs; abandoning it", self.id, timeout_s)
            self._cancelled = True  # it must not commit offsets or write statuses any more
            self.on_cancel()
            return False
        return True

    @property
    def paused(self) -> bool:
        return self._target is TargetState.PAUSED

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def forget_seen_topics(self) -> None:
        """Report each topic again the next time the task sees it (after a topic tracking reset)."""
        self._topics_seen.clear()

    def active_records(self) -> int:
        """Records handed to the producer and not yet acknowledged (sources; 0 for sinks)."""
        return 0

    def on_client_stats(self, raw: str) -> None:
        """librdkafka's `stats_cb` (on the task thread, from poll/consume): kept for the next scrape."""
        try:
            self.client_stats = orjson.loads(raw)
        except orjson.JSONDecodeError:
            log.debug("Task %s: unreadable client statistics", self.id)

    # ---- the thread -----------------------------------------------------------------------------

    def _report(self, state: State, trace: str | None = None) -> None:
        if self._cancelled:
            return
        status = InstanceStatus(state, self.worker_id, trace)
        if state is State.FAILED:  # as the reference's onFailure: a zombie's failure never hides its successor
            self.statuses.put_task_safe(self.connector, self.index, status)
        else:
            self.statuses.put_task(self.connector, self.index, status)

    def _fail(self, exc: BaseException) -> None:
        self.failed = True
        log.error(
            "Task %s threw an uncaught and unrecoverable exception; it is FAILED until manually restarted",
            self.id,
            exc_info=exc,
        )
        self._report(State.FAILED, format_trace(exc))

    def _run(self) -> None:
        set_task_context(self.connector, self.index)
        try:
            try:
                self.task = self.task_class()
                self.initialize(self.task)
                self.task.start(dict(self.config))
            except BaseException as exc:  # noqa: BLE001 - a task's own code may raise anything: the task fails with it
                self._fail(exc)
                return
            finally:
                # the status is final before the herder (waiting on this) answers the request
                if not self.failed and not self._stopping.is_set():
                    self._report(State.PAUSED if self.paused else State.RUNNING)
                self._started.set()
            self.execute()
        except BaseException as exc:  # noqa: BLE001 - a task failure must never take the worker down
            self._fail(exc)
        except:  # noqa: E722 - confluent-kafka re-raises a KafkaException thrown in a rebalance callback as
            # its bare KafkaError, which is no BaseException: without this the thread would end, status RUNNING
            self._fail(KafkaException(sys.exc_info()[1]))
        finally:
            try:
                self.finish()
            except Exception as exc:  # noqa: BLE001 - the task thread ends cleanly whatever closing raised
                log.warning("Task %s: error while closing: %s", self.id, exc)

    def stop_task(self) -> None:
        try:
            if self.task is not None:
                self.task.stop()
        except Exception as exc:  # noqa: BLE001 - a task's own stop() may raise anything: closing goes on
            log.warning("Task %s threw while stopping: %s", self.id, exc)
        try:
            self.transforms.close()
        except Exception as exc:  # noqa: BLE001 - a transformation's own close() may raise anything
            log.warning("Task %s: closing its transformations threw: %s", self.id, exc)

    def finish(self) -> None:
        """After the loop: stop the task, then commit what is safe and close clients."""
        self.stop_task()
        self.close_resources()

    def wait_while_paused(self) -> None:
        while self.paused and not self._stopping.is_set():
            # set by every transition (after the target changes) and by stop(), so a paused task sleeps
            # until one comes: thousands of paused tasks cost nothing (the timeout is a safety net)
            self._state_changed.wait(30.0)
            self._state_changed.clear()

    # ---- for subclasses -------------------------------------------------------------------------

    @abstractmethod
    def initialize(self, task: Task) -> None:
        """Create clients and give the task its context."""

    @abstractmethod
    def execute(self) -> None:
        """The main loop; returns when stopping."""

    def close_resources(self) -> None:
        """Commit what is safe and close clients (not when cancelled)."""

    def on_stop_requested(self) -> None:
        """Wake the loop (e.g. interrupt a blocking call)."""

    def on_cancel(self) -> None:
        """The thread did not stop in time."""
