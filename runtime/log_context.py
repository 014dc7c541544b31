"""The reference's connector context in log lines (`[name|task-0] `, `[name|worker] `), and JSON lines.

Kafka Connect puts the context in log4j's MDC (`connector.context`) on the threads that work for a
connector; here a thread-local holds it and a logging filter copies it onto every record, so formats can
show it with `%(connector_context)s` and the JSON formatter as fields of their own.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_local = threading.local()


def set_task_context(connector: str, index: int) -> None:
    """For the rest of this thread (a task's own thread): lines carry `[connector|task-N] `."""
    _local.context = (connector, f"task-{index}")


@contextmanager
def connector_context(connector: str, scope: str = "worker") -> Iterator[None]:
    """While the block runs on this thread, lines carry `[connector|scope] ` (the reference's `worker` scope
    for connector operations)."""
    previous = getattr(_local, "context", None)
    _local.context = (connector, scope)
    try:
        yield
    finally:
        _local.context = previous


class ConnectorContextFilter(logging.Filter):
    """Adds `connector_context` (the prefix, or ""), `connector` and `scope` to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = getattr(_local, "context", None)
        if context is None:
            record.connector_context, record.connector, record.scope = "", None, None
        else:
            record.connector, record.scope = context
            record.connector_context = f"[{context[0]}|{context[1]}] "
        return True


class JsonLineFormatter(logging.Formatter):
    """`log.format=json`: one JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "timestamp": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        connector = getattr(record, "connector", None)
        if connector is not None:
            entry["connector"] = connector
            entry["scope"] = getattr(record, "scope", None)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


TEXT_FORMAT = "[%(asctime)s] %(levelname)s %(connector_context)s%(message)s (%(name)s)"


def install(handler: logging.Handler, fmt: str) -> None:
    """Give `handler` the context filter and the text or JSON format."""
    handler.addFilter(ConnectorContextFilter())
    if fmt == "json":
        formatter: logging.Formatter = JsonLineFormatter()
        formatter.converter = time.gmtime  # the trailing Z says UTC
    else:
        formatter = logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(formatter)


__all__ = ["ConnectorContextFilter", "JsonLineFormatter", "connector_context", "install", "set_task_context"]
