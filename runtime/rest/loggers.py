"""Runtime log levels (KIP-495, KIP-976) over Python's logging, with log4j's level names."""
from __future__ import annotations

import logging
import threading
import time

from ..control.errors import BadRequest, NotFound
from ..log_levels import LEVELS, level_name


class LoggerAdmin:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_modified: dict[str, int] = {}

    @staticmethod
    def _explicit_loggers() -> dict[str, logging.Logger]:
        manager = logging.Logger.manager
        return {name: logger for name, logger in manager.loggerDict.items()
                if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET}

    def _entry(self, name: str, logger: logging.Logger) -> dict[str, object]:
        return {"level": level_name(logger.getEffectiveLevel()), "last_modified": self._last_modified.get(name)}

    def all(self) -> dict[str, dict[str, object]]:
        with self._lock:
            entries = {name: self._entry(name, logger) for name, logger in self._explicit_loggers().items()}
            entries["root"] = self._entry("root", logging.getLogger())
        return dict(sorted(entries.items()))

    def get(self, name: str) -> dict[str, object]:
        if name.lower() == "root":
            with self._lock:
                return self._entry("root", logging.getLogger())
        logger = logging.Logger.manager.loggerDict.get(name)
        if not isinstance(logger, logging.Logger):
            raise NotFound(f"Logger {name} not found.")
        with self._lock:
            return self._entry(name, logger)

    def set_level(self, namespace: str, level: str | None) -> list[str]:
        """Set `namespace` and every logger below it; returns the affected names (sorted)."""
        if level is None:
            raise BadRequest("Desired 'level' parameter was not specified in request.")
        number = LEVELS.get(level.upper())
        if number is None:
            raise NotFound(f"invalid log level '{level}'.")
        is_root = namespace.lower() == "root"
        with self._lock:
            if is_root:
                targets = {"root": logging.getLogger()}
                targets.update({n: lg for n, lg in logging.Logger.manager.loggerDict.items() if isinstance(lg, logging.Logger)})
            else:
                targets = {namespace: logging.getLogger(namespace)}
                prefix = namespace + "."
                targets.update({n: lg for n, lg in logging.Logger.manager.loggerDict.items()
                                if isinstance(lg, logging.Logger) and n.startswith(prefix)})
            now = int(time.time() * 1000)
            for name, logger in targets.items():
                if logger.level != number:
                    logger.setLevel(number)
                    self._last_modified[name] = now
        return sorted(targets)
