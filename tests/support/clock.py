"""A clock for the code under test (runtime/clock.py's Clock) that moves only when that code waits or sleeps,
or the test advances it: pacing, idle waits and delays are asserted against it, never against the wall clock
(as Kafka's tests do with MockTime)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class FakeClock:
    """`waits` and `sleeps` record what the code asked for; `on_wait` runs at the start of each wait, the
    test's stand-in for what another thread does meanwhile (a stop, a wake-up)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.waits: list[float | None] = []  # the timeout of each wait, in order
        self.woken: list[bool] = []  # per wait: whether the event ended it (rather than the timeout)
        self.sleeps: list[float] = []
        self.on_wait: Callable[[], None] | None = None

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        self.waits.append(timeout)
        if self.on_wait is not None:
            self.on_wait()
        woken = event.is_set()
        if not woken and timeout is not None:
            self.now += timeout
        self.woken.append(woken)
        return woken

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
