"""Worker-group membership from heartbeat records in the status topic.

Every worker writes `worker-heartbeat-<worker id>` -> JSON {worker_id, url, incarnation, started_ms,
timestamp_ms, generation} every `heartbeat.interval.ms` (and at once after applying an assignment, so the
record doubles as the acknowledgement of that generation). A tombstone of the key means the worker left
gracefully. A peer is live while its last heartbeat is younger than `session.timeout.ms`, measured on the
reader's own monotonic clock when the record arrives; records replayed at startup are aged by their
wall-clock timestamp instead (so a long-dead worker is not resurrected by its old heartbeat).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import orjson

HEARTBEAT_PREFIX = "worker-heartbeat-"


@dataclass(frozen=True)
class Heartbeat:
    worker_id: str
    url: str
    incarnation: str
    started_ms: int
    timestamp_ms: int
    generation: int  # the latest assignment generation this worker has applied (its revocations done)

    def key(self) -> str:
        return HEARTBEAT_PREFIX + self.worker_id

    def encode(self) -> bytes:
        return orjson.dumps({"worker_id": self.worker_id, "url": self.url, "incarnation": self.incarnation,
                             "started_ms": self.started_ms, "timestamp_ms": self.timestamp_ms,
                             "generation": self.generation})


def decode_heartbeat(raw: bytes | None) -> Heartbeat | None:
    """The heartbeat in `raw`, or None when it is not one (callers log)."""
    if raw is None:
        return None
    try:
        value: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    ints = [value.get(f) for f in ("started_ms", "timestamp_ms", "generation")]
    strings = [value.get(f) for f in ("worker_id", "url", "incarnation")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints) or not all(isinstance(s, str) for s in strings):
        return None
    return Heartbeat(strings[0], strings[1], strings[2], ints[0], ints[1], ints[2])


class Membership:
    """Who is in the group, thread-safe: fed by the status topic's reader thread, read by the herder."""

    def __init__(self, session_timeout_s: float, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.session_timeout_s = session_timeout_s
        self._clock = clock
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._members: dict[str, tuple[Heartbeat, float]] = {}  # worker id -> (heartbeat, seen at)
        self.changed = threading.Event()  # set when a member joins, leaves or acknowledges

    def observe(self, worker_id: str, heartbeat: Heartbeat | None, replay: bool = False) -> None:
        now = self._clock()
        with self._lock:
            previous = self._members.get(worker_id)
            if heartbeat is None:
                self._members.pop(worker_id, None)
            else:
                seen = now
                if replay:  # age it by its timestamp; a clock ahead of ours counts as fresh
                    seen = now - max(0.0, self._wall() - heartbeat.timestamp_ms / 1000)
                if previous is not None and previous[0].incarnation == heartbeat.incarnation \
                        and previous[0].timestamp_ms > heartbeat.timestamp_ms:
                    return  # older than what we have (one key lives in one partition, but replays may repeat)
                self._members[worker_id] = (heartbeat, seen)
            if previous is None or heartbeat is None or previous[0].generation != heartbeat.generation \
                    or previous[0].incarnation != heartbeat.incarnation or now - previous[1] > self.session_timeout_s:
                self.changed.set()

    def live(self) -> dict[str, Heartbeat]:
        deadline = self._clock() - self.session_timeout_s
        with self._lock:
            return {w: hb for w, (hb, seen) in self._members.items() if seen >= deadline}

    def last_seen(self, worker_id: str) -> float | None:
        with self._lock:
            entry = self._members.get(worker_id)
        return None if entry is None else entry[1]

    def leader(self) -> Heartbeat | None:
        """The longest-running live worker (ties by id): stable while it lives, agreed on by all readers."""
        live = self.live()
        if not live:
            return None
        return min(live.values(), key=lambda hb: (hb.started_ms, hb.worker_id))
