"""Assignments of connectors and tasks to workers, and the leader's sticky, balanced assignor.

An assignment is one record in the config topic, key `assignment-<group.id>`, value
{"generation": N, "leader": id, "leader_url": url,
 "connectors": {connector: worker}, "tasks": [[connector, index, worker], ...]}.
The config topic has one partition, so every worker sees assignments in the same order; a worker
follows the last one it reads whose generation is not lower than its current one.

The assignor is a pure function. It never moves a unit directly from one live worker to another: a unit
to move is first left out (revoked) and only handed out by a later generation, which the leader publishes
once every live worker has acknowledged the revocation (see the package docs).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, TypeVar

ASSIGNMENT_PREFIX = "assignment-"

TaskId = tuple[str, int]
U = TypeVar("U", bound=Hashable)


@dataclass(frozen=True)
class Assignment:
    generation: int = 0
    leader: str = ""
    leader_url: str = ""
    connectors: dict[str, str] = field(default_factory=dict)
    tasks: dict[TaskId, str] = field(default_factory=dict)

    def connectors_of(self, worker: str) -> set[str]:
        return {c for c, w in self.connectors.items() if w == worker}

    def tasks_of(self, worker: str) -> set[TaskId]:
        return {t for t, w in self.tasks.items() if w == worker}

    def owners(self) -> set[str]:
        return set(self.connectors.values()) | set(self.tasks.values())

    def same_units(self, other: "Assignment") -> bool:
        return self.connectors == other.connectors and self.tasks == other.tasks

    def encode(self) -> dict[str, Any]:
        return {"generation": self.generation, "leader": self.leader, "leader_url": self.leader_url,
                "connectors": dict(sorted(self.connectors.items())),
                "tasks": [[c, i, w] for (c, i), w in sorted(self.tasks.items())]}


def decode_assignment(value: Any) -> Assignment | None:
    """The assignment in a decoded record value, or None when it is malformed (callers log)."""
    if not isinstance(value, dict):
        return None
    generation = value.get("generation")
    connectors = value.get("connectors")
    tasks = value.get("tasks")
    if not isinstance(generation, int) or isinstance(generation, bool) or not isinstance(connectors, dict) \
            or not isinstance(tasks, list):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in connectors.items()):
        return None
    parsed: dict[TaskId, str] = {}
    for entry in tasks:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[1], int) and not isinstance(entry[1], bool) and isinstance(entry[2], str)):
            return None
        parsed[(entry[0], entry[1])] = entry[2]
    return Assignment(generation, str(value.get("leader") or ""), str(value.get("leader_url") or ""),
                      dict(connectors), parsed)


def _assign_units(current: dict[U, str], units: Iterable[U], members: list[str], held: set[str]) -> dict[U, str]:
    """One kind of unit (connectors, or tasks): keep live and held owners, revoke what makes a live
    worker exceed its fair share, give unowned units to the least loaded workers."""
    ordered = sorted(set(units), key=repr)
    kept: dict[U, str] = {}
    free: list[U] = []
    for unit in ordered:
        owner = current.get(unit)
        if owner is not None and (owner in members or owner in held):
            kept[unit] = owner
        else:
            free.append(unit)
    if not members:
        return kept
    load: dict[str, list[U]] = {m: [] for m in members}
    for unit, owner in kept.items():
        if owner in load:
            load[owner].append(unit)
    total = sum(len(v) for v in load.values()) + len(free)
    base, extra = divmod(total, len(members))
    # the most loaded workers keep the extra units, so as little as possible moves
    by_load = sorted(members, key=lambda m: (-len(load[m]), m))
    quota = {m: base + (1 if i < extra else 0) for i, m in enumerate(by_load)}
    revoked: set[U] = set()
    for member in members:
        surplus = len(load[member]) - quota[member]
        if surplus > 0:
            for unit in sorted(load[member], key=repr)[-surplus:]:
                revoked.add(unit)
                del kept[unit]
            load[member] = [u for u in load[member] if u not in revoked]
    assigned = dict(kept)
    # revoked units are not handed out in this generation: their owner must stop them first
    for unit in free:
        open_members = [m for m in members if len(load[m]) < quota[m]]
        if not open_members:
            break
        target = min(open_members, key=lambda m: (len(load[m]), m))
        assigned[unit] = target
        load[target].append(unit)
    return assigned


def compute_assignment(current: Assignment, members: list[str], connectors: Iterable[str],
                       tasks: Iterable[TaskId], held: set[str] | None = None) -> tuple[dict[str, str], dict[TaskId, str]]:
    """The next connector and task placement. `members` are the live workers; `held` are departed
    workers whose units are kept for them for a while (scheduled.rebalance.max.delay.ms)."""
    members = sorted(set(members))
    held = (held or set()) - set(members)
    return (_assign_units(current.connectors, connectors, members, held),
            _assign_units(current.tasks, tasks, members, held))
