"""What the herder thread is doing now, for timeout and health messages (the reference's TemporaryStage)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime


def iso_instant(ts: float) -> str:
    """Java's Instant.toString(): 2024-10-25T12:34:56.789Z."""
    dt = datetime.fromtimestamp(ts, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Stage:
    description: str
    started: float
    completed: float | None = None

    def summary(self) -> str:
        if self.completed is None:
            return f"The worker is currently {self.description}, which began at {iso_instant(self.started)}."
        return (
            f"The last operation the worker completed was {self.description}, which began at "
            f"{iso_instant(self.started)} and completed at {iso_instant(self.completed)}."
        )


class StageTracker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Stage | None = None
        self._last: Stage | None = None

    @contextmanager
    def stage(self, description: str) -> Iterator[None]:
        import time

        started = time.time()
        with self._lock:
            previous = self._current
            self._current = Stage(description, started)
        try:
            yield
        finally:
            with self._lock:
                self._last = Stage(description, started, time.time())
                self._current = previous

    def summary(self) -> str | None:
        with self._lock:
            stage = self._current or self._last
        return stage.summary() if stage else None
