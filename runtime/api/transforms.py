"""Single message transforms (SMTs) and predicates, as Kafka Connect's Transformation and Predicate."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from .config import ConfigDef
from .records import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    """Applied to each record in order; return a (new) record, or None to drop it."""

    def configure(self, configs: dict[str, str]) -> None:
        """The transform's own settings (`transforms.<alias>.` prefix stripped)."""

    @abstractmethod
    def apply(self, record: R) -> R | None: ...

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        pass

    def version(self) -> str:
        from ..version import __version__

        return __version__


class Predicate(ABC, Generic[R]):
    """Decides whether a transform applies to a record (`transforms.<alias>.predicate`)."""

    def configure(self, configs: dict[str, str]) -> None:
        pass

    @abstractmethod
    def test(self, record: R) -> bool: ...

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        pass

    def version(self) -> str:
        from ..version import __version__

        return __version__
