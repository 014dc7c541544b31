"""This worker's membership of the group: the generation it holds, who leads it, the placement it follows,
and whether it is fenced (see the package docs for the protocol).

Three kinds of threads meet here, each with its own part:
- kafka-python's IO thread asks what this worker holds (`worker_state`), and, on the leader, for a
  rebalance's assignments (`perform_assignment`, through the LeaderAssignor), and hands over each join
  (`on_joined`);
- the config topic's reader thread hands over assignment records;
- the herder's tick thread takes up joins (`poll`), places new units between rebalances on the leader
  (`update_placement`) and asks what it must run (`reconcile_view`).
What they share is one immutable `Membership` value, replaced whole under a lock and read without one by
everyone else (the REST threads included), and the `Held` value the tick thread publishes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from ..control.errors import ServerError
from ..storage.kafka_config_store import KafkaConfigStore, PrivilegedWriteError
from ..storage.kafka_status_store import KafkaStatusStore
from ..worker.counters import RebalanceCounters
from ..worker_config import WorkerConfig
from .assignment import INVALID, Assignment, AssignmentReader, TaskId, worker_id_of
from .assignor import Clock, LeaderAssignor
from .connect_protocol import CONFIG_MISMATCH, NO_ERROR, ConnectAssignment, WorkerState
from .group import WorkerGroup

log = logging.getLogger(__name__)

CLAIM_RETRY_S = 1.0  # a leader that could not claim the config topic's transactional producer tries again then

# Earlier versions kept membership in `worker-heartbeat-<id>` records of the status topic: still read
# (and ignored) so a status topic they wrote replays without warnings.
LEGACY_HEARTBEAT_PREFIX = "worker-heartbeat-"


@dataclass(frozen=True)
class Timing:
    heartbeat_interval_s: float
    session_timeout_s: float
    rebalance_delay_s: float
    rebalance_timeout_s: float = 60.0

    @classmethod
    def from_worker(cls, config: WorkerConfig) -> Timing:
        def seconds(name: str) -> float:
            return config.get_int(name) / 1000

        return cls(
            seconds("heartbeat.interval.ms"),
            seconds("session.timeout.ms"),
            seconds("scheduled.rebalance.max.delay.ms"),
            seconds("rebalance.timeout.ms"),
        )


@dataclass(frozen=True)
class Membership:
    """The generation this worker holds (-1: none), its leader, and the placement of that generation."""

    generation: int = -1
    member_id: str = ""
    leader_id: str = ""
    leader_url: str | None = None
    assignment: Assignment = field(default_factory=Assignment)


@dataclass(frozen=True)
class Held:
    """What runs on this worker (published by the tick thread): running connectors, connectors whose stop
    after a revocation is under way, and running tasks."""

    connectors: frozenset[str] = frozenset()
    releasing: frozenset[str] = frozenset()
    tasks: frozenset[TaskId] = frozenset()


class GroupMember:
    def __init__(
        self,
        config_store: KafkaConfigStore,
        status_store: KafkaStatusStore,
        worker_id: str,
        url: str,
        group_id: str,
        timing: Timing,
        client_config: Mapping[str, str],
        rebalance: RebalanceCounters,
        on_change: Callable[[], None],
        clock: Clock = time.monotonic,
    ) -> None:
        """`on_change` wakes the tick thread (a join to take up, a placement read); `rebalance` are the
        worker's rebalance metrics, which this member keeps."""
        self.config_store = config_store
        self.status_store = status_store
        self.worker_id = worker_id
        self.url = url
        self.group_id = group_id
        self.timing = timing
        self.rebalance = rebalance
        self._on_change = on_change
        self._clock = clock
        self.group = WorkerGroup(
            client_config,
            group_id,
            self,
            int(timing.session_timeout_s * 1000),
            int(timing.heartbeat_interval_s * 1000),
            int(timing.rebalance_timeout_s * 1000),
        )
        self.assignor = LeaderAssignor(worker_id, url, timing.rebalance_delay_s, clock)
        self._lock = threading.Lock()  # writers of _membership: the tick thread and the config reader
        self._membership = Membership()
        self._latest_record = Assignment()  # the last placement read from the config topic, any generation
        self._joined: tuple[int, str, ConnectAssignment | None] | None = None  # IO thread -> tick thread
        self._held = Held()
        # tick thread only
        self._rejoin_after_revocations = False
        self._was_fenced = False  # fenced at the last reconciliation: catch up with the config topic when it ends
        self._claim_at = 0.0  # when the leader may try again to claim write privileges on the config topic
        self._assignment_reader = AssignmentReader(group_id)
        config_store.register_prefix(self._assignment_reader.key, self._on_assignment_record)
        status_store.register_prefix(LEGACY_HEARTBEAT_PREFIX, lambda key, raw: None)

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self.group.start(max(30.0, self.timing.session_timeout_s))

    def wait_joined(self, stopping: threading.Event) -> None:
        """Return once the tick thread has taken up a first generation (on Tansu a first join takes about
        session.timeout.ms/2)."""
        deadline = time.monotonic() + max(60.0, 3 * self.timing.session_timeout_s)
        while self._membership.generation < 0 and time.monotonic() < deadline and not stopping.is_set():
            refusal = self.group.refusal()
            if refusal is not None:
                raise ServerError(refusal)  # no retry cures it: the worker stops, naming what to change
            time.sleep(0.05)
        if self._membership.generation < 0 and not stopping.is_set():
            raise ServerError(f"This worker did not join group {self.group_id} in time")
        log.info(
            "Worker %s joined group %s in generation %d", self.worker_id, self.group_id, self._membership.generation
        )

    def stop(self) -> None:
        """Leave the group, once everything is stopped: the others then rebalance at once, with no overlap. A
        rebalance in flight is let settle for up to three session timeouts (never past the rebalance timeout)
        before leaving; see WorkerGroup.close."""
        self.group.close(
            self.timing.session_timeout_s,
            settle_s=min(self.timing.rebalance_timeout_s, 3 * self.timing.session_timeout_s),
        )

    # ---- the group protocol (kafka-python's IO thread: must not block for long) ------------------

    def worker_state(self) -> WorkerState:
        """What this worker tells the leader when it joins: its URL, how far it has read the config
        topic, and what it holds (its share of the placement, or only what it still runs when fenced)."""
        connectors: set[str] = set()
        tasks: set[TaskId] = set()
        if not self.fenced():
            # a fenced worker's share belongs to a generation it lost: others may run it by now, and a
            # claim here would make the leader keep it here while revoking it from its new owner
            assignment = self._membership.assignment
            connectors, tasks = assignment.connectors_of(self.worker_id), assignment.tasks_of(self.worker_id)
        # and what still runs: the tick thread may not have stopped a revoked unit yet, and the leader
        # must not hand out what runs here
        held = self._held
        connectors |= held.connectors | held.releasing
        tasks |= held.tasks
        return WorkerState(self.url, self.config_store.next_offset(), frozenset(connectors), frozenset(tasks))

    def perform_assignment(
        self, generation: int, leader_id: str, members: dict[str, WorkerState]
    ) -> dict[str, ConnectAssignment]:
        """The leader's rebalance: place every unit over the members, revoking (not moving) what must go
        elsewhere, write the placement to the config topic, and tell each member what it gains and loses."""
        with self.assignor.lock:
            try:
                # as the leader (KIP-618, with exactly-once support): fences the producer of any earlier leader
                self.config_store.claim_write_privileges()
                self.config_store.refresh()
            except Exception as exc:  # noqa: BLE001 - members retry the rebalance
                log.error("Leader cannot read the config topic to its end, or claim writing to it: %s", exc)
                return {m: ConnectAssignment(leader_id, self.url, -1, error=CONFIG_MISMATCH) for m in members}
            plan = self.assignor.rebalance(generation, self._latest_record, members, self.config_store.snapshot())
            self.config_store.write_raw(plan.placement.records(self.group_id))
            # the offset after the placement just written (read back): reference members require exactly it
            return plan.member_assignments(leader_id, self.config_store.next_offset())

    def on_joined(self, generation: int, member_id: str, assignment: ConnectAssignment | None) -> None:
        with self._lock:
            self._joined = (generation, member_id, assignment)
        self._on_change()

    # ---- placements read from the config topic (its reader thread: must not block) ---------------

    def _on_assignment_record(self, key: str, value: object, started: bool) -> None:
        assignment = self._assignment_reader.read(key, value)
        if isinstance(assignment, str):  # a part (kept for its assignment), another group's, or invalid
            if assignment == INVALID:
                log.error("Ignoring invalid or incomplete assignment record %s", key)
            return
        with self._lock:
            self._latest_record = assignment
            current = self._membership
            applies = assignment.group_generation == current.generation and current.generation >= 0
            if applies:
                self._membership = replace(current, assignment=assignment)
        if applies:
            log.info(
                "Assignment %d of generation %d from leader %s: connectors %s, tasks %s",
                assignment.generation,
                assignment.group_generation,
                assignment.leader,
                sorted(assignment.connectors_of(self.worker_id)),
                sorted(f"{c}-{i}" for c, i in assignment.tasks_of(self.worker_id)),
            )
        self._on_change()

    # ---- the tick thread ------------------------------------------------------------------------

    def report_held(self, held: Held) -> None:
        """The tick thread publishes what runs here (read by the IO thread when this worker joins)."""
        self._held = held

    def poll(self) -> None:
        """Tell the group the tick thread lives, and take up a generation just joined: read the config topic
        up to where the leader assigned, follow the leader's placement for it, and remember to rejoin once
        this worker has stopped what the leader revoked."""
        self.group.poll()
        with self._lock:
            joined, self._joined = self._joined, None
        if joined is None:
            return
        generation, member_id, connect = joined
        if connect is None or connect.error != NO_ERROR:
            log.warning(
                "Generation %d brought no usable assignment (error %s); rejoining",
                generation,
                None if connect is None else connect.error,
            )
            self.group.request_rejoin()
            return
        if self.config_store.next_offset() < connect.config_offset:
            try:
                self.config_store.refresh()
            except Exception as exc:  # noqa: BLE001 - cannot follow this generation: rejoin
                log.warning("Could not read the config topic up to offset %d: %s", connect.config_offset, exc)
                self.group.request_rejoin()
                return
        with self._lock:
            latest = self._latest_record
            if latest.group_generation == generation:
                assignment = latest
            else:  # e.g. the leader is a worker that does not write placements: hold only what it says
                assignment = Assignment(
                    latest.generation,
                    "",
                    connect.leader_url,
                    {c: self.worker_id for c in connect.connectors},
                    {t: self.worker_id for t in connect.tasks},
                    generation,
                    {},
                )
            self._membership = Membership(generation, member_id, connect.leader, connect.leader_url, assignment)
        self._rejoin_after_revocations = bool(connect.revoked_connectors or connect.revoked_tasks)
        log.info(
            "Joined generation %d of group %s as %s; leader %s; assigned connectors %s, tasks %s; revoked "
            "connectors %s, tasks %s",
            generation,
            self.group_id,
            "leader" if connect.leader == member_id else "follower",
            connect.leader_url,
            sorted(assignment.connectors_of(self.worker_id)),
            sorted(f"{c}-{i}" for c, i in assignment.tasks_of(self.worker_id)),
            sorted(connect.revoked_connectors),
            sorted(f"{c}-{i}" for c, i in connect.revoked_tasks),
        )
        rebalance = self.rebalance
        rebalance.completed_rebalances += 1
        rebalance.epoch = generation
        rebalance.leader_name = worker_id_of(connect.leader_url)
        rebalance.last_rebalance_monotonic = time.monotonic()

    def reconcile_view(self) -> tuple[Assignment, bool]:
        """The placement the tick thread reconciles with, and whether this worker is fenced (it then runs
        nothing). Back from being fenced, what was assigned and configured meanwhile is in the config topic:
        it is read to its end first (and the worker stays fenced for this tick if that fails)."""
        fenced = self.fenced()
        if self._was_fenced and not fenced:
            try:
                self.config_store.refresh()
            except Exception as exc:  # noqa: BLE001 - the tick thread must not die: it stays fenced this tick
                log.warning("Could not read the config topic to its end after being fenced: %s", exc)
                fenced = True
        self._was_fenced = fenced
        self.rebalance.rebalancing = fenced or self.group.rebalancing()
        return self._membership.assignment, fenced

    def rejoin_when_released(self, releasing: bool) -> bool:
        """After a generation that revoked units from this worker: once nothing revoked is still stopping,
        rejoin, so the leader may hand them out. True when it asked to rejoin."""
        if not self._rejoin_after_revocations or releasing:
            return False
        self._rejoin_after_revocations = False
        self.group.request_rejoin()
        return True

    def update_placement(self) -> None:
        """The leader between rebalances: place new units (created connectors, more tasks) on the least
        loaded members and drop deleted ones, moving nothing, so creates and stops do not wait for a
        rebalance; units held for departed workers are handed out by a rebalance once due."""
        if not self.is_leader() or self.group.rebalancing() or not self._write_privileges():
            return
        if self.assignor.rejoin_due():
            self.group.request_rejoin()
            return
        with self.assignor.lock:
            membership = self._membership
            current = membership.assignment
            if current.group_generation != membership.generation:
                return
            placement = self.assignor.update(
                current, self._latest_record.generation, self.config_store.snapshot(), self.status_store
            )
            if placement is not None:
                try:
                    self.config_store.write_raw(placement.records(self.group_id))
                except PrivilegedWriteError as exc:  # fenced by a newer leader: claimed again while still leading
                    log.warning("The leader could not write a placement: %s", exc)
                    self.assignor.forget_update()

    def _write_privileges(self) -> bool:
        """The leader holds the config topic's transactional producer (KIP-618), or claims it again after a
        failed write gave it up, as the reference does: only while it leads the generation it holds and is
        not fenced (is_leader), since a claim fences whoever held the producer before."""
        store = self.config_store
        if store.has_write_privileges():
            return True
        now = time.monotonic()
        if now < self._claim_at:
            return False
        try:
            store.claim_write_privileges()
        except Exception as exc:  # noqa: BLE001 - tried again after CLAIM_RETRY_S while still the leader
            log.warning("Unable to claim write privileges for the config topic: %s", exc)
            self._claim_at = now + CLAIM_RETRY_S
            return False
        return True

    # ---- what the herder asks (any thread) --------------------------------------------------------

    def membership(self) -> Membership:
        return self._membership

    def status_generation(self) -> int:
        """The generation statuses written now carry (contract 3.2)."""
        return max(self._membership.generation, 0)

    def leader_url(self) -> str | None:
        """The leader's URL, as the generation this worker holds says."""
        membership = self._membership
        return membership.leader_url if membership.generation >= 0 else None

    def url_of(self, worker_id: str | None) -> str | None:
        """The REST URL of a member of the current placement."""
        return None if worker_id is None else self._membership.assignment.urls.get(worker_id)

    def assignment(self) -> Assignment:
        """The placement of the generation this worker holds."""
        return self._membership.assignment

    def rebalance_pending(self, name: str) -> bool:
        """A rebalance is under way, or tasks of connector `name` are still placed on some member."""
        assignment = self._membership.assignment
        if self.group.rebalancing():
            return True
        return any(c == name for c, _ in assignment.tasks)

    def is_leader(self) -> bool:
        membership = self._membership
        return membership.generation >= 0 and membership.leader_id == membership.member_id and not self.fenced()

    def fenced(self) -> bool:
        """Out of the group: never joined, removed by the coordinator, or no heartbeat answered for a
        session timeout (a frozen process, Kafka out of reach). The others may run our work: stop it.
        Once fenced, a worker is back only in the generation it holds (a heartbeat answered in it, or
        the new join taken up): until the tick thread takes up a join, what it holds is the lost one's."""
        generation = self._membership.generation
        if generation < 0 or self.group.fenced():
            return True
        if not self._was_fenced:
            return False
        current = self.group.generation()
        return current is None or current[0] != generation
