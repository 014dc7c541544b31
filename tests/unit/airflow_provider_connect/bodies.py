"""Connect REST bodies the provider's sensors and triggers read, and a trigger's first event (shared by their tests)."""

from __future__ import annotations

import asyncio
from typing import Any

from airflow.triggers.base import BaseTrigger

from tests.unit.airflow_provider_connect.conftest import BASE

STATUS_URL = f"{BASE}/connectors/c/status"
OFFSETS_URL = f"{BASE}/connectors/c/offsets"


def source_config(**extra: object) -> dict[str, object]:
    """A FileStreamSource connector's config (as a user writes it: tasks.max a number), with `extra` keys."""
    return {"connector.class": "FileStreamSource", "topic": "t", "tasks.max": 1, **extra}


def status(state: str, tasks=(), trace: str = "java.lang.IllegalStateException: broken sink") -> dict[str, Any]:
    """The status of sink connector `c` in `state`, one task per entry of `tasks` (a FAILED task with `trace`)."""
    return {
        "name": "c",
        "connector": {"state": state, "worker_id": "w:1"},
        "tasks": [
            {"id": i, "state": s, "worker_id": "w:1", **({"trace": trace} if s == "FAILED" else {})}
            for i, s in enumerate(tasks)
        ],
        "type": "sink",
    }


def offsets(*values: int) -> dict[str, Any]:
    """Connector `c`'s committed offsets: `values[p]` on partition p of topic t."""
    return {
        "offsets": [
            {"partition": {"kafka_topic": "t", "kafka_partition": p}, "offset": {"kafka_offset": o}}
            for p, o in enumerate(values)
        ]
    }


def run_trigger(trigger: BaseTrigger) -> dict[str, Any]:
    """The payload of the first event `trigger` fires."""

    async def first_event() -> dict[str, Any]:
        async for event in trigger.run():
            return event.payload
        raise AssertionError("the trigger ended without an event")

    return asyncio.run(first_event())
