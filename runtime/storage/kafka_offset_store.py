"""Source offsets in the worker's offsets topic (`offset.storage.topic`), as KafkaOffsetBackingStore keeps them.

Keys and values are the raw bytes of `offset_codec` (`["<connector>",{...}]` -> `{...}` or a tombstone),
so a Java worker and this one read each other's offsets. Like the reference, `get()`/`items()` first read
the topic to its end, so they see offsets other workers committed; `set()` returns once the broker has
acknowledged every record (acks=all) and this store's reader has seen them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from .base import OffsetStore
from .kafka_log import KafkaBasedLog, TopicSpec

log = logging.getLogger(__name__)


class KafkaOffsetStore(OffsetStore):
    def __init__(
        self,
        spec: TopicSpec,
        client_config: dict[str, str],
        *,
        read_strategy: str = "watermark",
        read_timeout_s: float = 30.0,
        **log_options: Any,
    ) -> None:
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes] = {}
        self._read_timeout_s = read_timeout_s
        self.log = KafkaBasedLog(spec, client_config, self._apply, read_strategy=read_strategy, **log_options)

    def start(self) -> None:
        self.log.start(self._read_timeout_s)

    def stop(self) -> None:
        self.log.stop()

    def _apply(self, key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        if key is None:
            log.warning(
                "Ignoring a record without a key at offset %d of partition %d of the offsets topic", offset, partition
            )
            return
        with self._lock:
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        self.log.read_to_end(self._read_timeout_s)
        with self._lock:
            return {k: self._data.get(k) for k in keys}

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        if not entries:
            return
        # acknowledged is enough: every read (get, items) first reads the topic to its end, as the reference's
        # KafkaOffsetBackingStore does, so waiting here for our own records to come back would only add a hop
        self.log.send(list(entries.items()), self._read_timeout_s)

    def items(self) -> list[tuple[bytes, bytes]]:
        self.log.read_to_end(self._read_timeout_s)
        with self._lock:
            return list(self._data.items())
