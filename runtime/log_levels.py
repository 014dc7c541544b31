"""This process's log levels (KIP-495, KIP-976) over Python's logging, with log4j's level names: set for a
namespace and every logger below it, with the time of each change, and heard by listeners (the task
processes of the worker, which apply the same change to their own loggers)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

LEVELS = {
    "ALL": 1,
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": logging.CRITICAL + 10,
}
NAMES = {number: name for name, number in LEVELS.items()}

LevelListener = Callable[[str, int], None]


def level_number(name: str) -> int | None:
    """The level a log4j level name means (any case), or None if it names none."""
    return LEVELS.get(name.upper())


def level_name(number: int) -> str:
    if number in NAMES:
        return NAMES[number]
    for candidate in sorted(NAMES, reverse=True):
        if number >= candidate:
            return NAMES[candidate]
    return "ALL"


def _is_root(namespace: str) -> bool:
    return namespace.lower() == "root"


class LogLevels:
    """The levels of one process's loggers; one instance, LOG_LEVELS, as logging's own state is one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_modified: dict[str, int] = {}
        self._listeners: list[LevelListener] = []

    def last_modified(self, name: str) -> int | None:
        with self._lock:
            return self._last_modified.get(name)

    def set(self, namespace: str, number: int) -> list[str]:
        """Set `namespace` (`root`: every logger) and every logger below it; returns the affected names,
        sorted. A logger already at that level keeps its last-modified time, as in the reference."""
        with self._lock:
            loggers = {n: lg for n, lg in logging.Logger.manager.loggerDict.items() if isinstance(lg, logging.Logger)}
            if _is_root(namespace):
                targets = {"root": logging.getLogger(), **loggers}
            else:
                prefix = namespace + "."
                targets = {namespace: logging.getLogger(namespace)}
                targets.update({n: lg for n, lg in loggers.items() if n.startswith(prefix)})
            now = int(time.time() * 1000)
            for name, logger in targets.items():
                if logger.level != number:
                    logger.setLevel(number)
                    self._last_modified[name] = now
            listeners = list(self._listeners)
        for listener in listeners:
            listener(namespace, number)
        return sorted(targets)

    def explicit(self) -> list[tuple[str, int]]:
        """Every logger with a level of its own, root first, parents before children: what a new task
        process applies (each name alone) to start with this process's levels."""
        with self._lock:
            named = sorted(
                (n, lg.level)
                for n, lg in logging.Logger.manager.loggerDict.items()
                if isinstance(lg, logging.Logger) and lg.level != logging.NOTSET
            )
            return [("root", logging.getLogger().level), *named]

    def add_listener(self, listener: LevelListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: LevelListener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)


def apply_exact(levels: list[tuple[str, int]]) -> None:
    """Give each named logger exactly its level (no loggers below it): a task process's starting levels."""
    for name, number in levels:
        (logging.getLogger() if _is_root(name) else logging.getLogger(name)).setLevel(number)


LOG_LEVELS = LogLevels()

__all__ = ["LEVELS", "LOG_LEVELS", "TRACE", "LevelListener", "LogLevels", "apply_exact", "level_name", "level_number"]
