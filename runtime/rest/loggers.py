"""`/admin/loggers`'s view of this process's log levels (runtime/log_levels.py), with the reference's
errors."""

from __future__ import annotations

import logging

from ..control.errors import BadRequest, NotFound
from ..log_levels import LOG_LEVELS, level_name, level_number


class LoggerAdmin:
    @staticmethod
    def _entry(name: str, logger: logging.Logger) -> dict[str, object]:
        return {"level": level_name(logger.getEffectiveLevel()), "last_modified": LOG_LEVELS.last_modified(name)}

    def all(self) -> dict[str, dict[str, object]]:
        entries = {
            name: self._entry(name, logging.getLogger() if name == "root" else logging.getLogger(name))
            for name, _ in LOG_LEVELS.explicit()
        }
        return dict(sorted(entries.items()))

    def get(self, name: str) -> dict[str, object]:
        if name.lower() == "root":
            return self._entry("root", logging.getLogger())
        logger = logging.Logger.manager.loggerDict.get(name)
        if not isinstance(logger, logging.Logger):
            raise NotFound(f"Logger {name} not found.")
        return self._entry(name, logger)

    @staticmethod
    def level(level: str | None) -> str:
        """The level a PUT asks for, upper-cased; the reference's errors if it is missing or unknown."""
        if level is None:
            raise BadRequest("Desired 'level' parameter was not specified in request.")
        if level_number(level) is None:
            raise NotFound(f"invalid log level '{level}'.")
        return level.upper()

    def set_level(self, namespace: str, level: str | None) -> list[str]:
        """Set `namespace` and every logger below it in this worker; returns the affected names (sorted)."""
        number = level_number(self.level(level))
        assert number is not None
        return LOG_LEVELS.set(namespace, number)
