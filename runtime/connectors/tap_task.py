"""What a Singer task and an Airbyte task do alike: run the program, read its lines, run it again later.

`ProgramSourceTask.poll()` starts a run when the last one ended `poll_interval_s` ago, hands each line the
program wrote to `handle_line` (the protocol's own mapping, in the subclass), and returns the records it
produced, at most `batch_size`, waiting at most WAIT_FOR_OUTPUT_S for the program to write. A run that
exits 0 releases the records held back for a state (state_offsets.py); any other exit fails the task with
the program's stderr (`run_failed`). stop() ends a running program (SIGTERM, then SIGKILL) and removes the
task's private files; the runtime's wake-up ends a wait between runs.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import abstractmethod
from collections.abc import Sequence

from ..api import ConnectError, SourceRecord, SourceTask
from .state_offsets import StateCarrier
from .tap_process import PrivateDir, TapExited, TapProcess, failure

log = logging.getLogger(__name__)

WAIT_FOR_OUTPUT_S = 0.5  # the longest poll() waits for the program to write something
# Records held back for a state (state_offsets.py) go out once the program has written nothing for this long
# (a program waiting for changes holds no record back for ever); a state that comes later then rides on later
# records. Long: a tap's final state can follow its last record after seconds of clean-up on a busy machine.
QUIET_RELEASE_S = 60.0


class ProgramSourceTask(SourceTask):
    """A source task whose records come from runs of a program speaking a line protocol on stdout."""

    # set by the subclass's start()
    program: str  # a name for messages: "The tap tap-postgres"
    batch_size: int
    poll_interval_s: float
    stop_timeout_s: float
    secrets: Sequence[str]
    carrier: StateCarrier

    def __init__(self) -> None:
        self._wake = threading.Event()
        self._stopping = False
        self._process: TapProcess | None = None
        self.private: PrivateDir | None = None
        self._lines: list[bytes] = []
        self._next = 0
        self._next_run = 0.0
        self._uncommitted = False  # records were polled since the runtime's last offset commit

    @abstractmethod
    def command(self) -> list[str]:
        """The arguments of the next run (its state written to `self.private` first)."""

    @abstractmethod
    def handle_line(self, line: bytes, out: list[SourceRecord]) -> None:
        """One line of the program's output: add the records it makes to `out` through `self.carrier`."""

    def run_failed(self, returncode: int, stderr: str) -> ConnectError:
        """The error the task fails with when a run exits with `returncode`."""
        return failure(self.program, returncode, stderr)

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping:
            return None
        if self._process is None:
            wait = self._next_run - time.monotonic()
            if wait > 0:
                # the runtime commits offsets between polls: wait long only once it has committed them all
                self._wake.wait(min(wait, WAIT_FOR_OUTPUT_S) if self._uncommitted else wait)
                self._wake.clear()
                return None
            log.info("%s: run started", self.program)
            self._process = TapProcess(self.command(), self.program, self.secrets)
        out: list[SourceRecord] = []
        batch_size = self.batch_size
        handle = self.handle_line
        while len(out) < batch_size:
            lines = self._lines
            if self._next >= len(lines):
                assert self._process is not None
                item = self._process.next_chunk(0 if out else WAIT_FOR_OUTPUT_S)
                if item is None:
                    # a quiet program (a stream waiting for changes) holds back no records for ever
                    if self.carrier.held and time.monotonic() - self.carrier.last_change > QUIET_RELEASE_S:
                        self.carrier.release(out)
                    break
                if isinstance(item, TapExited):
                    self._run_ended(item, out)
                    break
                self._lines, self._next = item, 0
                continue
            self._next += 1
            handle(lines[self._next - 1], out)
        if out:
            self._uncommitted = True
        return out or None

    def commit(self) -> None:
        """The runtime committed the offsets of every record polled before this call."""
        self._uncommitted = False

    def _run_ended(self, exited: TapExited, out: list[SourceRecord]) -> None:
        process, self._process = self._process, None
        assert process is not None
        if exited.returncode != 0:
            self.carrier.clear()  # records read since the last state are read again after a restart
            raise self.run_failed(exited.returncode, process.stderr_tail())
        self.carrier.release(out)
        self._next_run = time.monotonic() + self.poll_interval_s
        log.info("%s: run ended; the next starts in %.1f s", self.program, self.poll_interval_s)

    def _connect_wakeup(self) -> None:
        """The runtime needs the task thread (a stop, a pause): end a wait between runs now."""
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        process, self._process = self._process, None
        if process is not None:
            process.stop(self.stop_timeout_s)  # a hung program is killed after the grace period
        if self.private is not None:
            self.private.remove()
            self.private = None
