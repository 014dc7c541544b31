"""Connectors: the plugin classes users name in `connector.class`.

A connector is started with its config, splits its work into task configs, and is stopped. Source
and sink connectors may override `alter_offsets` (KIP-875) with this contract:
- return True: the connector manages its offsets itself and has applied the change; the REST answer
  is the "definite" message;
- return False (the default): the runtime changes the offsets it manages; the answer is the
  "possible" message, warning that external offsets may need changing by hand;
- raise UnsupportedOperationError: the request fails with 500 "... doesn't support external
  modification of offsets" and nothing is changed;
- raise anything else: the request fails with 500 and nothing is changed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from .config import ConfigDef, ConfigValue
from .transactions import ConnectorTransactionBoundaries, ExactlyOnceSupport

if TYPE_CHECKING:
    from .records import TopicPartition
    from .task import OffsetStorageReader, Task


class ConnectorContext:
    """Given to a connector by the runtime."""

    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call `task_configs` again and restart the tasks if they changed."""
        raise NotImplementedError

    def raise_error(self, error: BaseException) -> None:
        """Mark the connector FAILED with this error, from any thread."""
        raise NotImplementedError


class SourceConnectorContext(ConnectorContext):
    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        raise NotImplementedError


class SinkConnectorContext(ConnectorContext):
    pass


class Connector(ABC):
    """Base class of every connector."""

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    def version(self) -> str:
        """The plugin's version, shown in `GET /connector-plugins`; "undefined" hides it."""
        from ..version import __version__

        return __version__

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with the connector's config; raise to go FAILED."""

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The Task class this connector runs."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most `max_tasks` task configs."""

    @abstractmethod
    def stop(self) -> None:
        """Release what `start` acquired."""

    def config(self) -> ConfigDef:
        """The connector's own config keys (the runtime adds the framework keys)."""
        return ConfigDef()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        """Per-key validation results; the default validates against `config()`."""
        return self.config().validate(connector_configs)


class SourceConnector(Connector):
    """Reads from an external system into Kafka."""

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | str | None:
        """Whether the connector can deliver exactly once with this config (KIP-618): SUPPORTED, UNSUPPORTED,
        or None (the default: it does not say, so `exactly.once.support=required` is refused and `requested`
        runs it exactly once all the same). May be called before `start()`; the worker's exactly-once support
        can be assumed to be enabled."""
        return None

    def can_define_transaction_boundaries(
        self, connector_config: dict[str, str]
    ) -> ConnectorTransactionBoundaries | str | None:
        """Whether the connector's tasks define their own transaction boundaries with this config (through
        `SourceTaskContext.transaction_context()`): asked before `start()` when the config says
        `transaction.boundary=connector`. UNSUPPORTED by default; None is not a valid answer."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """KIP-875 hook: `offsets` pairs each source partition with its new offset (None = reset).

        See the module docstring for what the return value and exceptions mean.
        """
        return False


class SinkConnector(Connector):
    """Writes records from Kafka topics into an external system."""

    TOPICS_CONFIG = "topics"
    TOPICS_REGEX_CONFIG = "topics.regex"

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        """KIP-875 hook: each topic partition with its new offset (None = reset).

        See the module docstring for what the return value and exceptions mean.
        """
        return False
