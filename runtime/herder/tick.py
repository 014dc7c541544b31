"""The distributed herder's tick thread: the one thread that changes what runs on this worker.

On every change that matters (a join, a placement or config record, a connector asking for new task
configs) and every TICK_S it: stops everything if this worker is out of the group, takes up a join, lets the
leader place new units, reconciles what runs here with its share (local_work.py), reports revoked
connectors released and rejoins once they are, applies restart requests, then runs the calls REST threads
queued for it (restarts of what runs here). REST threads wait for those calls, never for the tick itself.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..control.errors import RequestTimeout
from ..control.stages import StageTracker
from ..distributed.member import GroupMember
from ..storage.kafka_config_store import KafkaConfigStore
from .local_work import LocalWork

log = logging.getLogger(__name__)
T = TypeVar("T")

TICK_S = 0.2  # the tick thread also wakes on every relevant record


class TickThread:
    def __init__(
        self,
        member: GroupMember,
        work: LocalWork,
        config_store: KafkaConfigStore,
        stages: StageTracker,
        wakeup: threading.Event,
        request_timeout_s: float,
    ) -> None:
        """`wakeup` is set by whoever has news for the tick (the member, the work, the config listener)."""
        self.member = member
        self.work = work
        self.config_store = config_store
        self.stages = stages
        self._wakeup = wakeup
        self._request_timeout_s = request_timeout_s
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._ident: int | None = None
        self._calls: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future]] = queue.Queue()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="herder-tick", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float) -> None:
        self._stopping.set()
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    @property
    def stopping(self) -> threading.Event:
        return self._stopping

    def wake(self) -> None:
        """Tick now: something the tick thread reconciles has just been written."""
        self._wakeup.set()

    def _run(self) -> None:
        self._ident = threading.get_ident()
        while not self._stopping.is_set():
            self._wakeup.wait(TICK_S)
            self._wakeup.clear()
            if self._stopping.is_set():
                break
            try:
                self._tick()
            except Exception:
                log.exception("Herder tick failed")

    def _reconcile(self) -> None:
        assignment, fenced = self.member.reconcile_view()
        self.work.reconcile(assignment, self.config_store.snapshot(), fenced)

    def _tick(self) -> None:
        member, work = self.member, self.work
        if member.fenced() and work.runs_anything():
            self._reconcile()  # out of the group: stop everything before rejoining (others may run it now)
        member.poll()
        member.update_placement()
        self._reconcile()
        work.report_released()
        if member.rejoin_when_released(work.releasing()):
            self._wakeup.set()  # revocations done: the leader may now hand them out
        work.run_restarts()
        while True:
            try:
                fn, future = self._calls.get_nowait()
            except queue.Empty:
                break
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:  # noqa: BLE001 - the caller gets it
                    future.set_exception(exc)

    def call(self, fn: Callable[[], T], what: str) -> T:
        """Run `fn` on the tick thread and wait for it (the request timeout at most)."""
        if threading.get_ident() == self._ident:
            return fn()
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> T:
            with self.stages.stage(what):
                return fn()

        self._calls.put((run, future))
        self._wakeup.set()
        try:
            return future.result(timeout=self._request_timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            summary = self.stages.summary()
            raise RequestTimeout("Request timed out. " + summary if summary else "Request timed out") from None

    def responsive(self, timeout_s: float) -> bool:
        """Whether the tick thread runs a call within `timeout_s` (the health check's probe)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._calls.put((lambda: None, future))
        self._wakeup.set()
        try:
            future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return False
        return True
