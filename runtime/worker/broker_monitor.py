"""Watches whether the Kafka cluster answers, so /health can say when no data can move."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..control.stages import iso_instant

log = logging.getLogger(__name__)


class BrokerMonitor:
    """Asks the cluster for metadata every `interval_s`; remembers since when it has not answered."""

    def __init__(
        self,
        probe: Callable[[float], Any],
        description: str,
        interval_s: float = 5.0,
        grace_s: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._probe = probe  # raises when the cluster cannot be reached within the timeout
        self._clock = clock
        self.description = description
        self.interval_s = interval_s
        self.grace_s = grace_s
        self._down_since: float | None = None
        self._last_error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="broker-monitor", daemon=True)

    def start(self) -> BrokerMonitor:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._probe(self.interval_s)
                if self._down_since is not None:
                    log.info("The Kafka cluster at %s answers again", self.description)
                self._down_since = None
            except Exception as exc:  # noqa: BLE001 - whatever the probe raises means "not reachable now": keep watching
                # the error first: a reader that sees the cluster down must also see why
                self._last_error = str(exc)
                if self._down_since is None:
                    self._down_since = self._clock()
                    log.warning("The Kafka cluster at %s does not answer: %s", self.description, exc)
            self._stop.wait(self.interval_s)

    def problem(self) -> str | None:
        """A sentence for /health when the cluster has been unreachable for longer than the grace period."""
        since = self._down_since
        if since is None or self._clock() - since < self.grace_s:
            return None
        return (
            f"The Kafka cluster at {self.description} has been unreachable since {iso_instant(since)}"
            f" ({self._last_error})."
        )
