"""The body of `POST /connectors/{c}/tasks`: read as raw bytes, as the reference does (no Content-Type check)."""

from __future__ import annotations

import json
from typing import Any

from ..control.errors import BadRequest


def parse_task_configs(raw: bytes) -> list[dict[str, str | None]]:
    """The body of `POST /connectors/{c}/tasks`: a JSON array of flat objects. Scalars become strings as
    Jackson coerces them (JSON null stays null); anything else is a 400 (section 0; the reference: 500)."""
    if not raw.strip():
        raise BadRequest("Request body is missing: a JSON array of task configs is required")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"Request body is not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise BadRequest("Cannot deserialize value: the request body must be a JSON array of task config objects")
    configs: list[dict[str, str | None]] = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise BadRequest(f"Cannot deserialize value at [{index}]: each task config must be a JSON object")
        config: dict[str, str | None] = {}
        for key, value in entry.items():
            if isinstance(value, (dict, list)):
                raise BadRequest(f"Cannot deserialize value at [{index}][{key!r}]: task config values must be strings")
            config[key] = _as_string(value)
        configs.append(config)
    return configs


def _as_string(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)
