"""One thread that wakes the FileStreamSource tasks whose file has grown.

The reference's FileStreamSourceTask reads its file again after each idle second. Done by each task's own
thread, that costs a thread wake-up per idle task and interval, about 15-30 µs of CPU in CPython: 5,000
idle tasks would use a quarter of a core. Here a task with nothing to read registers its open file and
read position, and one thread per process fstat()s the registered files each interval (about a
microsecond each) and wakes only the tasks whose file is now longer than what they have read.

Hand-written: watchdog's and watchfiles' observers watch fixed directory trees and report events (inotify,
which misses writes made on network file systems), where this needs the size of a changing set of open
files against positions only the tasks know.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable


class GrowthWatcher:
    """Wakes a registered waiter when its file descriptor's file grows past a position."""

    def __init__(self, interval_s: Callable[[], float]) -> None:
        self._interval_s = interval_s  # read at each sweep, so a test's shorter interval takes effect
        self._changed = threading.Condition()
        self._waiters: dict[int, tuple[int, int, threading.Event]] = {}  # token -> (fd, position, wake)
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, fd: int, position: int, wake: threading.Event) -> int:
        """Set `wake` once the file open as `fd` is longer than `position` bytes; returns a token for unwatch."""
        with self._changed:
            token = next(self._tokens)
            self._waiters[token] = (fd, position, wake)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="file-source-growth", daemon=True)
                self._thread.start()
            elif len(self._waiters) == 1:
                self._changed.notify()
        return token

    def unwatch(self, token: int) -> None:
        with self._changed:
            self._waiters.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._waiters:
                    self._changed.wait()  # nothing to watch: no sweeps at all
                waiters = list(self._waiters.values())
            for fd, position, wake in waiters:
                try:
                    grown = os.fstat(fd).st_size > position
                except OSError:  # closed meanwhile (its task is stopping): waking it is harmless
                    grown = True
                if grown:
                    wake.set()
            with self._changed:
                self._changed.wait(self._interval_s())
