"""Shared helpers of the hardening tests (issue 6): connector classes and a strict create helper."""

from __future__ import annotations

from typing import Any

import httpx

SOURCE = "runtime.connectors.testing.SequenceSourceConnector"
SINK = "runtime.connectors.testing.RecordingSinkConnector"


def create_connector(
    client: httpx.Client, name: str, config: dict[str, str], initial_state: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "config": config}
    if initial_state:
        body["initial_state"] = initial_state
    answer = client.post("/connectors", json=body)
    assert answer.status_code == 201, f"create {name}: {answer.status_code} {answer.text}"
    return answer.json()
