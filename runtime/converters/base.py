"""Converters turn Connect data (schema + Python value) into bytes for Kafka and back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..api.config import ConfigDef
from ..api.data import Schema


class Converter(ABC):
    """Key/value converter (Java's Converter). One instance per task and per key or value side."""

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        """`configs` are the converter's own settings, prefix already stripped."""

    @abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialize; raise DataError when the value does not fit."""

    @abstractmethod
    def to_connect_data(self, topic: str, value: bytes | None) -> tuple[Schema | None, Any]:
        """Deserialize; raise DataError on malformed input."""

    def config(self) -> ConfigDef:
        return ConfigDef()


class HeaderConverter(ABC):
    """Header converter (Java's HeaderConverter)."""

    def configure(self, configs: dict[str, Any]) -> None:
        pass

    @abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> tuple[Schema | None, Any]: ...

    def config(self) -> ConfigDef:
        return ConfigDef()
