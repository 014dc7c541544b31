"""A source connector whose stop() waits on a gate the test opens (for the tests of connectors that hang)."""

from __future__ import annotations

import threading

from runtime.connectors.testing import SequenceSourceConnector

STOP_ENTERED = threading.Event()  # set once some instance's stop() has begun
STOP_RELEASED = threading.Event()  # stop() returns once the test sets this


class StopBlockingConnector(SequenceSourceConnector):
    def stop(self) -> None:
        STOP_ENTERED.set()
        STOP_RELEASED.wait()
        super().stop()
