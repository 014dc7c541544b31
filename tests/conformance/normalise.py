"""Normalisers: make two correct workers' answers byte-comparable. Each one removes only what
legitimately differs between two deployments; anything else must match exactly.

1. Placeholders: the target's real connector/topic names and data folder -> `<<token>>` in every
   string and object key (they differ per target by construction).
2. `worker_id` -> `<worker>` once checked to be a "host:port" string (each worker has its own address).
3. `trace` -> `<trace>` (stack traces are implementation text; presence is still compared).
4. `commit` of `GET /` -> `<commit>`; `kafka_cluster_id` -> `<cluster-id>` (the suite checks live that both
   report the same broker cluster id); logger `last_modified` -> `<timestamp>` when not null.
5. `Location` header -> its path (host and port differ).
6. Unordered collections are sorted: `topics` arrays and `offsets` entries (by partition); the
   `GET /connectors` name array is sorted by the tests' projection.
7. A Java `Map.toString()` rendering inside a message (`Connector config {a=1, b=2} contains ...`) has
   its entries sorted: the reference prints HashMap iteration order, which no other runtime can match
   and no client can rely on.
Per-step projections (in the tests) narrow bodies where the contract allows extras: our plugin list
may hold more plugins, logger listings hold implementation loggers, plugin config compares the
connector's own keys.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

HOST_PORT = re.compile(r"^[^\s:]+:\d+$")
JAVA_MAP = re.compile(r"\{([^{}=]+=[^{}]*)\}")


def token_map(mapping: dict[str, str]) -> list[tuple[str, str]]:
    """Longest actual value first, so a name that contains another name is replaced whole."""
    return sorted(mapping.items(), key=lambda kv: -len(kv[0]))


def _sub(text: str, mapping: list[tuple[str, str]]) -> str:
    for actual, token in mapping:
        if actual in text:
            text = text.replace(actual, token)
    return text


def normalise_body(body: Any, mapping: list[tuple[str, str]]) -> Any:
    return _walk(body, mapping, parent_key=None)


def sort_java_maps(text: str) -> str:
    return JAVA_MAP.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


def _walk(obj: Any, mapping: list[tuple[str, str]], parent_key: str | None) -> Any:
    if isinstance(obj, str):
        return _sub(obj, mapping)
    if isinstance(obj, list):
        items = [_walk(v, mapping, parent_key) for v in obj]
        if parent_key == "topics" and all(isinstance(v, str) for v in items):
            items.sort()
        elif parent_key == "offsets" and all(isinstance(v, dict) for v in items):
            items.sort(key=lambda v: json.dumps(v.get("partition"), sort_keys=True))
        return items
    if not isinstance(obj, dict):
        return obj
    out: dict[str, Any] = {}
    for key, value in obj.items():
        new_key = _sub(key, mapping)
        if key == "worker_id" and isinstance(value, str) and HOST_PORT.match(value):
            out[new_key] = "<worker>"
        elif key == "trace" and isinstance(value, str) and value:
            out[new_key] = "<trace>"
        elif key == "commit" and isinstance(value, str) and "kafka_cluster_id" in obj:
            out[new_key] = "<commit>"
        elif key == "kafka_cluster_id" and isinstance(value, str) and value:
            out[new_key] = "<cluster-id>"
        elif key == "last_modified" and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[new_key] = "<timestamp>"
        elif key == "message" and isinstance(value, str):
            out[new_key] = sort_java_maps(_sub(value, mapping))
        else:
            out[new_key] = _walk(value, mapping, key)
    return out


def sorted_names(body: Any) -> Any:
    """For answers that are unordered arrays of names (GET /connectors, logger PUT)."""
    return sorted(body) if isinstance(body, list) and all(isinstance(v, str) for v in body) else body


def normalise_location(location: str | None, base_url: str, mapping: list[tuple[str, str]]) -> str | None:
    if location is None:
        return None
    path = urlsplit(location).path if location.startswith("http") else location
    return _sub(path, mapping)  # still percent-encoded: encoding is compared too
