"""Running a Singer tap or an Airbyte source as a child process: what both connectors share.

- `resolve_executable`: a name on the worker's PATH or a path (e.g. the `bin/` of the tap's own virtualenv).
- `PrivateDir`: the config, catalog and state files a tap reads, in a directory only this user can read
  (the config holds secrets), removed when the task or the call ends.
- `run_command`: a short command (discover, spec, check) with a time limit, killed when it overruns.
- `TapProcess`: a long run (sync, read): its stdout as lists of lines through a bounded queue (a full queue
  stops reading, so a fast tap waits for Kafka rather than filling memory), its stderr's last lines kept for
  the task's trace, stopped with SIGTERM and then SIGKILL (its whole process group) when the task stops.
- `redact`: secrets of the tap's config taken out of any text shown to users (stderr in traces, messages).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import logging
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson

from ..api import ConfigError, ConnectError

log = logging.getLogger(__name__)

HIDDEN = "[hidden]"
STDERR_TAIL_LINES = 40
READ_CHUNK = 1 << 16
QUEUE_CHUNKS = 64  # at most this many chunks of stdout (64 KiB each) wait for poll()
COALESCE_BELOW = READ_CHUNK // 4  # a read shorter than this is followed by a pause of COALESCE_S
COALESCE_S = 0.01
# keys whose values are secrets in any tap's or source's config (the Airbyte spec marks them as well)
_SECRET_WORDS = ("pass", "secret", "token", "key", "credential", "auth", "private")


def resolve_executable(name: str, what: str, config_name: str) -> str:
    """The absolute path of `name` (a command on PATH, or a path); ConfigError naming `config_name` if none."""
    name = name.strip()
    if not name:
        raise ConfigError(config_name, name, f"Name the {what} executable (on the worker's PATH, or a path)")
    if os.sep in name:
        path = Path(name).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.resolve())
        raise ConfigError(config_name, name, f"{path} is not an executable file")
    found = shutil.which(name)
    if found is None:
        raise ConfigError(
            config_name, name, f"No {what} executable {name!r} on the worker's PATH; install it, or give its path"
        )
    return found


def secret_values(config: Mapping[str, Any], secret_keys: Iterable[str] = ()) -> list[str]:
    """The string values of `config` (nested too) under keys that look secret or are named in `secret_keys`."""
    named = set(secret_keys)
    found: list[str] = []

    def walk(node: Any, secret: bool) -> None:
        if isinstance(node, Mapping):
            for k, v in node.items():
                walk(v, secret or k in named or any(w in str(k).lower() for w in _SECRET_WORDS))
        elif isinstance(node, list):
            for v in node:
                walk(v, secret)
        elif secret and isinstance(node, str) and len(node) >= 3:
            found.append(node)

    walk(config, False)
    return sorted(set(found), key=len, reverse=True)


def redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return text


def parse_json_object(raw: str | None, config_name: str) -> dict[str, Any]:
    """A config value holding a JSON object; ConfigError (never showing the value: it may be secret)."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{config_name} is not valid JSON: {exc.args[0].split(':')[0]}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{config_name} must be a JSON object, got a JSON {type(value).__name__}")
    return value


class PrivateDir:
    """A temporary directory readable by this user only, for files holding a tap's config and state."""

    def __init__(self, prefix: str) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=prefix))  # mode 0700

    def write_json(self, name: str, value: Any) -> str:
        path = self.path / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(orjson.dumps(value))
        return str(path)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> PrivateDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _child_env() -> dict[str, str]:
    # unbuffered Python taps: a line written is a line we can read (most taps are Python programs)
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def run_command(args: Sequence[str], timeout_s: float, secrets: Sequence[str] = ()) -> tuple[int, str, str]:
    """Run a short command; its exit code, stdout and (redacted) stderr. Killed (exit code -9) past `timeout_s`."""
    with subprocess.Popen(
        list(args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_child_env(),
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc, signal.SIGKILL)
            out, err = proc.communicate()
            err += f"\n(stopped after {timeout_s:g} s)".encode()
        return proc.returncode, out.decode("utf-8", "replace"), redact(err.decode("utf-8", "replace"), secrets)


# A connector's creation validates (running discover, or spec) and then starts (running it again) within
# moments: the second call reuses the first's answer for this long.
REUSE_S = 30.0
_recent: dict[str, tuple[float, Any]] = {}
_recent_lock = threading.Lock()
T = TypeVar("T")


def recent(key: list[Any], compute: Callable[[], T]) -> T:
    """`compute()`'s JSON-like result, or a copy of the one computed for the same `key` within REUSE_S (the
    key, e.g. an executable and its config, is hashed: secrets are not kept as keys)."""
    digest = hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS)).hexdigest()
    now = time.monotonic()
    with _recent_lock:
        for stale in [k for k, (at, _) in _recent.items() if now - at > REUSE_S]:
            del _recent[stale]
        hit = _recent.get(digest)
    if hit is None:
        value = compute()
        with _recent_lock:
            _recent[digest] = (time.monotonic(), value)
    else:
        value = hit[1]
    return orjson.loads(orjson.dumps(value))


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


class TapExited:
    """The queue's last item: the process ended with `returncode`."""

    __slots__ = ("returncode",)

    def __init__(self, returncode: int) -> None:
        self.returncode = returncode


class TapProcess:
    """A running tap: `next_chunk()` gives lists of its stdout lines (bytes, without the newline), then a TapExited."""

    def __init__(self, args: Sequence[str], name: str, secrets: Sequence[str] = ()) -> None:
        self.name = name
        self._secrets = list(secrets)
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._queue: queue.Queue[list[bytes] | TapExited] = queue.Queue(QUEUE_CHUNKS)
        self._stopping = threading.Event()
        self.proc = subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_child_env(),
            start_new_session=True,  # its own process group: a stop reaches the tap's children too
        )
        self._stderr_thread = threading.Thread(target=self._read_stderr, name=f"{name}-stderr", daemon=True)
        self._stdout_thread = threading.Thread(target=self._read_stdout, name=f"{name}-stdout", daemon=True)
        self._stderr_thread.start()
        self._stdout_thread.start()

    def _put(self, item: list[bytes] | TapExited) -> bool:
        while not self._stopping.is_set():
            try:
                self._queue.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        pending = b""
        try:
            while True:
                data = os.read(fd, READ_CHUNK)
                if not data:
                    break
                data = pending + data if pending else data
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    pending = data
                    continue
                pending = data[cut:]
                lines = data[: cut - 1].split(b"\n")
                if not self._put(lines):
                    return
                if len(data) < COALESCE_BELOW:
                    # a tap flushes every message: reading each as it comes wakes this thread and the task's
                    # for every line, which slows the tap itself on a busy machine; a short pause lets lines
                    # gather in the pipe (64 KiB) and go as one chunk
                    time.sleep(COALESCE_S)
            if pending.strip():
                self._put([pending])
        except OSError as exc:
            if not self._stopping.is_set():
                log.warning("%s: reading its output failed: %s", self.name, exc)
        self._stderr_thread.join()
        self._put(TapExited(self.proc.wait()))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = redact(raw.decode("utf-8", "replace").rstrip(), self._secrets)
            self._stderr.append(line)
            log.debug("%s: %s", self.name, line)

    def next_chunk(self, timeout_s: float) -> list[bytes] | TapExited | None:
        """The next lines or the exit, or None when nothing came within `timeout_s`."""
        try:
            return self._queue.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def stop(self, grace_s: float) -> None:
        """End the tap: SIGTERM, then SIGKILL after `grace_s`; its output is no longer read."""
        self._stopping.set()
        if self.proc.poll() is None:
            _kill_group(self.proc, signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop within %.1f s of SIGTERM; killing it", self.name, grace_s)
                _kill_group(self.proc, signal.SIGKILL)
                self.proc.wait()
        # the process group is gone, so its pipes end: the readers finish before the pipes are closed
        self._stdout_thread.join(2.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def failure(what: str, returncode: int, stderr: str) -> ConnectError:
    """The error a task fails with when its tap failed: the exit code and the tap's last stderr lines."""
    body = tail(stderr) or "(no output on stderr)"
    return ConnectError(f"{what} exited with code {returncode}; the last lines of its stderr:\n{body}")
