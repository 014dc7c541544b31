"""Tap state as Connect source offsets, committed with the records that precede it.

Singer STATE and Airbyte STATE messages say "everything before me is read". Kafka Connect stores a source
offset only with a record (and only once the broker acknowledged it and every record sent before it; the
plugin API has no offset-only commit), so a state is handed to the runtime on records read *before* it: the
last few records are held back (`StateCarrier`) until the states that follow them are attached, one source
partition per record. A change no held record can carry waits for the next records; one still waiting when
the run ends is not committed (the next run in this task still starts from it; after a restart the records
since the last committed state are read again: at least once, never lost).

Offsets must be flat maps of primitive values (Kafka's OffsetUtils): a bookmark's nested values are stored
as JSON text under their key with the suffix `.json` (`encode_bookmark` / `decode_bookmark`).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Mapping
from typing import Any

import orjson

from ..api import ConnectError, SourceRecord

JSON_SUFFIX = ".json"
_PRIMITIVES = (str, int, float, bool)

Partition = dict[str, Any]
Offset = dict[str, Any] | None


def encode_bookmark(bookmark: Mapping[str, Any]) -> dict[str, Any]:
    """A tap's bookmark (any JSON object) as a flat source offset."""
    flat: dict[str, Any] = {}
    for key, value in bookmark.items():
        if value is None or isinstance(value, _PRIMITIVES):
            flat[key] = value
        else:
            flat[key + JSON_SUFFIX] = orjson.dumps(value).decode()
    return flat


def decode_bookmark(offset: Mapping[str, Any]) -> dict[str, Any]:
    """The bookmark a source offset holds (the inverse of `encode_bookmark`)."""
    bookmark: dict[str, Any] = {}
    for key, value in offset.items():
        if key.endswith(JSON_SUFFIX) and isinstance(value, str):
            try:
                bookmark[key[: -len(JSON_SUFFIX)]] = orjson.loads(value)
                continue
            except orjson.JSONDecodeError:
                pass
        bookmark[key] = value
    return bookmark


def check_offsets(offsets: list[tuple[dict[str, Any], dict[str, Any] | None]], partition_keys: tuple[str, ...]) -> None:
    """KIP-875 alter requests: each partition names one stream (or the global state); each offset is a flat
    object of primitives (or null, to forget it). Raises ConnectError naming what is wrong."""
    for partition, offset in offsets:
        if not isinstance(partition, dict) or len(partition) != 1 or next(iter(partition)) not in partition_keys:
            raise ConnectError(
                f"Source partitions of this connector have exactly one key, one of {list(partition_keys)}; "
                f"got {partition!r}"
            )
        if not isinstance(next(iter(partition.values())), str):
            raise ConnectError(f"The source partition's value must be a string, got {partition!r}")
        if offset is None:
            continue
        for key, value in offset.items():
            if value is not None and not isinstance(value, _PRIMITIVES):
                raise ConnectError(
                    f"Offset values must be strings, numbers, booleans or null (nested values go under "
                    f"'<key>{JSON_SUFFIX}' as JSON text); {key!r} is {value!r}"
                )
            if key.endswith(JSON_SUFFIX) and isinstance(value, str):
                try:
                    orjson.loads(value)
                except orjson.JSONDecodeError:
                    raise ConnectError(f"Offset key {key!r} must hold JSON text, got {value!r}") from None


def _key(partition: Partition) -> bytes:
    return orjson.dumps(partition, option=orjson.OPT_SORT_KEYS)


class StateCarrier:
    """Holds back the last `hold` records so that the states that follow them can be committed with them.

    A state is attached to the held records (a record already carrying a partition the state changes takes
    the newer offset; otherwise the most recent free record), which stay held: a second state right after
    the first (sources often end with one) still finds them. They go out when newer records push them past
    `hold`, at the end of a run, or when the program has been quiet for a while (`release`).
    """

    def __init__(self, hold: int) -> None:
        self.hold = max(1, hold)
        self._held: collections.deque[SourceRecord] = collections.deque()
        self._waiting: dict[bytes, tuple[Partition, Offset]] = {}  # changes no record carries yet
        self.last_change = time.monotonic()

    def add(self, record: SourceRecord, out: list[SourceRecord]) -> None:
        """A record read from the program (without offsets); records held past `hold` go to `out`."""
        held = self._held
        held.append(record)
        self.last_change = time.monotonic()
        if len(held) > self.hold:
            out.append(held.popleft())

    def state(self, changes: list[tuple[Partition, Offset]]) -> None:
        """A state read after the records given so far: its changed partitions ride on the held records."""
        for partition, offset in changes:
            self._waiting[_key(partition)] = (partition, offset)
        self._attach()

    def _attach(self) -> None:
        waiting = self._waiting
        if not waiting or not self._held:
            return
        for record in self._held:
            if record.source_partition is not None:
                newer = waiting.pop(_key(record.source_partition), None)
                if newer is not None:
                    record.source_offset = newer[1]
        for record in reversed(self._held):
            if not waiting:
                break
            if record.source_partition is None:
                record.source_partition, record.source_offset = waiting.pop(next(iter(waiting)))

    def release(self, out: list[SourceRecord]) -> None:
        """Hand every held record to `out` (at the end of a run, or when the program has been quiet)."""
        self._attach()
        out.extend(self._held)
        self._held.clear()
        self.last_change = time.monotonic()

    @property
    def held(self) -> int:
        return len(self._held)

    def clear(self) -> None:
        self._held.clear()
        self._waiting.clear()
