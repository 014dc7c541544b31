"""The tap's catalog: discovered (or given), streams selected, incremental replication keys set.

The catalog stays a plain dict on its way back to the tap: taps read fields and metadata no library models
completely (singer-sdk's `Catalog.to_dict` would drop what it does not know), so selection edits the
standard entries in place: the stream's root metadata `selected`, `replication-method` and `replication-key`
(and the entry's `replication_method`/`replication_key`, which SDK taps read first).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ...api import ConfigError
from ..tap_process import PrivateDir, failure, recent, run_command

_TOPIC_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]")


def topic_for(prefix: str, stream_id: str) -> str:
    return prefix + _TOPIC_UNSAFE.sub("_", stream_id)


def discover(executable: str, tap_config: dict[str, Any], timeout_s: float, secrets: list[str]) -> dict[str, Any]:
    """The tap's catalog (reused from a discovery of the last moments: see `recent`); the caller may edit it."""
    return recent(
        ["singer-discover", executable, tap_config], lambda: _run_discovery(executable, tap_config, timeout_s, secrets)
    )


def _run_discovery(executable: str, tap_config: dict[str, Any], timeout_s: float, secrets: list[str]) -> dict[str, Any]:
    """`tap --config ... --discover`; ConfigError with the tap's stderr when it fails."""
    with PrivateDir("singer-discover-") as private:
        config_path = private.write_json("config.json", tap_config)
        code, out, err = run_command([executable, "--config", config_path, "--discover"], timeout_s, secrets)
    if code != 0:
        raise ConfigError(str(failure(f"The tap's discovery ({Path(executable).name} --discover)", code, err)))
    try:
        catalog = orjson.loads(out)
    except orjson.JSONDecodeError:
        raise ConfigError(f"The tap's --discover output is not a JSON catalog: {out[:200]!r}") from None
    return _checked(catalog, "--discover output")


def load_catalog(raw: str) -> dict[str, Any]:
    """The `tap.catalog` setting: JSON text, or the path of a JSON file."""
    text = raw.strip()
    if not text.startswith("{"):
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"Cannot read the catalog file {raw}: {exc.strerror or exc}") from None
    try:
        catalog = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"The catalog is not valid JSON: {exc}") from None
    return _checked(catalog, "catalog")


def _checked(catalog: Any, what: str) -> dict[str, Any]:
    if not isinstance(catalog, dict) or not isinstance(catalog.get("streams"), list):
        raise ConfigError(f"The tap's {what} has no 'streams' list")
    for entry in catalog["streams"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("tap_stream_id"), str):
            raise ConfigError(f"The tap's {what} has a stream without a tap_stream_id: {str(entry)[:200]}")
    return catalog


def stream_ids(catalog: dict[str, Any]) -> list[str]:
    return [entry["tap_stream_id"] for entry in catalog["streams"]]


def parse_replication_keys(entries: list[str]) -> dict[str, str]:
    keys: dict[str, str] = {}
    for entry in entries:
        stream, sep, column = entry.partition("=")
        if not sep or not stream.strip() or not column.strip():
            raise ConfigError(f"replication.keys entries are stream=column, got {entry!r}")
        keys[stream.strip()] = column.strip()
    return keys


def selection_errors(catalog: dict[str, Any], streams: list[str], replication_keys: dict[str, str]) -> dict[str, str]:
    """Problems of `streams` and `replication.keys` against the catalog, by setting name."""
    known = {entry["tap_stream_id"]: entry for entry in catalog["streams"]}
    errors: dict[str, str] = {}
    unknown = [s for s in streams if s not in known]
    if unknown:
        errors["streams"] = f"The tap has no streams {unknown}; its streams: {sorted(known)}"
    chosen = set(streams) if streams else set(known)
    for stream, column in replication_keys.items():
        if stream not in chosen:
            errors["replication.keys"] = f"{stream} is not a selected stream"
        elif column not in ((known[stream].get("schema") or {}).get("properties") or {}):
            errors["replication.keys"] = f"{stream} has no column {column!r}"
    return errors


def _root_metadata(entry: dict[str, Any]) -> dict[str, Any]:
    metadata = entry.setdefault("metadata", [])
    for item in metadata:
        if isinstance(item, dict) and item.get("breadcrumb") == []:
            return item.setdefault("metadata", {})
    root: dict[str, Any] = {}
    metadata.append({"breadcrumb": [], "metadata": root})
    return root


def selected(catalog: dict[str, Any], streams: list[str], replication_keys: dict[str, str]) -> list[dict[str, Any]]:
    """The catalog entries to sync (all when `streams` is empty), each marked selected, with their keys."""
    wanted = set(streams)
    entries = []
    for entry in catalog["streams"]:
        stream_id = entry["tap_stream_id"]
        if wanted and stream_id not in wanted:
            continue
        root = _root_metadata(entry)
        root["selected"] = True
        column = replication_keys.get(stream_id)
        if column:
            root["replication-method"] = "INCREMENTAL"
            root["replication-key"] = column
            entry["replication_method"] = "INCREMENTAL"
            entry["replication_key"] = column
        entries.append(entry)
    return entries


def split(entries: list[dict[str, Any]], max_tasks: int) -> list[dict[str, Any]]:
    """The streams dealt round-robin into at most `max_tasks` catalogs, one per task (each task runs its own tap)."""
    count = max(1, min(max_tasks, len(entries)))
    catalogs: list[dict[str, Any]] = [{"streams": []} for _ in range(count)]
    for i, entry in enumerate(entries):
        catalogs[i % count]["streams"].append(entry)
    return catalogs
