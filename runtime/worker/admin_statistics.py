"""librdkafka's statistics of the admin clients a worker process holds, for the metrics layer.

A task's producer or consumer hands its statistics to its runner (`TaskRunner.on_client_stats`, served by the
task's own poll loop). An admin client has no such loop, and librdkafka delivers statistics only when the
application polls the client, so the admin clients `create_client` builds are registered here (weakly: one its
owner drops is forgotten) and polled once a second by one daemon thread. The latest document of each is kept
for `GET /metrics` (`kafka_admin_client_connection_count`). One registry per process: a process runs one worker.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import weakref
from typing import Any

import orjson

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 1.0  # how late a statistics document may reach /metrics after librdkafka emitted it


class AdminStatistics:
    def __init__(self, poll_interval_s: float = POLL_INTERVAL_S) -> None:
        self._poll_interval_s = poll_interval_s
        self._lock = threading.Lock()
        self._keys = itertools.count()
        self._clients: dict[int, weakref.ref[Any]] = {}
        self._latest: dict[int, dict[str, Any]] = {}
        self._thread: threading.Thread | None = None

    def configure(self, config: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A key for the client about to be built, and its config with a `stats_cb` recording under that key
        (a `stats_cb` or interval already set is kept)."""
        key = next(self._keys)
        configured = {"statistics.interval.ms": "30000", **config}
        configured.setdefault("stats_cb", lambda raw: self._record(key, raw))
        return key, configured

    def watch(self, key: int, client: Any) -> None:
        """Poll `client` (built from `configure`'s config) until it is dropped."""
        with self._lock:
            self._clients[key] = weakref.ref(client, lambda _: self._forget(key))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="admin-client-statistics", daemon=True)
                self._thread.start()

    def latest(self) -> list[dict[str, Any]]:
        """The latest statistics document of every live admin client that has emitted one."""
        with self._lock:
            return list(self._latest.values())

    def _record(self, key: int, raw: str) -> None:
        try:
            document = orjson.loads(raw)
        except orjson.JSONDecodeError:
            log.debug("Unreadable admin client statistics")
            return
        with self._lock:
            if key in self._clients:
                self._latest[key] = document

    def _forget(self, key: int) -> None:
        with self._lock:
            self._clients.pop(key, None)
            self._latest.pop(key, None)

    def _run(self) -> None:
        while True:  # a daemon thread: it lives as long as the process
            time.sleep(self._poll_interval_s)
            self._poll_all()

    def _poll_all(self) -> None:
        with self._lock:
            clients = [ref() for ref in self._clients.values()]
        for client in clients:
            if client is not None:
                try:
                    client.poll(0)  # serves the client's callbacks, its stats_cb among them
                except Exception as exc:  # noqa: BLE001 - a closed client is forgotten once dropped
                    log.debug("Polling an admin client for statistics failed: %s", exc)


ADMIN_STATISTICS = AdminStatistics()
