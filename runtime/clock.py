"""The time that waiting code reads, injected where time is what a test checks (a throughput cap, an idle
wait, a fault knob's delay): the system's by default, or a test's that moves only when the code under test
waits or sleeps (tests/support/clock.py), so pacing is asserted without reading the wall clock."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds from an arbitrary start, never going back."""
        ...

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until `event` is set or `timeout` seconds pass; whether it is set."""
        ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        return event.wait(timeout)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK: Clock = SystemClock()
