"""Assignments of connectors and tasks to workers, and the leader's sticky, balanced assignor.

An assignment is a few records in the config topic, written together: its units in parts of at most
PART_UNITS, key `assignment-<group.id>.part-<k>`, value {"generation": N, "part": k, "units":
[["c", connector, worker] | ["t", connector, index, worker], ...]}, then the record that completes them,
key `assignment-<group.id>`, value {"generation": N, "leader": id, "leader_url": url, "parts": K,
"group_generation": G, "urls": {worker id: url}}: N orders placements, G is the group coordinator's
generation they belong to (workers apply only their own generation's). Parts
keep every record small (about 40 KB) whatever the cluster's size (one record grew by ~40 bytes a
task); part keys are reused, so compaction bounds them. Earlier versions wrote the whole assignment
as the value {"generation", "leader", "leader_url", "connectors": {connector: worker}, "tasks":
[[connector, index, worker], ...]} of `assignment-<group.id>`, which is still read; they log and skip
the new records (no "connectors" or "tasks" in them), as KIP-915 asks.
The config topic has one partition, so every worker sees assignments in the same order; a worker
follows the last one it reads whose generation is not lower than its current one.

The assignor is a pure function. It never moves a unit directly from one live worker to another: a unit
to move is first left out (revoked) and only handed out by the next rebalance, which starts once its
owner has stopped it (see the package docs). Between rebalances it only places new units (`moves=False`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard, TypeVar
from urllib.parse import urlsplit

ASSIGNMENT_PREFIX = "assignment-"
PART_SEPARATOR = ".part-"
PART_UNITS = 1000
PART, OTHER, INVALID = "part", "other", "invalid"  # AssignmentReader.read outcomes other than an assignment

TaskId = tuple[str, int]
U = TypeVar("U", bound=Hashable)


@dataclass(frozen=True)
class Assignment:
    generation: int = 0
    leader: str = ""
    leader_url: str = ""
    connectors: dict[str, str] = field(default_factory=dict)
    tasks: dict[TaskId, str] = field(default_factory=dict)
    group_generation: int = -1  # the group coordinator's generation it belongs to (-1: earlier versions')
    urls: dict[str, str] = field(default_factory=dict)  # worker id -> REST URL, for forwarding

    def connectors_of(self, worker: str) -> set[str]:
        return {c for c, w in self.connectors.items() if w == worker}

    def tasks_of(self, worker: str) -> set[TaskId]:
        return {t for t, w in self.tasks.items() if w == worker}

    def owners(self) -> set[str]:
        return set(self.connectors.values()) | set(self.tasks.values())

    def same_units(self, other: Assignment) -> bool:
        return self.connectors == other.connectors and self.tasks == other.tasks

    def encode(self) -> dict[str, Any]:
        """The single-record form earlier versions wrote (still read; see records() for what is written)."""
        return {
            "generation": self.generation,
            "leader": self.leader,
            "leader_url": self.leader_url,
            "connectors": dict(sorted(self.connectors.items())),
            "tasks": [[c, i, w] for (c, i), w in sorted(self.tasks.items())],
        }

    def records(self, group_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The records to write, in order: the parts, then the record that completes them."""
        units: list[list[Any]] = [["c", c, w] for c, w in sorted(self.connectors.items())]
        units += [["t", c, i, w] for (c, i), w in sorted(self.tasks.items())]
        parts = [units[start : start + PART_UNITS] for start in range(0, len(units), PART_UNITS)]
        records: list[tuple[str, dict[str, Any]]] = [
            (part_key(group_id, k), {"generation": self.generation, "part": k, "units": part})
            for k, part in enumerate(parts)
        ]
        records.append(
            (
                assignment_key(group_id),
                {
                    "generation": self.generation,
                    "leader": self.leader,
                    "leader_url": self.leader_url,
                    "parts": len(parts),
                    "group_generation": self.group_generation,
                    "urls": dict(sorted(self.urls.items())),
                },
            )
        )
        return records


def worker_id_of(url: str) -> str:
    """The worker id (advertised host:port) in a member's REST URL."""
    return urlsplit(url).netloc or url.rstrip("/")


def assignment_key(group_id: str) -> str:
    return ASSIGNMENT_PREFIX + group_id


def part_key(group_id: str, index: int) -> str:
    return f"{ASSIGNMENT_PREFIX}{group_id}{PART_SEPARATOR}{index}"


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class AssignmentReader:
    """Assembles assignments from the records of one group, read in topic order."""

    def __init__(self, group_id: str) -> None:
        self.key = assignment_key(group_id)
        self._part_prefix = self.key + PART_SEPARATOR
        self._parts: dict[int, tuple[int, list[Any]]] = {}  # part index -> (generation, units)

    def read(self, key: str, value: Any) -> Assignment | str:
        """The assignment a record completes; otherwise PART (a part, kept until its assignment's
        record), OTHER (another group's key that shares the prefix) or INVALID (malformed, or parts
        missing: the caller logs it)."""
        if key.startswith(self._part_prefix):
            index = key[len(self._part_prefix) :]
            if (
                not index.isdigit()
                or not isinstance(value, dict)
                or not _is_int(value.get("generation"))
                or not isinstance(value.get("units"), list)
            ):
                return INVALID
            self._parts[int(index)] = (value["generation"], value["units"])
            return PART
        if key != self.key:
            return OTHER
        if isinstance(value, dict) and _is_int(value.get("parts")) and _is_int(value.get("generation")):
            assembled = self._assemble(value)
        else:
            assembled = decode_assignment(value)
        return INVALID if assembled is None else assembled

    def _assemble(self, value: dict[str, Any]) -> Assignment | None:
        generation = value["generation"]
        connectors: dict[str, str] = {}
        tasks: dict[TaskId, str] = {}
        for k in range(value["parts"]):
            part = self._parts.get(k)
            if part is None or part[0] != generation:
                return None
            for unit in part[1]:
                if (
                    isinstance(unit, list)
                    and len(unit) == 3
                    and unit[0] == "c"
                    and isinstance(unit[1], str)
                    and isinstance(unit[2], str)
                ):
                    connectors[unit[1]] = unit[2]
                elif (
                    isinstance(unit, list)
                    and len(unit) == 4
                    and unit[0] == "t"
                    and isinstance(unit[1], str)
                    and _is_int(unit[2])
                    and isinstance(unit[3], str)
                ):
                    tasks[(unit[1], unit[2])] = unit[3]
                else:
                    return None
        group_generation = value.get("group_generation")
        urls = value.get("urls")
        if not isinstance(urls, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in urls.items()):
            urls = {}
        return Assignment(
            generation,
            str(value.get("leader") or ""),
            str(value.get("leader_url") or ""),
            connectors,
            tasks,
            group_generation if _is_int(group_generation) else -1,
            dict(urls),
        )


def decode_assignment(value: Any) -> Assignment | None:
    """The assignment in a decoded record value, or None when it is malformed (callers log)."""
    if not isinstance(value, dict):
        return None
    generation = value.get("generation")
    connectors = value.get("connectors")
    tasks = value.get("tasks")
    if (
        not isinstance(generation, int)
        or isinstance(generation, bool)
        or not isinstance(connectors, dict)
        or not isinstance(tasks, list)
    ):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in connectors.items()):
        return None
    parsed: dict[TaskId, str] = {}
    for entry in tasks:
        if not (
            isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], str)
            and isinstance(entry[1], int)
            and not isinstance(entry[1], bool)
            and isinstance(entry[2], str)
        ):
            return None
        parsed[(entry[0], entry[1])] = entry[2]
    return Assignment(
        generation, str(value.get("leader") or ""), str(value.get("leader_url") or ""), dict(connectors), parsed
    )


def _assign_units(
    current: dict[U, str], units: Iterable[U], members: list[str], held: set[str], moves: bool = True
) -> dict[U, str]:
    """One kind of unit (connectors, or tasks): keep live and held owners, revoke what makes a live
    worker exceed its fair share (only when `moves`: a rebalance), give unowned units to the least
    loaded workers."""
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
    if not moves:
        counts = {m: len(v) for m, v in load.items()}
        for unit in free:
            target = min(members, key=lambda m: (counts[m], m))
            kept[unit] = target
            counts[target] += 1
        return kept
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


def claimed_placement(
    claims: Mapping[str, tuple[Iterable[str], Iterable[TaskId]]],
) -> tuple[dict[str, str], dict[TaskId, str], set[str], set[TaskId]]:
    """The placement the members' claims (worker id -> what it reports holding when it joins) describe,
    and the units more than one member claims. Such a unit runs, or may run, on two workers (one back
    from a freeze, say): keeping it on either while revoking it from the other would move it within one
    generation, the stopping owner's UNASSIGNED racing the keeper's RUNNING. The caller revokes it from
    all of them; a later rebalance hands it out once they have stopped it (the reference does the same
    with duplicated assignments)."""
    connectors: dict[str, str] = {}
    tasks: dict[TaskId, str] = {}
    duplicated_connectors: set[str] = set()
    duplicated_tasks: set[TaskId] = set()
    for worker, (held_connectors, held_tasks) in sorted(claims.items()):
        for c in held_connectors:
            if connectors.setdefault(c, worker) != worker:
                duplicated_connectors.add(c)
        for t in held_tasks:
            if tasks.setdefault(t, worker) != worker:
                duplicated_tasks.add(t)
    for c in duplicated_connectors:
        del connectors[c]
    for t in duplicated_tasks:
        del tasks[t]
    return connectors, tasks, duplicated_connectors, duplicated_tasks


def compute_assignment(
    current: Assignment,
    members: list[str],
    connectors: Iterable[str],
    tasks: Iterable[TaskId],
    held: set[str] | None = None,
    moves: bool = True,
) -> tuple[dict[str, str], dict[TaskId, str]]:
    """The next connector and task placement. `members` are the live workers; `held` are departed
    workers whose units are kept for them for a while (scheduled.rebalance.max.delay.ms). Without
    `moves` (between rebalances) nothing is revoked: only new units are placed and deleted ones dropped."""
    members = sorted(set(members))
    held = (held or set()) - set(members)
    return (
        _assign_units(current.connectors, connectors, members, held, moves),
        _assign_units(current.tasks, tasks, members, held, moves),
    )
