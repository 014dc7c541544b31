"""Executors on daemon threads, for work that may run plugin code that never returns.

`concurrent.futures.ThreadPoolExecutor` joins its threads at interpreter exit, so one connector stuck in
start() or stop() would hold the process after SIGTERM. These run each key's jobs one after the other, in
submission order, on a daemon thread of that key: started when the key has work, ended when it has none
(the reference runs each connector on its own thread; an idle connector costs no thread here).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

_Job = tuple[concurrent.futures.Future, Callable[[], Any]]


class KeyedDaemonExecutor:
    """Jobs of one key run serially on that key's daemon thread (`<name>-<key>`, or `<name>` for the key
    None); keys run side by side."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._queues: dict[Hashable, deque[_Job]] = {}  # keys with a thread, and what it has still to run
        self._threads: dict[Hashable, int] = {}  # key -> ident of its thread
        self._shutdown = False

    def thread_name(self, key: Hashable) -> str:
        return self._name if key is None else f"{self._name}-{key}"

    def submit(self, key: Hashable, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError(f"{self._name}: cannot schedule new jobs after shutdown")
            queue = self._queues.get(key)
            if queue is not None:  # the key's thread picks it up after what it runs now
                queue.append((future, fn))
                return future
            self._queues[key] = deque([(future, fn)])
        thread = threading.Thread(target=self._drain, args=(key,), name=self.thread_name(key), daemon=True)
        thread.start()
        return future

    def on_thread_of(self, key: Hashable) -> bool:
        """True on the thread running `key`'s jobs (a job that submits to its own key must run inline)."""
        with self._lock:
            return self._threads.get(key) == threading.get_ident()

    def _drain(self, key: Hashable) -> None:
        with self._lock:
            self._threads[key] = threading.get_ident()
        while True:
            with self._lock:
                queue = self._queues[key]
                if not queue:
                    del self._queues[key]
                    del self._threads[key]
                    return
                future, fn = queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self) -> None:
        """Refuse new jobs and cancel the queued ones; running jobs finish on their own (daemon) threads."""
        with self._lock:
            self._shutdown = True
            queued = [future for queue in self._queues.values() for future, _ in queue]
            for queue in self._queues.values():
                queue.clear()
        for future in queued:
            future.cancel()


class SerialDaemonExecutor:
    """One daemon thread named `name` (while it has work) running jobs in submission order."""

    def __init__(self, name: str) -> None:
        self._jobs = KeyedDaemonExecutor(name)

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        return self._jobs.submit(None, (lambda: fn(*args)) if args else fn)

    def on_thread(self) -> bool:
        return self._jobs.on_thread_of(None)

    def shutdown(self) -> None:
        self._jobs.shutdown()
