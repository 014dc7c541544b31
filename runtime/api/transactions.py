"""Exactly-once source support (KIP-618): what a source connector answers about it, and how a task may
define its own transaction boundaries.

A worker with `exactly.once.source.support=enabled` (distributed mode) writes each source task's records and
their offsets in producer transactions. Where a transaction ends is the connector's
`transaction.boundary`: `poll` (every batch the task returns), `interval` (`transaction.boundary.interval.ms`)
or `connector`, where the task says it through the `TransactionContext` it gets from
`SourceTaskContext.transaction_context()`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .records import SourceRecord


class ExactlyOnceSupport(str, Enum):
    """`SourceConnector.exactly_once_support()`'s answers (a plain "SUPPORTED"/"UNSUPPORTED" string is
    taken as the member of that name)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(str, Enum):
    """`SourceConnector.can_define_transaction_boundaries()`'s answers."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class TransactionBoundary(str, Enum):
    """The values of a source connector's `transaction.boundary` (case-insensitive); `poll` by default."""

    POLL = "poll"
    INTERVAL = "interval"
    CONNECTOR = "connector"

    @classmethod
    def from_property(cls, value: str) -> TransactionBoundary:
        return cls(value.strip().lower())


class TransactionContext(ABC):
    """Given to the tasks of a connector with `transaction.boundary=connector` (else
    `SourceTaskContext.transaction_context()` is None). Calls take effect when the runtime has dispatched
    the batch (or the record) they name; they may come from any thread.

    A record is named by identity: the very object `poll()` returned in a list. A task returning
    `SourceRecordBatch` uses the batch-level calls.
    """

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit the transaction after the next batch `poll()` returns, or, given a record, after that record
        (it is then the transaction's last record)."""

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort the transaction after the next batch (or after `record`, its last record): its records never
        appear to read_committed consumers, but their offsets are committed, so they are not polled again
        (to have them polled again, raise from `poll()` instead). A record-level request wins over a
        batch-level one for the batch's last record."""


__all__ = ["ConnectorTransactionBoundaries", "ExactlyOnceSupport", "TransactionBoundary", "TransactionContext"]
