"""One source connector's offsets: its own topic, with a copy in the worker's store (KIP-618).

As the reference's ConnectorOffsetBackingStore: a connector with `offsets.storage.topic` (distributed mode
only) has a connector-specific store, and the worker-global store gets a copy of every write (so the
worker topic is current if the key is later removed). Reads: the partition set is the union of both
stores', but each offset is the connector store's, even when it has none. The reference's get() merges
the worker store's answer with the connector store's, and the latter holds every requested key (null when
absent), so a partition known only to the worker topic reads as no offset: GET offsets lists it with
`"offset": null` and a task starts it over (checked against Kafka Connect 3.9). Writes with
tombstones are ordered as KAFKA-15018 requires: tombstones to the worker store first (a failure fails the
write), then everything to the connector store (a failure fails the write), then the non-tombstones to
the worker store (a failure is only logged). Without tombstones: connector store, then a best-effort
copy to the worker store. Only the connector store is started and stopped here: the worker store is
shared by every connector and managed by the worker.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from .base import OffsetStore

log = logging.getLogger(__name__)


class ConnectorOffsetStore(OffsetStore):
    def __init__(
        self,
        worker_store: OffsetStore | None,
        connector_store: OffsetStore | None = None,
        connector_topic: str | None = None,
    ) -> None:
        if worker_store is None and connector_store is None:
            raise ValueError("At least one non-null offset store must be provided")
        self.worker_store = worker_store
        self.connector_store = connector_store
        self.connector_topic = connector_topic

    @classmethod
    def worker_only(cls, worker_store: OffsetStore) -> ConnectorOffsetStore:
        return cls(worker_store, None)

    @property
    def has_connector_store(self) -> bool:
        return self.connector_store is not None

    def start(self) -> None:
        if self.connector_store is not None:
            try:
                self.connector_store.start()
            except BaseException:
                self._stop_quietly()  # a half-started store may hold clients and a reader thread
                raise

    def _stop_quietly(self) -> None:
        try:
            self.stop()
        except Exception as exc:  # noqa: BLE001 - closing after a failed start must not hide its error
            log.warning("Could not close the offset store of topic %s: %s", self.connector_topic, exc)

    def stop(self) -> None:
        if self.connector_store is not None:
            self.connector_store.stop()

    @property
    def _primary(self) -> OffsetStore:
        """The connector store when there is one, else the worker store (the constructor requires one)."""
        primary = self.connector_store if self.connector_store is not None else self.worker_store
        assert primary is not None
        return primary

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """The connector store's value of each key when there is a connector store, else the worker store's."""
        result: dict[bytes, bytes | None] = {k: None for k in keys}
        result.update(self._primary.get(keys))
        return result

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        if not entries:
            return
        primary = self._primary
        secondary = self.worker_store if self.connector_store is not None else None
        regular = {k: v for k, v in entries.items() if v is not None}
        tombstones = {k: v for k, v in entries.items() if v is None}
        if secondary is not None and tombstones:
            # a tombstone only in the connector topic would let reads fall back to the stale worker copy
            secondary.set(tombstones)
        primary.set(entries)
        if secondary is not None and regular:
            try:
                secondary.set(regular)
            except Exception as exc:  # noqa: BLE001 - the connector topic is the source of truth
                log.warning("Failed to write offsets to the worker's offset store (secondary): %s", exc)

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every live entry of either store (the union of partitions), the connector store's value winning;
        use get() for the offsets a task or an offsets request sees."""
        merged: dict[bytes, bytes] = {}
        if self.worker_store is not None:
            merged.update(self.worker_store.items())
        if self.connector_store is not None:
            merged.update(self.connector_store.items())
        return list(merged.items())


__all__ = ["ConnectorOffsetStore"]
