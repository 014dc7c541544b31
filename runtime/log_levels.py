"""log4j's level names over Python's logging (TRACE, WARN, FATAL, OFF), for the worker's `log.level`, task
processes and the runtime log level API (KIP-495)."""
from __future__ import annotations

import logging

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

LEVELS = {"ALL": 1, "TRACE": TRACE, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
          "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "OFF": logging.CRITICAL + 10}
NAMES = {number: name for name, number in LEVELS.items()}


def level_name(number: int) -> str:
    if number in NAMES:
        return NAMES[number]
    for candidate in sorted(NAMES, reverse=True):
        if number >= candidate:
            return NAMES[candidate]
    return "ALL"
