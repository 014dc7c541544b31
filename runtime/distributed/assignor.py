"""The leader's assignor: what the leader remembers between rebalances, and the placements it computes.

Modelled on Apache Kafka Connect's IncrementalCooperativeAssignor: the leader keeps, from one rebalance to
the next, the workers that left (and when, for `scheduled.rebalance.max.delay.ms`, KIP-415), the units the
current generation revoked and who must stop them, and the units several members claimed. Everything here
is computed from what it is given (the members' claims, the config snapshot, the statuses read so far) and
a clock; it does no IO, so it is tested without a broker (tests/unit/distributed/test_assignor.py). The
group member (member.py) writes what it returns to the config topic and answers SyncGroup with it.

The placement itself is assignment.compute_assignment, a pure function: a unit to move is revoked in one
generation and handed out in a later one, once its owner has stopped it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ..storage.base import InstanceStatus
from ..storage.kafka_config_store import ClusterConfig
from ..storage.states import State
from .assignment import Assignment, TaskId, claimed_placement, compute_assignment, worker_id_of
from .connect_protocol import ConnectAssignment, WorkerState

log = logging.getLogger(__name__)

Clock = Callable[[], float]  # seconds, monotonic


class StatusView(Protocol):
    """The statuses the assignor reads (the status store, or any store in tests)."""

    def connector(self, name: str) -> InstanceStatus | None: ...

    def tasks(self, name: str) -> dict[int, InstanceStatus]: ...


def configured_units(
    config: ClusterConfig, except_tasks: set[TaskId] | frozenset[TaskId] = frozenset()
) -> list[TaskId]:
    """Every task the config topic defines (connectors with inconsistent task configs have none)."""
    return [
        (c, i)
        for c, state in config.connectors.items()
        if c not in config.inconsistent
        for i in range(len(state.task_configs))
        if (c, i) not in except_tasks
    ]


@dataclass(frozen=True)
class Rebalance:
    """The leader's answer to one rebalance: the placement to write, and what each member gains and loses."""

    placement: Assignment
    claims: Mapping[str, WorkerState]  # member id -> what it reported when it joined
    delay_ms: int  # KIP-415: when units held for departed workers are due

    def member_assignments(self, leader_id: str, config_offset: int) -> dict[str, ConnectAssignment]:
        """Each member's SyncGroup assignment, once the placement is written up to `config_offset`."""
        placement = self.placement
        result = {}
        for member_id, state in self.claims.items():
            worker = worker_id_of(state.url)
            mine_c, mine_t = placement.connectors_of(worker), placement.tasks_of(worker)
            result[member_id] = ConnectAssignment(
                leader_id,
                placement.leader_url,
                config_offset,
                frozenset(mine_c - state.connectors),
                frozenset(mine_t - state.tasks),
                frozenset(state.connectors - mine_c),
                frozenset(state.tasks - mine_t),
                self.delay_ms,
            )
        return result


class LeaderAssignor:
    """The leader's state between rebalances (see the module docs). Calls come from kafka-python's IO thread
    (a rebalance) and the tick thread (placements between rebalances): one at a time, under its lock."""

    def __init__(self, worker_id: str, url: str, rebalance_delay_s: float, clock: Clock = time.monotonic) -> None:
        self.worker_id = worker_id
        self.url = url
        self.rebalance_delay_s = rebalance_delay_s
        self.clock = clock
        self.lock = threading.Lock()  # one computation at a time; the caller holds it while it writes
        self._departed: dict[str, float] = {}  # worker id -> when it left
        self._rejoin_at: float | None = None  # when units held for departed workers are due
        # units the current generation revoked, with the workers that must stop them: one is handed out
        # once its owner reports it stopped (UNASSIGNED in this generation), or else by the rebalance the
        # owner asks for once its revocations are done
        self._revoked_connectors: dict[str, str] = {}
        self._revoked_tasks: dict[TaskId, str] = {}
        # units the current generation revoked from several members that each claimed them
        self._duplicated: tuple[frozenset[str], frozenset[TaskId]] = (frozenset(), frozenset())
        self._update_inputs: tuple[object, ...] | None = None  # the last between-rebalance computation

    # ---- a rebalance ----------------------------------------------------------------------------

    def rebalance(
        self, generation: int, previous: Assignment, members: Mapping[str, WorkerState], config: ClusterConfig
    ) -> Rebalance:
        """Place every unit over `members` (member id -> its claims), taking what they claim as the current
        placement and keeping, for the rebalance delay, what departed workers held; revoke (never move)
        what must go elsewhere. `previous` is the last placement written, of any generation."""
        urls = {worker_id_of(state.url): state.url for state in members.values()}
        held_by = {worker_id_of(state.url): (state.connectors, state.tasks) for state in members.values()}
        current_connectors, current_tasks, twice_c, twice_t = claimed_placement(held_by)
        if twice_c or twice_t:
            log.warning(
                "Units claimed by more than one member, revoked from all of them until they have stopped them: "
                "connectors %s, tasks %s",
                sorted(twice_c),
                sorted(f"{c}-{i}" for c, i in twice_t),
            )
        self._duplicated = (frozenset(twice_c), frozenset(twice_t))
        now = self.clock()
        departed = previous.owners() - set(urls)
        for worker in departed:
            self._departed.setdefault(worker, now)
        for worker in list(self._departed):
            if worker not in departed:
                del self._departed[worker]
        held = {w for w, t in self._departed.items() if now - t < self.rebalance_delay_s}
        for c, w in previous.connectors.items():
            if w in held:
                current_connectors.setdefault(c, w)
        for t, w in previous.tasks.items():
            if w in held:
                current_tasks.setdefault(t, w)
        self._rejoin_at = min((self._departed[w] + self.rebalance_delay_s for w in held), default=None)
        connectors, placed = compute_assignment(
            Assignment(0, "", "", current_connectors, current_tasks),
            sorted(urls),
            [c for c in config.connectors if c not in twice_c],
            configured_units(config, twice_t),
            held,
        )
        placement = Assignment(
            previous.generation + 1,
            self.worker_id,
            self.url,
            connectors,
            placed,
            generation,
            {**{w: previous.urls[w] for w in held if w in previous.urls}, **urls},
        )
        self._revoked_connectors = {c: w for c, w in current_connectors.items() if c not in connectors}
        self._revoked_tasks = {t: w for t, w in current_tasks.items() if t not in placed}
        self._update_inputs = None
        log.info(
            "Leader %s assigns generation %d to members %s (held for departed workers: %s); they hold %s",
            self.worker_id,
            generation,
            sorted(urls),
            sorted(held),
            {w: len(c) + len(t) for w, (c, t) in sorted(held_by.items())},
        )
        delay_ms = int(max(0.0, (self._rejoin_at or now) - now) * 1000)
        return Rebalance(placement, dict(members), delay_ms)

    def rejoin_due(self) -> bool:
        """Whether units held for departed workers are due now (the leader then asks for a rebalance); once."""
        if self._rejoin_at is None or self.clock() < self._rejoin_at:
            return False
        self._rejoin_at = None
        return True

    # ---- between rebalances ---------------------------------------------------------------------

    def update(
        self, current: Assignment, newest_generation: int, config: ClusterConfig, statuses: StatusView
    ) -> Assignment | None:
        """The placement with new units (created connectors, more tasks) on the least loaded members and
        deleted ones dropped, moving nothing; None when nothing changes. `current` is the placement of the
        generation this leader holds, `newest_generation` the highest placement number read so far.
        Units revoked by this generation are left out until their owners report them stopped; units
        several members claimed wait for the next rebalance."""
        revoked_connectors, revoked_tasks = self._still_revoked(current.group_generation, statuses)
        inputs = (config, current, len(revoked_connectors), len(revoked_tasks))
        last = self._update_inputs
        # the snapshot and the placement are immutable views: identity is equality; revoked units only leave
        # their set (reported stopped), so its size says whether it changed
        if last is not None and last[0] is config and last[1] is current and last[2:] == inputs[2:]:
            return None
        self._update_inputs = inputs
        revoked_connectors |= self._duplicated[0]
        revoked_tasks |= self._duplicated[1]
        members = sorted(w for w in current.urls if w not in self._departed)
        connectors, placed = compute_assignment(
            current,
            members,
            [c for c in config.connectors if c not in revoked_connectors],
            configured_units(config, revoked_tasks),
            set(self._departed),
            moves=False,
        )
        if connectors == current.connectors and placed == current.tasks:
            return None
        return Assignment(
            max(current.generation, newest_generation) + 1,
            self.worker_id,
            self.url,
            connectors,
            placed,
            current.group_generation,
            current.urls,
        )

    def _still_revoked(self, generation: int, statuses: StatusView) -> tuple[set[str], set[TaskId]]:
        """The units revoked by this generation whose owners have not yet reported them stopped (the revoking
        worker writes UNASSIGNED, with the generation, once it has stopped a unit it lost)."""

        def stopped(status: InstanceStatus | None, owner: str) -> bool:
            return status is None or (
                status.worker_id == owner and status.state is State.UNASSIGNED and status.generation >= generation
            )

        for name, owner in list(self._revoked_connectors.items()):
            if stopped(statuses.connector(name), owner):
                del self._revoked_connectors[name]
        for (name, index), owner in list(self._revoked_tasks.items()):
            if stopped(statuses.tasks(name).get(index), owner):
                del self._revoked_tasks[(name, index)]
        return set(self._revoked_connectors), set(self._revoked_tasks)

    def departed(self) -> frozenset[str]:
        """Workers that left and are not back (for tests and logs)."""
        return frozenset(self._departed)
