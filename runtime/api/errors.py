"""Exceptions a connector may raise, and that the runtime raises back to it."""

from __future__ import annotations


class ConnectError(Exception):
    """Base class of every Kafka Connect error (Java's ConnectException)."""


class DataError(ConnectError):
    """A record or value could not be converted or is malformed (Java's DataException)."""


class RetriableError(ConnectError):
    """A transient failure: the runtime may retry the operation (Java's RetriableException)."""


class ConfigError(ConnectError):
    """A configuration value is missing or invalid (Java's ConfigException)."""

    def __init__(self, name_or_message: str, value: object = None, message: str | None = None) -> None:
        if message is None and value is None:
            text = name_or_message
        else:
            text = f"Invalid value {value} for configuration {name_or_message}"
            if message:
                text += f": {message}"
        super().__init__(text)


class NotFoundError(ConnectError):
    """A connector, task or plugin does not exist."""


class AlreadyExistsError(ConnectError):
    """A connector with that name already exists."""


class UnsupportedOperationError(ConnectError):
    """Raised by `alter_offsets` when a connector cannot have its offsets modified externally."""
