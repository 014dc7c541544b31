"""The plan: what must change on a live cluster for it to match the desired state, and its readable diff.

Planning is a pure function of the desired state and one snapshot of the cluster (`GET /connectors?expand=
status&expand=info`: one request, whatever the number of connectors). For each declared connector:
- absent: create it (with its offsets, then its target state);
- config differs from the declared one (as the server stores it: string values): update it (PUT config;
  Kafka Connect keeps the target state);
- its state is not the declared one: resume, pause or stop it (a connector on its way somewhere,
  UNASSIGNED or RESTARTING, is left to arrive);
- FAILED instances while it should run or be paused: restart only those (KIP-745 `onlyFailed`);
and, with `prune`, delete each connector that is not declared.

Everything a plan shows or returns (its text, its XCom) has secrets redacted.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from airflow_provider_connect.as_code.desired import DesiredConnector
from airflow_provider_connect.redaction import redact_config, scrub, secret_values
from airflow_provider_connect.status import ConnectState


class Step(str, enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    RESUME = "resume"
    PAUSE = "pause"
    STOP = "stop"
    RESTART = "restart"
    DELETE = "delete"


STATE_STEPS = {ConnectState.RUNNING: Step.RESUME, ConnectState.PAUSED: Step.PAUSE, ConnectState.STOPPED: Step.STOP}
# A connector in one of these states has a known target state; any other (UNASSIGNED, RESTARTING) is moving.
SETTLED = frozenset({ConnectState.RUNNING, ConnectState.PAUSED, ConnectState.STOPPED, ConnectState.FAILED})


@dataclass(frozen=True)
class LiveConnector:
    """One connector as the cluster shows it."""

    name: str
    config: Mapping[str, str]
    state: ConnectState | None  # the connector instance's state (None: no status yet, or an unknown one)
    failed: tuple[str, ...] = ()  # FAILED instances: "connector", "task-0", ...


def live_connectors(expanded: Mapping[str, Any]) -> dict[str, LiveConnector]:
    """From `GET /connectors?expand=status&expand=info`."""
    out = {}
    for name, entry in expanded.items():
        status = entry.get("status") or {}
        raw = (status.get("connector") or {}).get("state")
        try:
            state = ConnectState.parse(raw) if raw else None
        except ValueError:
            state = None
        failed = (["connector"] if state is ConnectState.FAILED else []) + [
            f"task-{t.get('id')}" for t in status.get("tasks") or [] if t.get("state") == ConnectState.FAILED.value
        ]
        out[name] = LiveConnector(name, dict((entry.get("info") or {}).get("config") or {}), state, tuple(failed))
    return out


@dataclass(frozen=True)
class ConfigChange:
    """One key's change, values redacted (None: the key is absent on that side)."""

    key: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class ConnectorPlan:
    name: str
    steps: tuple[Step, ...]
    changes: tuple[ConfigChange, ...] = ()
    live_state: str | None = None
    target_state: str | None = None
    offsets: int = 0  # partitions whose offsets are written at create
    failed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    connectors: tuple[ConnectorPlan, ...]
    unchanged: int = 0
    where: str = "the cluster"
    counts: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        counts = {step.value: 0 for step in Step}
        for connector in self.connectors:
            for step in connector.steps:
                counts[step.value] += 1
        object.__setattr__(self, "counts", counts)

    @property
    def empty(self) -> bool:
        return not self.connectors

    def summary(self) -> str:
        parts = [f"{n} to {step}" for step, n in self.counts.items() if n]
        return f"{', '.join(parts) or 'no changes'} ({self.unchanged} unchanged)"

    def to_dict(self) -> dict[str, Any]:
        """For XCom: JSON-safe, secrets redacted."""
        return {
            "where": self.where,
            "summary": self.counts,
            "unchanged": self.unchanged,
            "connectors": [
                {**asdict(c), "steps": [s.value for s in c.steps], "changes": [asdict(x) for x in c.changes]}
                for c in self.connectors
            ],
        }

    def render(self) -> str:
        """A diff to read in the task log: `+` create, `~` change, `-` delete, `!` restart what failed."""
        lines = [f"Plan for {self.where}: {self.summary()}"]
        for c in self.connectors:
            lines.append("")
            if Step.CREATE in c.steps:
                extra = f", offsets for {c.offsets} partition(s)" if c.offsets else ""
                lines.append(f"+ {c.name} (create, {c.target_state}{extra})")
            elif Step.DELETE in c.steps:
                lines.append(f"- {c.name} (delete; it is {c.live_state or 'without a status'} and not declared)")
            else:
                lines.append(f"~ {c.name}")
            for change in c.changes:
                if change.old is None:
                    lines.append(f"    + {change.key}: {change.new}")
                elif change.new is None:
                    lines.append(f"    - {change.key}: {change.old}")
                else:
                    lines.append(f"    ~ {change.key}: {change.old} -> {change.new}")
            moves = [s.value for s in c.steps if s in STATE_STEPS.values()]
            if moves and Step.CREATE not in c.steps:
                lines.append(f"    state: {c.live_state} -> {c.target_state} ({', '.join(moves)})")
            if Step.RESTART in c.steps:
                lines.append(f"    ! restart the FAILED {', '.join(c.failed)}")
        return "\n".join(lines)


def make_plan(
    desired: Mapping[str, DesiredConnector],
    live: Mapping[str, LiveConnector],
    prune: bool = False,
    where: str = "the cluster",
) -> Plan:
    hidden = _secrets(desired.values(), live.values())
    planned: list[ConnectorPlan] = []
    unchanged = 0
    for name in sorted(set(desired) | (set(live) if prune else set())):
        want, have = desired.get(name), live.get(name)
        if want is None:
            assert have is not None
            state = have.state.value if have.state else None
            planned.append(ConnectorPlan(name, (Step.DELETE,), live_state=state))
            continue
        target = want.state.value
        if have is None:
            changes = _changes({}, want.normalised_config, hidden)
            planned.append(ConnectorPlan(name, (Step.CREATE,), changes, None, target, len(want.offsets)))
            continue
        changes = _changes(have.config, want.normalised_config, hidden)
        steps = ([Step.UPDATE] if changes else []) + _state_steps(want.state, have)
        if steps:
            state = have.state.value if have.state else None
            planned.append(ConnectorPlan(name, tuple(steps), changes, state, target, failed=have.failed))
        else:
            unchanged += 1
    return Plan(tuple(planned), unchanged, where)


def _state_steps(target: ConnectState, have: LiveConnector) -> list[Step]:
    steps = []
    # A FAILED connector's target state is unknown: set it, then restart what failed.
    if have.state in SETTLED and have.state is not target:
        steps.append(STATE_STEPS[target])
    if have.failed and target is not ConnectState.STOPPED:  # stopping ends the failed tasks too
        steps.append(Step.RESTART)
    return steps


def _changes(old: Mapping[str, str], new: Mapping[str, str], hidden: set[str]) -> tuple[ConfigChange, ...]:
    shown_old, shown_new = redact_config(old), redact_config(new)

    def show(values: Mapping[str, Any], key: str) -> str | None:
        return scrub(str(values[key]), hidden) if key in values else None

    return tuple(
        ConfigChange(key, show(shown_old, key), show(shown_new, key))
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key) and key != "name"  # `name` is the connector's own, shown already
    )


def _secrets(desired: Iterable[DesiredConnector], live: Iterable[LiveConnector]) -> set[str]:
    """Secret values of every config involved: scrubbed wherever else they appear (a URL, a JAAS line)."""
    hidden: set[str] = set()
    for wanted in desired:
        hidden |= secret_values(wanted.normalised_config)
    for found in live:
        hidden |= secret_values(found.config)
    return hidden
