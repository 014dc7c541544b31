"""Comparing one case's results: byte for byte, except the iteration order of Java HashMap-backed maps.

The reference's JsonConverter reads every JSON object that is not a struct into a java.util.HashMap, and
transforms build HashMaps too, so map entries come out in hash-bucket order; this runtime keeps insertion order.
Struct fields are ordered by their schema and compared as they are; only map entries (schema type map, or any
object without a schema) are put in key order before comparing, and only when the exact bytes differ.
"""

from __future__ import annotations

import difflib
import json
from typing import Any


def _canonical_payload(schema: dict[str, Any] | None, payload: Any) -> Any:
    if payload is None:
        return None
    if schema is None:
        if isinstance(payload, dict):
            return {k: _canonical_payload(None, payload[k]) for k in sorted(payload)}
        if isinstance(payload, list):
            return [_canonical_payload(None, v) for v in payload]
        return payload
    kind = schema.get("type")
    if kind == "struct" and isinstance(payload, dict):
        fields = {f["field"]: f for f in schema.get("fields", [])}
        return {k: _canonical_payload(fields.get(k), v) for k, v in payload.items()}
    if kind == "array" and isinstance(payload, list):
        return [_canonical_payload(schema.get("items"), v) for v in payload]
    if kind == "map":
        values = schema.get("values")
        if isinstance(payload, dict):
            return {k: _canonical_payload(values, payload[k]) for k in sorted(payload)}
        if isinstance(payload, list):  # non-string keys: [[k, v], ...]
            pairs = [[_canonical_payload(schema.get("keys"), k), _canonical_payload(values, v)] for k, v in payload]
            return sorted(pairs, key=lambda p: json.dumps(p, sort_keys=True))
    return payload


def _canonical_text(text: str | None, schema_text: str | None, enveloped: bool) -> str | None:
    if text is None:
        return None
    node = json.loads(text)
    if enveloped and isinstance(node, dict) and set(node) == {"schema", "payload"}:
        return json.dumps({"schema": node["schema"], "payload": _canonical_payload(node["schema"], node["payload"])})
    schema = json.loads(schema_text) if schema_text else None
    return json.dumps(_canonical_payload(schema, node))


def canonical(result: dict[str, Any], schemas: bool) -> dict[str, Any]:
    """`result` with map entries in key order (see the module docstring)."""
    out = json.loads(json.dumps(result))
    for one in out.get("results", []):
        rec = one.get("record")
        if not rec:
            continue
        for side in ("key", "value"):
            rec[side] = _canonical_text(rec[side], rec.get(f"{side}_schema"), schemas)
        rec["headers"] = [[k, _canonical_text(v, None, True)] for k, v in rec["headers"]]
    return out


def differences(case: dict[str, Any], reference: dict[str, Any], ours: dict[str, Any]) -> str | None:
    """None when the results match; otherwise a readable report with a unified diff."""
    if reference == ours:
        return None
    if canonical(reference, case["schemas"]) == canonical(ours, case["schemas"]):
        return None
    want = json.dumps(reference, indent=2, ensure_ascii=False).splitlines()
    got = json.dumps(ours, indent=2, ensure_ascii=False).splitlines()
    diff = "\n".join(difflib.unified_diff(want, got, "reference (Kafka Connect 3.9)", "this runtime", lineterm=""))
    return f"case {case['id']}\nconfig: {json.dumps(case['config'])}\n{diff}"


def without_messages(result: dict[str, Any]) -> dict[str, Any]:
    """`result` with the exceptions' messages dropped (their classes still compared)."""
    out = json.loads(json.dumps(result))
    errors = [out.get("configure_error")] + [
        one.get(k) for one in out.get("results", []) for k in ("error", "input_error", "output_error")
    ]
    for error in errors:
        if error:
            error.pop("message", None)
    return out
