"""Memory and local-file stores for standalone mode.

Files are rewritten whole and atomically (temp file, fsync, rename, fsync of the folder), so a
crash or a full disk leaves the previous version in place. Both files are JSON documents with a
`format` number; a reader skips fields and record types it does not know, with a log line.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .base import ConfigStore, OffsetStore
from .config_codec import ConnectorState, connector_records, read_records

log = logging.getLogger(__name__)

FORMAT = 1


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # pragma: no cover - some filesystems cannot fsync folders
        pass


def _read_document(path: Path, kind: str) -> dict[str, Any] | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"The {kind} file {path} is not valid JSON ({exc}); refusing to overwrite it") from exc
    if not isinstance(document, dict):
        raise ValueError(f"The {kind} file {path} does not hold a JSON object; refusing to overwrite it")
    version = document.get("format")
    if isinstance(version, int) and version > FORMAT:
        log.warning(
            "The %s file %s was written by a newer version (format %s); reading what this version knows",
            kind,
            path,
            version,
        )
    return document


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class MemoryOffsetStore(OffsetStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes | None] = {}

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return {k: self._data.get(k) for k in keys}

    def set(self, entries: Mapping[bytes, bytes | None]) -> None:
        with self._lock:
            self._apply(entries)

    def _apply(self, entries: Mapping[bytes, bytes | None]) -> None:
        self._data.update(entries)

    def items(self) -> list[tuple[bytes, bytes]]:
        with self._lock:
            return [(k, v) for k, v in self._data.items() if v is not None]


class FileOffsetStore(MemoryOffsetStore):
    """Source offsets in `offset.storage.file.filename`.

    Entries keep the reference's key/value bytes (JSON text); tombstones are kept as nulls, as the
    reference's file store does. Stored as {"format": 1, "offsets": [[key, value|null], ...]} with
    key and value as text when they are UTF-8 (always, for JSON) and {"base64": ...} otherwise.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)

    def start(self) -> None:
        document = _read_document(self.path, "offsets")
        if document is None:
            return
        entries = document.get("offsets")
        if not isinstance(entries, list):
            log.warning("Offsets file %s has no 'offsets' list; starting with no offsets", self.path)
            return
        for entry in entries:
            if not (isinstance(entry, list) and len(entry) == 2):
                log.warning("Skipping an unreadable entry in offsets file %s: %r", self.path, entry)
                continue
            key, value = (self._decode(part) for part in entry)
            if key is None:
                log.warning("Skipping an offsets entry without a key in %s", self.path)
                continue
            self._data[key] = value

    @staticmethod
    def _encode(data: bytes | None) -> Any:
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": _b64(data)}

    @staticmethod
    def _decode(part: Any) -> bytes | None:
        if part is None:
            return None
        if isinstance(part, str):
            return part.encode("utf-8")
        if isinstance(part, dict) and isinstance(part.get("base64"), str):
            return base64.b64decode(part["base64"])
        return None

    def _apply(self, entries: Mapping[bytes, bytes | None]) -> None:
        updated = dict(self._data)
        updated.update(entries)
        document = {"format": FORMAT, "offsets": [[self._encode(k), self._encode(v)] for k, v in updated.items()]}
        write_atomically(self.path, json.dumps(document, separators=(",", ":")).encode("utf-8"))
        self._data = updated  # only after the file holds it


class MemoryConfigStore(ConfigStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorState] = {}

    def load(self) -> dict[str, ConnectorState]:
        with self._lock:
            return copy.deepcopy(self._connectors)

    def save(self, name: str, state: ConnectorState | None) -> None:
        with self._lock:
            updated = dict(self._connectors)
            if state is None:
                updated.pop(name, None)
            else:
                updated[name] = copy.deepcopy(state)
            self._persist(updated)
            self._connectors = updated

    def _persist(self, connectors: dict[str, ConnectorState]) -> None:
        pass


class FileConfigStore(MemoryConfigStore):
    """Connector configs, task configs and target states in `config.storage.file.filename`.

    Holds the reference's config-topic records: {"format": 1, "records": [{"key": k, "value": v}, ...]},
    so its contents read exactly like the config topic of a distributed cluster.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)

    def start(self) -> None:
        document = _read_document(self.path, "connector configs")
        if document is None:
            return
        raw_records = document.get("records")
        if not isinstance(raw_records, list):
            log.warning("Connector configs file %s has no 'records' list; starting with no connectors", self.path)
            return
        records = []
        for entry in raw_records:
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                records.append((entry["key"], entry.get("value")))
            else:
                log.warning("Skipping an unreadable record in %s: %r", self.path, entry)
        snapshot = read_records(records)
        self._connectors = snapshot.connectors

    def _persist(self, connectors: dict[str, ConnectorState]) -> None:
        records = [
            {"key": k, "value": v} for name, state in connectors.items() for k, v in connector_records(name, state)
        ]
        document = {"format": FORMAT, "records": records}
        write_atomically(self.path, json.dumps(document, indent=1).encode("utf-8"))
