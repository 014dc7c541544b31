"""One member of the worker group: its membership on the broker's group coordinator (group.py), the
leader's assignments, and the tick thread that keeps this worker's share of the cluster's work running
(see the package docs for the protocol).

On every record that matters (and every TICK_S) the tick thread polls the group (joining when a
rebalance asks for it), applies the assignment of the generation it holds, lets the leader place new
units between rebalances, then reconciles: it stops what this worker should no longer run, then starts
what it should run. The distributed herder (runtime/herder/distributed.py) holds one and asks it who
leads, who owns what, and to run restarts on the tick thread.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..control.errors import RequestTimeout, ServerError
from ..control.restart import RestartPlan, RestartRequest
from ..control.stages import StageTracker
from ..control.target_states import generates_tasks, task_target, tasks_run
from ..log_levels import LOG_LEVELS, level_number
from ..plugins import Plugins
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.kafka_config_store import ConfigUpdateListener, KafkaConfigStore
from ..storage.kafka_config_store import RestartRequest as StoredRestartRequest
from ..storage.kafka_status_store import KafkaStatusStore
from ..storage.states import State, TargetState
from ..worker.counters import RebalanceCounters
from ..worker.offsets import OffsetsManager
from ..worker.worker import Worker, succeeded
from ..worker_config import WorkerConfig
from .assignment import INVALID, Assignment, AssignmentReader, TaskId, claimed_placement, compute_assignment
from .connect_protocol import CONFIG_MISMATCH, NO_ERROR, ConnectAssignment, WorkerState
from .group import WorkerGroup
from .statuses import GenerationStatuses

log = logging.getLogger(__name__)
T = TypeVar("T")

TICK_S = 0.2  # the tick thread also wakes on every relevant record
# A tick whose inputs (config snapshot, assignment, fencing, pending reconfigurations) are those of the
# last reconciliation skips it, so an idle cluster costs next to nothing whatever its size; a full pass
# still runs this often, for what the inputs do not show (statuses of a deleted connector read late).
FULL_RECONCILE_S = 5.0
# Earlier versions kept membership in `worker-heartbeat-<id>` records of the status topic: still read
# (and ignored) so a status topic they wrote replays without warnings.
LEGACY_HEARTBEAT_PREFIX = "worker-heartbeat-"


class Timing:
    def __init__(
        self,
        heartbeat_interval_s: float,
        session_timeout_s: float,
        rebalance_delay_s: float,
        rebalance_timeout_s: float = 60.0,
    ) -> None:
        self.heartbeat_interval_s = heartbeat_interval_s
        self.session_timeout_s = session_timeout_s
        self.rebalance_delay_s = rebalance_delay_s
        self.rebalance_timeout_s = rebalance_timeout_s

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


def worker_id_of(url: str) -> str:
    """The worker id (advertised host:port) in a member's REST URL."""
    return urlsplit(url).netloc or url.rstrip("/")


class GroupMember(ConfigUpdateListener):
    def __init__(
        self,
        config: WorkerConfig,
        plugins: Plugins,
        config_store: KafkaConfigStore,
        status_store: KafkaStatusStore,
        offsets: OffsetsManager,
        worker_id: str,
        url: str,
        group_id: str,
        timing: Timing,
        client_config: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.plugins = plugins
        self.config_store = config_store
        self.status_store = status_store
        self.offsets = offsets
        self.worker_id = worker_id
        self.url = url
        self.group_id = group_id
        self.timing = timing
        self.stages = StageTracker()
        self.group = WorkerGroup(
            client_config or {"bootstrap.servers": str(config.bootstrap_servers or ""), "group.id": group_id},
            group_id,
            self,
            int(timing.session_timeout_s * 1000),
            int(timing.heartbeat_interval_s * 1000),
            int(timing.rebalance_timeout_s * 1000),
        )
        self._lock = threading.RLock()
        self._assign_lock = threading.Lock()  # one assignment computation at a time (rebalance or update)
        self._assignment = Assignment()  # the placement of the generation this worker holds
        self._latest_record = Assignment()  # the last assignment read from the config topic, any generation
        self._generation = -1  # the group generation this worker holds (its statuses carry it)
        self._member_id = ""
        self._leader_id = ""
        self._leader_url: str | None = None
        self._joined: tuple[int, str, ConnectAssignment | None] | None = None  # from the IO thread
        self._rejoin_after_reconcile = False  # revocations to finish before rejoining
        self._departed: dict[str, float] = {}  # leader: worker id -> when it left (KIP-415 delay)
        self._rejoin_at: float | None = None  # leader: when units held for departed workers are due
        # leader: units the current generation revoked, with the workers that must stop them; the leader
        # hands one out once its owner reports it stopped (UNASSIGNED in this generation), or else the
        # rebalance the owner asks for once its revocations are done does
        self._revoked: tuple[dict[str, str], dict[TaskId, str]] = ({}, {})
        # leader: units the current generation revoked from several members that each claimed them
        self._duplicated: tuple[set[str], set[TaskId]] = (set(), set())
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._tick_ident: int | None = None
        self._calls: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future]] = queue.Queue()
        self._restarts: dict[str, RestartRequest] = {}
        self._reconfig: set[str] = set()
        self._running_connectors: dict[str, tuple[dict[str, str], TargetState]] = {}
        self._running_tasks: dict[TaskId, tuple[dict[str, str], int]] = {}  # task config, commit offset
        self._task_targets: dict[TaskId, TargetState] = {}
        # revoked connectors whose stop is under way, with when to stop waiting for it (the graceful timeout):
        # this worker reports them released (UNASSIGNED), and rejoins, only once they have stopped
        self._releasing: dict[str, tuple[concurrent.futures.Future, float]] = {}
        self._reconciled: tuple[Any, ...] | None = None  # inputs of the last complete reconciliation
        self._reconciled_at = 0.0
        self._was_fenced = False  # fenced at the last tick: catch up with the config topic when it ends
        self._update_inputs: tuple[Any, ...] | None = None  # the leader's last between-rebalance computation
        self._request_timeout_s = config.get_int("rest.request.timeout.ms") / 1000
        self.statuses = GenerationStatuses(status_store, lambda: max(self._generation, 0))
        self.worker: Worker | None = None
        config_store.listener = self
        self._assignment_reader = AssignmentReader(group_id)
        config_store.register_prefix(self._assignment_reader.key, self._on_assignment_record)
        status_store.register_prefix(LEGACY_HEARTBEAT_PREFIX, lambda key, raw: None)

    def attach_worker(self, worker: Worker) -> None:
        self.worker = worker
        worker.rebalance = RebalanceCounters()
        worker._reconfigure = self._request_reconfiguration  # connector contexts call back into the herder

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        assert self.worker is not None
        self._start_stores()
        self.group.start(max(30.0, self.timing.session_timeout_s))
        self._thread = threading.Thread(target=self._run, name="herder-tick", daemon=True)
        self._thread.start()
        # joined once the first assignment is applied (on Tansu a first join takes session.timeout.ms/2)
        deadline = time.monotonic() + max(60.0, 3 * self.timing.session_timeout_s)
        while self._generation < 0 and time.monotonic() < deadline and not self._stopping.is_set():
            time.sleep(0.05)
        if self._generation < 0:
            raise ServerError(f"This worker did not join group {self.group_id} in time")
        log.info("Worker %s joined group %s in generation %d", self.worker_id, self.group_id, self._generation)

    def _start_stores(self) -> None:
        """Replay the three internal topics side by side: each start is mostly waiting on the broker."""
        starts = [self.status_store.start, self.offsets.offset_store.start, self.config_store.start]
        with concurrent.futures.ThreadPoolExecutor(len(starts), thread_name_prefix="store-start") as pool:
            futures = [pool.submit(start) for start in starts]
        for future in futures:
            future.result()  # the first failure, as a sequential start would have raised it

    def stop(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(self.timing.session_timeout_s + 30)
        try:
            if self.worker is not None:
                self.worker.stop_all()
        except Exception as exc:  # noqa: BLE001
            log.error("Error while stopping connectors: %s", exc)
        # leave only once everything is stopped: the others then rebalance at once, with no overlap
        # a rebalance in flight is let settle for up to three session timeouts (never past the rebalance
        # timeout) before leaving; see WorkerGroup.close
        self.group.close(
            self.timing.session_timeout_s,
            settle_s=min(self.timing.rebalance_timeout_s, 3 * self.timing.session_timeout_s),
        )
        for store in (self.config_store, self.offsets.offset_store, self.status_store):
            try:
                store.stop()
            except Exception as exc:  # noqa: BLE001
                log.error("Error while stopping a store: %s", exc)

    # ---- the group protocol (kafka-python's IO thread: must not block for long) ------------------

    def worker_state(self) -> WorkerState:
        """What this worker tells the leader when it joins: its URL, how far it has read the config
        topic, and what it holds (its share of the assignment, or what it still runs when fenced)."""
        with self._lock:
            assignment = self._assignment
        connectors: set[str] = set()
        tasks: set[TaskId] = set()
        if not self._fenced():
            # a fenced worker's share belongs to a generation it lost: others may run it by now, and a
            # claim here would make the leader keep it here while revoking it from its new owner
            connectors, tasks = set(assignment.connectors_of(self.worker_id)), set(assignment.tasks_of(self.worker_id))
        # and what still runs: the tick thread may not have stopped a revoked unit yet, and the leader
        # must not hand out what runs here
        connectors |= _keys(self._running_connectors) | _keys(self._releasing)
        tasks |= _keys(self._running_tasks)
        return WorkerState(self.url, self.config_store.snapshot().offset, frozenset(connectors), frozenset(tasks))

    def perform_assignment(
        self, generation: int, leader_id: str, members: dict[str, WorkerState]
    ) -> dict[str, ConnectAssignment]:
        """The leader's rebalance: place every unit over the members, revoking (not moving) what must go
        elsewhere, write the placement to the config topic, and tell each member what it gains and loses."""
        with self._assign_lock:
            try:
                self.config_store.refresh()
            except Exception as exc:  # noqa: BLE001 - members retry the rebalance
                log.error("Leader cannot read the config topic to its end: %s", exc)
                return {m: ConnectAssignment(leader_id, self.url, -1, error=CONFIG_MISMATCH) for m in members}
            snapshot = self.config_store.snapshot()
            with self._lock:
                previous = self._latest_record
            urls = {worker_id_of(state.url): state.url for state in members.values()}
            held_by: dict[str, tuple[frozenset[str], frozenset[TaskId]]] = {
                worker_id_of(state.url): (state.connectors, state.tasks) for state in members.values()
            }
            current_connectors, current_tasks, twice_c, twice_t = claimed_placement(held_by)
            if twice_c or twice_t:
                log.warning(
                    "Units claimed by more than one member, revoked from all of them until they have "
                    "stopped them: connectors %s, tasks %s",
                    sorted(twice_c),
                    sorted(f"{c}-{i}" for c, i in twice_t),
                )
            self._duplicated = (twice_c, twice_t)
            now = time.monotonic()
            departed = previous.owners() - set(urls)
            for worker in departed:
                self._departed.setdefault(worker, now)
            for worker in list(self._departed):
                if worker not in departed:
                    del self._departed[worker]
            held = {w for w, t in self._departed.items() if now - t < self.timing.rebalance_delay_s}
            for c, w in previous.connectors.items():
                if w in held:
                    current_connectors.setdefault(c, w)
            for t, w in previous.tasks.items():
                if w in held:
                    current_tasks.setdefault(t, w)
            self._rejoin_at = min((self._departed[w] + self.timing.rebalance_delay_s for w in held), default=None)
            tasks = [
                (c, i)
                for c, state in snapshot.connectors.items()
                if c not in snapshot.inconsistent
                for i in range(len(state.task_configs))
                if (c, i) not in twice_t
            ]
            connectors, placed = compute_assignment(
                Assignment(0, "", "", current_connectors, current_tasks),
                sorted(urls),
                [c for c in snapshot.connectors if c not in twice_c],
                tasks,
                held,
            )
            record = Assignment(
                previous.generation + 1,
                self.worker_id,
                self.url,
                connectors,
                placed,
                generation,
                {**{w: previous.urls[w] for w in held if w in previous.urls}, **urls},
            )
            self.config_store.write_raw(record.records(self.group_id))
            config_offset = self.config_store.snapshot().offset
            self._revoked = (
                {c: w for c, w in current_connectors.items() if c not in connectors},
                {t: w for t, w in current_tasks.items() if t not in placed},
            )
            delay_ms = int(max(0.0, (self._rejoin_at or now) - now) * 1000)
            log.info(
                "Leader %s assigns generation %d to members %s (held for departed workers: %s); they hold %s",
                self.worker_id,
                generation,
                sorted(urls),
                sorted(held),
                {w: len(c) + len(t) for w, (c, t) in sorted(held_by.items())},
            )
            result = {}
            for member_id, state in members.items():
                worker = worker_id_of(state.url)
                mine_c, mine_t = record.connectors_of(worker), record.tasks_of(worker)
                result[member_id] = ConnectAssignment(
                    leader_id,
                    self.url,
                    config_offset,
                    frozenset(mine_c - state.connectors),
                    frozenset(mine_t - state.tasks),
                    frozenset(state.connectors - mine_c),
                    frozenset(state.tasks - mine_t),
                    delay_ms,
                )
            return result

    def on_joined(self, generation: int, member_id: str, assignment: ConnectAssignment | None) -> None:
        with self._lock:
            self._joined = (generation, member_id, assignment)
        self._wake.set()

    # ---- records and events (reader threads: must not block) ------------------------------------

    def _on_assignment_record(self, key: str, value: Any, started: bool) -> None:
        assignment = self._assignment_reader.read(key, value)
        if isinstance(assignment, str):  # a part (kept for its assignment), another group's, or invalid
            if assignment == INVALID:
                log.error("Ignoring invalid or incomplete assignment record %s", key)
            return
        with self._lock:
            self._latest_record = assignment
            applies = assignment.group_generation == self._generation and self._generation >= 0
            if applies:
                self._assignment = assignment
        if applies:
            log.info(
                "Assignment %d of generation %d from leader %s: connectors %s, tasks %s",
                assignment.generation,
                assignment.group_generation,
                assignment.leader,
                sorted(assignment.connectors_of(self.worker_id)),
                sorted(f"{c}-{i}" for c, i in assignment.tasks_of(self.worker_id)),
            )
        self._wake.set()

    def on_connector_config_update(self, connector: str) -> None:
        self._wake.set()

    def on_connector_config_remove(self, connector: str) -> None:
        self._wake.set()

    def on_task_config_update(self, connector: str, task_ids: list[int]) -> None:
        self._wake.set()

    def on_target_state_change(self, connector: str, state: TargetState) -> None:
        self._wake.set()

    def on_restart_request(self, request: StoredRestartRequest) -> None:
        wanted = RestartRequest(request.connector, request.only_failed, request.include_tasks)
        with self._lock:
            pending = self._restarts.get(request.connector)
            if pending is None or wanted.impact() > pending.impact():
                self._restarts[request.connector] = wanted
        self._wake.set()

    def on_logger_level(self, namespace: str, level: str) -> None:
        # KIP-976: a cluster-scoped level, read after start-up (the store does not announce older ones)
        number = level_number(level)
        if number is None:
            log.error("Ignoring cluster log level record for %s with unknown level %r", namespace, level)
            return
        log.info("Setting the level of %s to %s, as the cluster's log level record says", namespace, level.upper())
        LOG_LEVELS.set(namespace, number)

    def _request_reconfiguration(self, name: str) -> None:
        with self._lock:
            self._reconfig.add(name)
        self._wake.set()

    # ---- the tick thread ------------------------------------------------------------------------

    def _run(self) -> None:
        self._tick_ident = threading.get_ident()
        while not self._stopping.is_set():
            self._wake.wait(TICK_S)
            self._wake.clear()
            if self._stopping.is_set():
                break
            try:
                self._tick()
            except Exception:
                log.exception("Herder tick failed")

    def _tick(self) -> None:
        if self._fenced() and (self._running_connectors or self._running_tasks):
            self._reconcile()  # out of the group: stop everything before rejoining (others may run it now)
        self.group.poll()
        self._apply_join()
        if self.is_leader():
            self._maybe_update_assignment()
        self._reconcile()
        self._report_released()
        if self._rejoin_after_reconcile and not self._releasing:
            self._rejoin_after_reconcile = False
            self.group.request_rejoin()  # revocations done: the leader may now hand them out
            self._wake.set()
        self._run_restarts()
        while True:
            try:
                fn, future = self._calls.get_nowait()
            except queue.Empty:
                break
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:  # noqa: BLE001
                    future.set_exception(exc)

    def call(self, fn: Callable[[], T], what: str) -> T:
        """Run `fn` on the tick thread and wait for it (the request timeout at most)."""
        if threading.get_ident() == self._tick_ident:
            return fn()
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> T:
            with self.stages.stage(what):
                return fn()

        self._calls.put((run, future))
        self._wake.set()
        try:
            return future.result(timeout=self._request_timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            summary = self.stages.summary()
            raise RequestTimeout("Request timed out. " + summary if summary else "Request timed out") from None

    def _apply_join(self) -> None:
        """Take up the generation just joined: read the config topic up to where the leader assigned,
        follow the leader's placement for it, and rejoin once revocations are done."""
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
        if self.config_store.snapshot().offset < connect.config_offset:
            try:
                self.config_store.refresh()
            except Exception as exc:  # noqa: BLE001 - cannot follow this generation: rejoin
                log.warning("Could not read the config topic up to offset %d: %s", connect.config_offset, exc)
                self.group.request_rejoin()
                return
        with self._lock:
            self._generation, self._member_id = generation, member_id
            self._leader_id, self._leader_url = connect.leader, connect.leader_url
            latest = self._latest_record
            if latest.group_generation == generation:
                self._assignment = latest
            else:  # e.g. the leader is a worker that does not write placements: hold only what it says
                mine = {c: self.worker_id for c in connect.connectors}
                self._assignment = Assignment(
                    latest.generation,
                    "",
                    connect.leader_url,
                    mine,
                    {t: self.worker_id for t in connect.tasks},
                    generation,
                    {},
                )
            self._rejoin_after_reconcile = bool(connect.revoked_connectors or connect.revoked_tasks)
        with self._lock:
            assignment = self._assignment
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
        rebalance = self.worker.rebalance if self.worker is not None else None
        if rebalance is not None:
            rebalance.completed_rebalances += 1
            rebalance.epoch = generation
            rebalance.leader_name = worker_id_of(connect.leader_url)
            rebalance.last_rebalance_monotonic = time.monotonic()

    # ---- what the herder asks (any thread) --------------------------------------------------------

    def leader_url(self) -> str | None:
        """The leader's URL, as the generation this worker holds says."""
        return self._leader_url if self._generation >= 0 else None

    def url_of(self, worker_id: str | None) -> str | None:
        """The REST URL of a member of the current placement."""
        if worker_id is None:
            return None
        with self._lock:
            return self._assignment.urls.get(worker_id)

    def assignment(self) -> Assignment:
        """The placement of the generation this worker holds."""
        with self._lock:
            return self._assignment

    def rebalance_pending(self, name: str) -> bool:
        """A rebalance is under way, or tasks of connector `name` are still placed on some member."""
        with self._lock:
            assignment = self._assignment
        if self.group.rebalancing():
            return True
        return any(c == name for c, _ in assignment.tasks)

    def runs_connector(self, name: str) -> bool:
        return name in self._running_connectors

    def holds_task(self, name: str, index: int) -> bool:
        """The task runs here, or is assigned here (about to start)."""
        return (name, index) in self._running_tasks or (name, index) in self._assignment.tasks_of(self.worker_id)

    def wake(self) -> None:
        """Tick now: something the tick thread reconciles has just been written."""
        self._wake.set()

    def stopping(self) -> bool:
        return self._stopping.is_set()

    def responsive(self, timeout_s: float) -> bool:
        """Whether the tick thread runs a call within `timeout_s` (the health check's probe)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._calls.put((lambda: None, future))
        self._wake.set()
        try:
            future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return False
        return True

    def is_leader(self) -> bool:
        return self._generation >= 0 and self._leader_id == self._member_id and not self._fenced()

    def _fenced(self) -> bool:
        """Out of the group: never joined, removed by the coordinator, or no heartbeat answered for a
        session timeout (a frozen process, Kafka out of reach). The others may run our work: stop it.
        Once fenced, a worker is back only in the generation it holds (a heartbeat answered in it, or
        the new join taken up): until the tick thread applies a join, what it holds is the lost one's."""
        if self._generation < 0 or self.group.fenced():
            return True
        if not self._was_fenced:
            return False
        current = self.group.generation()
        return current is None or current[0] != self._generation

    def _maybe_update_assignment(self) -> None:
        """The leader between rebalances: place new units (created connectors, more tasks) on the least
        loaded members and drop deleted ones, without moving anything, so creates and stops do not wait
        for a rebalance; units held for departed workers are handed out by a rebalance once due."""
        if self.group.rebalancing():
            return
        if self._rejoin_at is not None and time.monotonic() >= self._rejoin_at:
            self._rejoin_at = None
            self.group.request_rejoin()
            return
        with self._assign_lock:
            with self._lock:
                current = self._assignment
            if current.group_generation != self._generation:
                return
            snapshot = self.config_store.snapshot()
            revoked_connectors, revoked_tasks = self._still_revoked()
            inputs = (snapshot, current)
            last = self._update_inputs
            if (
                last is not None
                and last[0] is snapshot
                and last[1] is current
                and not (revoked_connectors or revoked_tasks)
            ):
                return
            revoked_connectors |= self._duplicated[0]  # these wait for the next rebalance
            revoked_tasks |= self._duplicated[1]
            tasks = [
                (c, i)
                for c, state in snapshot.connectors.items()
                if c not in snapshot.inconsistent
                for i in range(len(state.task_configs))
                if (c, i) not in revoked_tasks
            ]
            members = sorted(w for w in current.urls if w not in self._departed)
            connectors, placed = compute_assignment(
                current,
                members,
                [c for c in snapshot.connectors if c not in revoked_connectors],
                tasks,
                set(self._departed),
                moves=False,
            )
            self._update_inputs = inputs
            if connectors == current.connectors and placed == current.tasks:
                return
            record = Assignment(
                max(current.generation, self._latest_record.generation) + 1,
                self.worker_id,
                self.url,
                connectors,
                placed,
                self._generation,
                current.urls,
            )
            self.config_store.write_raw(record.records(self.group_id))

    def _still_revoked(self) -> tuple[set[str], set[TaskId]]:
        """The units revoked by this generation whose owners have not yet reported them stopped (the
        revoking worker writes UNASSIGNED, with the generation, once it has stopped a unit it lost)."""
        connectors, tasks = self._revoked
        generation = self._generation

        def stopped(status: InstanceStatus | None, owner: str) -> bool:
            return status is None or (
                status.worker_id == owner and status.state is State.UNASSIGNED and status.generation >= generation
            )

        for name, owner in list(connectors.items()):
            if stopped(self.status_store.connector(name), owner):
                del connectors[name]
        for (name, index), owner in list(tasks.items()):
            if stopped(self.status_store.tasks(name).get(index), owner):
                del tasks[(name, index)]
        return set(connectors), set(tasks)

    def _forget_deleted(self, name: str) -> None:
        """Tombstone a deleted connector's statuses and, as the reference does on revocation, its active
        topics (KIP-558), so `GET /connectors/<c>/topics` reads empty once it is gone."""
        self.statuses.remove_connector(name)
        for topic in self.status_store.topics(name):
            self.status_store.delete_topic(name, topic.topic)

    def _reconcile(self) -> None:
        worker = self.worker
        assert worker is not None
        with self._lock:
            assignment = self._assignment
        snapshot = self.config_store.snapshot()
        fenced = self._fenced()
        if self._was_fenced and not fenced:
            # back after being fenced: what was assigned and configured meanwhile is in the config topic;
            # read it to its end before starting anything (stay fenced this tick if that fails)
            try:
                self.config_store.refresh()
            except Exception as exc:  # noqa: BLE001
                log.warning("Could not read the config topic to its end after being fenced: %s", exc)
                fenced = True
            else:
                with self._lock:
                    assignment = self._assignment
                snapshot = self.config_store.snapshot()
        self._was_fenced = fenced
        with self._lock:
            reconfig_pending = bool(self._reconfig)
        inputs = (snapshot, assignment, fenced)
        last = self._reconciled
        if (
            last is not None
            and all(a is b for a, b in zip(inputs, last, strict=True))
            and not reconfig_pending
            and time.monotonic() - self._reconciled_at < FULL_RECONCILE_S
        ):
            return  # the snapshot and the assignment are shared, immutable views: identity is equality
        self._reconcile_with(worker, assignment, snapshot, fenced)
        self._reconciled, self._reconciled_at = inputs, time.monotonic()

    def _reconcile_with(self, worker: Worker, assignment: Assignment, snapshot: Any, fenced: bool) -> None:
        connectors = snapshot.connectors
        mine_c = set() if fenced else {c for c in assignment.connectors_of(self.worker_id) if c in connectors}
        mine_t: dict[TaskId, ConnectorState] = {}
        if not fenced:
            for c, i in assignment.tasks_of(self.worker_id):
                state = connectors.get(c)
                if (
                    state is not None
                    and c not in snapshot.inconsistent
                    and i < len(state.task_configs)
                    and tasks_run(state.target_state)
                ):
                    mine_t[(c, i)] = state

        # 1. stop tasks this worker must no longer run, or must run with other configs
        # (as the reference: a connector config change reaches tasks through the next task-config commit,
        # which its owner writes, so tasks restart once, with both configs new)
        to_stop = []
        for key, (task_config, commit_offset) in self._running_tasks.items():
            state = mine_t.get(key)
            if (
                state is None
                or state.task_configs[key[1]] != task_config
                or snapshot.commit_offsets.get(key[0], -1) != commit_offset
            ):
                to_stop.append(key)
        if to_stop:
            with self.stages.stage("stopping tasks"):
                worker.stop_tasks(to_stop)
            for name, index in to_stop:
                del self._running_tasks[(name, index)]
                self._task_targets.pop((name, index), None)
                state = connectors.get(name)
                if state is None or index >= len(state.task_configs) or not tasks_run(state.target_state):
                    self.statuses.remove_task(name, index)
                elif (name, index) not in mine_t:
                    self.statuses.put_task_safe(name, index, InstanceStatus(State.UNASSIGNED, self.worker_id))
        # 2. stop connectors likewise
        for name in list(self._running_connectors):
            config, _ = self._running_connectors[name]
            state = connectors.get(name)
            if name not in mine_c or state is None or state.config != config:
                # handed to the connector's thread, after a start still under way: the tick goes on
                stopped = worker.stop_connector(name)
                del self._running_connectors[name]
                if state is None:
                    self._forget_deleted(name)  # what the stopped instance would still report is void
                elif name not in mine_c:
                    self._releasing[name] = (stopped, time.monotonic() + worker.graceful_timeout_s)
                    stopped.add_done_callback(lambda _: self._wake.set())
        for name in assignment.connectors_of(self.worker_id) - set(connectors):
            if (
                self.status_store.connector(name) is not None
                or self.status_store.tasks(name)
                or self.status_store.topics(name)
            ):
                self._forget_deleted(name)  # deleted while we owned it: tombstone what is left
        rebalance = worker.rebalance
        if rebalance is not None:
            rebalance.rebalancing = fenced or self.group.rebalancing()
        # 3. start or move connectors to their target state
        for name in sorted(mine_c):
            state = connectors[name]
            running = self._running_connectors.get(name)
            if running is None:
                self._releasing.pop(name, None)  # ours again: its thread starts it once the stop is done
                started = worker.start_connector(name, dict(state.config), state.target_state)
                self._running_connectors[name] = (dict(state.config), state.target_state)
                self._reconfigure_when_started(name, state.target_state, started)
            elif running[1] is not state.target_state:
                # queued behind whatever the connector's thread runs now (a start, a stop() that blocks)
                moved = worker.transition_connector(name, state.target_state)
                self._running_connectors[name] = (running[0], state.target_state)
                self._reconfigure_when_started(name, state.target_state, moved)
        # 4. start tasks, or move them to their target state
        for key in sorted(mine_t):
            state = mine_t[key]
            target = task_target(state.target_state)
            if key not in self._running_tasks:
                worker.start_task(key[0], key[1], state.task_configs[key[1]], state.config, target)
                self._running_tasks[key] = (dict(state.task_configs[key[1]]), snapshot.commit_offsets.get(key[0], -1))
                self._task_targets[key] = target
            elif self._task_targets.get(key) is not target:
                runner = worker.tasks.get(key)
                if runner is not None:
                    runner.transition_to(target)
                self._task_targets[key] = target
        # 5. regenerate task configs of this worker's connectors where needed
        with self._lock:
            wanted, self._reconfig = self._reconfig & mine_c, set()
        for name in sorted(wanted):
            self._reconfigure_tasks(
                name, connectors[name], snapshot.config_offsets.get(name, -1) > snapshot.commit_offsets.get(name, -1)
            )

    def _reconfigure_tasks(self, name: str, state: ConnectorState, config_changed: bool = False) -> None:
        """Generate task configs; publish them when they differ from the stored ones or when the
        connector config changed since the last commit (the reference's rule)."""
        worker = self.worker
        assert worker is not None
        if not generates_tasks(state.target_state) or not worker.is_running(name):
            return
        tasks_max, enforce = _tasks_max(state.config)
        try:
            with self.stages.stage("generating task configs for the connector"):
                configs = worker.task_configs(name, tasks_max, enforce)
        except Exception as exc:  # noqa: BLE001 - the connector's fault: it goes FAILED
            worker.fail_connector(name, exc)
            return
        if configs != state.task_configs or config_changed:
            with self.stages.stage(f"writing task configs for connector {name} to the config topic"):
                self.config_store.put_task_configs(name, configs)

    def _run_restarts(self) -> None:
        worker = self.worker
        assert worker is not None
        with self._lock:
            pending, self._restarts = self._restarts, {}
        if not pending:
            return
        connectors = self.config_store.snapshot().connectors
        for name, request in pending.items():
            state = connectors.get(name)
            status = self.status_store.connector(name)
            if state is None or status is None:
                continue
            plan = RestartPlan.build(
                request, status.state, {i: s.state for i, s in self.status_store.tasks(name).items()}
            )
            if plan.connector and name in self._running_connectors:
                self.restart_connector_here(name, state)
            for index in plan.tasks:
                if (name, index) in self._running_tasks:
                    self.restart_task_here(name, index, state)

    def _reconfigure_when_started(self, name: str, target: TargetState, started: concurrent.futures.Future) -> None:
        """Once the connector's thread has brought it to a `target` that generates tasks, regenerate its task
        configs on the tick (a continuation: the tick thread never waits for a connector)."""
        if generates_tasks(target):
            started.add_done_callback(
                lambda done: succeeded(done, f"Starting connector {name}") and self._request_reconfiguration(name)
            )

    def _report_released(self) -> None:
        """Report each revoked connector released (UNASSIGNED, which the leader waits for before handing it
        out) once its stop is done, or once the graceful timeout has passed without it, as the reference
        stops waiting then."""
        now = time.monotonic()
        for name, (stopped, deadline) in list(self._releasing.items()):
            if stopped.done() or now >= deadline:
                if not stopped.done():
                    log.error("Connector %s did not stop within the graceful timeout; releasing it anyway", name)
                del self._releasing[name]
                self.statuses.put_connector_safe(name, InstanceStatus(State.UNASSIGNED, self.worker_id))

    def restart_connector_here(self, name: str, state: ConnectorState) -> concurrent.futures.Future:
        """Restart a connector this worker runs (tick thread): handed to its thread, after what it runs now
        (a start under way, say); its task configs are regenerated once it has started. The future is the
        new instance's start."""
        worker = self.worker
        assert worker is not None
        started = worker.restart_connector(name, state.config, state.target_state)
        self._running_connectors[name] = (dict(state.config), state.target_state)
        self._reconfigure_when_started(name, state.target_state, started)
        return started

    def restart_task_here(self, name: str, index: int, state: ConnectorState) -> bool:
        """Restart a task this worker runs or holds (tick thread); False when it did not start."""
        worker = self.worker
        assert worker is not None
        key = (name, index)
        self.statuses.put_task(name, index, InstanceStatus(State.RESTARTING, self.worker_id))
        worker.stop_tasks([key])
        target = task_target(state.target_state)
        ok = worker.start_task(name, index, state.task_configs[index], state.config, target)
        commit = self.config_store.snapshot().commit_offsets.get(name, -1)
        self._running_tasks[key] = (dict(state.task_configs[index]), commit)
        self._task_targets[key] = target
        return ok


def _keys(mapping: dict[Any, Any]) -> set[Any]:
    """The keys of a dict another thread changes (a copy can meet a resize: take it again)."""
    while True:
        try:
            return set(mapping)
        except RuntimeError:
            continue


def _tasks_max(config: dict[str, str]) -> tuple[int, bool]:
    try:
        tasks_max = max(1, int(config.get("tasks.max", "1")))
    except ValueError:
        tasks_max = 1
    return tasks_max, config.get("tasks.max.enforce", "true").strip().lower() != "false"
