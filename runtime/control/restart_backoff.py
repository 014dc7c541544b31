"""Self-healing's rules: when a FAILED connector or task is restarted automatically, and when its count of
automatic restarts starts again. This runtime's extension, set per connector in its own namespace (not a
Kafka Connect name), off by default:

    runtime.auto.restart.enabled           false   restart a FAILED connector or task of this connector
    runtime.auto.restart.max.restarts      -1      stop after this many restarts without a long enough healthy
                                                   run (-1: never stop, Strimzi's default)
    runtime.auto.restart.backoff.unit.ms   60000   Strimzi counts its backoff in minutes: how long one is here

Strimzi's `spec.autoRestart` (its AbstractConnectOperator): the restart that follows n earlier ones waits
min(n * n + n, 60) minutes after the last one, so restarts come at once, then after 2, 6, 12, 20, 30, 42 and 56
minutes, then every 60; the count starts again once the instance is healthy and more than that backoff (for
its current count) has passed since its last restart. Strimzi can only look at the time since the last
restart; a worker here also knows since when it has seen the instance healthy, and counts from the later of
the two (the same after a restart; after a move, a full backoff of healthy running on the new worker). Pure
functions of the count and times: the clock belongs to the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENABLED = "runtime.auto.restart.enabled"
MAX_RESTARTS = "runtime.auto.restart.max.restarts"
BACKOFF_UNIT_MS = "runtime.auto.restart.backoff.unit.ms"
KEYS = (ENABLED, MAX_RESTARTS, BACKOFF_UNIT_MS)

MAX_BACKOFF_UNITS = 60
MINUTE_MS = 60_000


def backoff_units(count: int) -> int:
    """Units (minutes, by default) to wait after the last restart before the next, `count` restarts in."""
    return min(count * count + count, MAX_BACKOFF_UNITS)


@dataclass(frozen=True)
class RestartPolicy:
    max_restarts: int | None  # None: no maximum
    unit_ms: int = MINUTE_MS

    def backoff_ms(self, count: int) -> int:
        return backoff_units(count) * self.unit_ms

    def exhausted(self, count: int) -> bool:
        return self.max_restarts is not None and count >= self.max_restarts

    def due_ms(self, count: int, last_restart_ms: int | None) -> int | None:
        """When the next restart may happen: None right away (no restart yet), else after the backoff."""
        return None if last_restart_ms is None else last_restart_ms + self.backoff_ms(count)

    def resets(self, count: int, healthy_since_ms: int, now_ms: int) -> bool:
        """Whether a count of restarts starts again, the instance having been healthy since `healthy_since_ms`
        (Strimzi: strictly more than the backoff)."""
        return count > 0 and now_ms - healthy_since_ms > self.backoff_ms(count)


def policy_of(config: Mapping[str, Any]) -> RestartPolicy | None:
    """The connector's policy, None when self-healing is off (or its settings cannot be read: validation
    refuses such a config before it is stored)."""
    if problems(config):
        return None
    if str(config.get(ENABLED, "false")).strip().lower() != "true":
        return None
    maximum = int(str(config.get(MAX_RESTARTS, "-1")).strip())
    return RestartPolicy(None if maximum < 0 else maximum, int(str(config.get(BACKOFF_UNIT_MS, MINUTE_MS)).strip()))


def problems(config: Mapping[str, Any]) -> dict[str, str]:
    """What is wrong with the settings present, by key, in Kafka's ConfigDef words."""
    found: dict[str, str] = {}
    enabled = config.get(ENABLED)
    if enabled is not None and str(enabled).strip().lower() not in ("true", "false"):
        found[ENABLED] = (
            f"Invalid value {enabled} for configuration {ENABLED}: Expected value to be either true or false"
        )
    for key, least in ((MAX_RESTARTS, -1), (BACKOFF_UNIT_MS, 1)):
        value = config.get(key)
        if value is None:
            continue
        text = str(value).strip()
        if not text.lstrip("-").isdigit() or not -(2**31) <= int(text) < 2**31:
            found[key] = f"Invalid value {value} for configuration {key}: Not a number of type INT"
        elif int(text) < least:
            found[key] = f"Invalid value {value} for configuration {key}: Value must be at least {least}"
    return found
