"""A server in a process of its own: launched, polled until an HTTP GET answers 200, stopped with SIGTERM
(then SIGKILL). Our workers and the reference's JVMs (tests and benchmarks) are all run this way."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import httpx


class ServiceProcess:
    """`launch()` from a subclass's `start()`; `.process`, `.log_path`, `log_tail()`, `stop()`, `kill()`.

    With `process_group=True` the process leads a session of its own and signals go to the whole group:
    the reference's launcher is a shell script whose java child must stop too.
    """

    process_group = False

    def __init__(self, log_path: Path) -> None:
        self.log_path = Path(log_path)
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def launch(
        self,
        argv: Sequence[str],
        ready_url: str,
        timeout_s: float,
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        poll_s: float = 0.1,
        what: str = "process",
    ) -> None:
        """Start `argv` (output to the log file) and wait until `ready_url` answers 200."""
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=self.process_group,
        )
        deadline = time.monotonic() + timeout_s
        # one client for the whole wait: each httpx.get makes a client, and loading its TLS trust store costs
        # about 0.1 s of CPU, taken from the process being waited for
        with httpx.Client(timeout=15) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{what} exited with {self.process.returncode}:\n{self.log_tail()}")
                try:
                    if client.get(ready_url).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(poll_s)  # the poll interval of the wait for readiness
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"{what} did not become ready in {timeout_s}s:\n{tail}")

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _signal(self, signum: int) -> None:
        assert self.process is not None
        if self.process_group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)

    def stop(self, timeout_s: float = 30.0) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
        code = self.process.returncode
        self.process = None
        self._close_log()
        return code

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no final flush (crash-safety tests)."""
        if self.process is not None:
            if self.process.poll() is None:
                self._signal(signal.SIGKILL)
            self.process.wait()
            self.process = None
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def run_side_by_side(calls: Sequence[Callable[[], Any]]) -> None:
    """Run the calls in threads (servers that start independently start in the time of the slowest);
    re-raise the first error once all are done."""
    errors: list[BaseException] = []

    def run(call: Callable[[], Any]) -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - re-raised below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
