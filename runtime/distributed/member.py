"""One member of the worker group: heartbeats, the leader's assignments, and the tick thread that keeps
this worker's share of the cluster's work running (see the package docs for the protocol).

On every record that matters (and every TICK_S) the tick thread reconciles: it stops what this worker
should no longer run, acknowledges the assignment generation in its heartbeat, then starts what it
should run. The REST-facing herder (herder.py) builds on this class.
"""
from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
import time
import uuid
from typing import Any, Callable, TypeVar

from ..plugins import Plugins
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.kafka_config_store import ConfigUpdateListener, KafkaConfigStore
from ..storage.kafka_config_store import RestartRequest as StoredRestartRequest
from ..storage.kafka_status_store import KafkaStatusStore
from ..storage.states import State, TargetState
from ..worker.counters import RebalanceCounters
from ..worker.offsets import OffsetsManager
from ..worker.worker import Worker
from ..worker_config import WorkerConfig
from ..herder.errors import RequestTimeout, ServerError
from ..herder.restart import RestartPlan, RestartRequest
from ..herder.stages import StageTracker
from .assignment import INVALID, Assignment, AssignmentReader, TaskId, compute_assignment
from .membership import HEARTBEAT_PREFIX, Heartbeat, Membership, decode_heartbeat
from .statuses import GenerationStatuses

log = logging.getLogger(__name__)
T = TypeVar("T")

TICK_S = 0.2  # the tick thread also wakes on every relevant record
# A tick whose inputs (config snapshot, assignment, fencing, pending reconfigurations) are those of the
# last reconciliation skips it, so an idle cluster costs next to nothing whatever its size; a full pass
# still runs this often, for what the inputs do not show (statuses of a deleted connector read late).
FULL_RECONCILE_S = 5.0


class Timing:
    def __init__(self, heartbeat_interval_s: float, session_timeout_s: float, rebalance_delay_s: float) -> None:
        self.heartbeat_interval_s = heartbeat_interval_s
        self.session_timeout_s = session_timeout_s
        self.rebalance_delay_s = rebalance_delay_s

    @classmethod
    def from_worker(cls, config: WorkerConfig) -> "Timing":
        def ms(name: str, default: int) -> float:
            return int(str(config.originals.get(name, default)).strip()) / 1000

        return cls(ms("heartbeat.interval.ms", 3000), ms("session.timeout.ms", 10000),
                   ms("scheduled.rebalance.max.delay.ms", 300000))


class GroupMember(ConfigUpdateListener):
    def __init__(self, config: WorkerConfig, plugins: Plugins, config_store: KafkaConfigStore,
                 status_store: KafkaStatusStore, offsets: OffsetsManager, worker_id: str, url: str,
                 kafka_cluster_id: str | None, group_id: str, timing: Timing) -> None:
        self.config = config
        self.plugins = plugins
        self.config_store = config_store
        self.status_store = status_store
        self.offsets = offsets
        self.worker_id = worker_id
        self.url = url
        self.kafka_cluster_id = kafka_cluster_id
        self.group_id = group_id
        self.timing = timing
        self.stages = StageTracker()
        self.ready = False
        self._ready_event = threading.Event()
        self.membership = Membership(timing.session_timeout_s)
        self._incarnation = uuid.uuid4().hex
        self._started_ms = int(time.time() * 1000)
        self._lock = threading.RLock()
        self._request_lock = threading.RLock()  # one leader-side write at a time (exists checks, then writes)
        self._assignment = Assignment()
        self._assignment_seen_at = time.monotonic()
        self._applied_generation = -1
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._heartbeat_thread: threading.Thread | None = None
        self._heartbeat_now = threading.Event()
        self._tick_ident: int | None = None
        self._calls: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future]] = queue.Queue()
        self._restarts: dict[str, RestartRequest] = {}
        self._reconfig: set[str] = set()
        self._running_connectors: dict[str, tuple[dict[str, str], TargetState]] = {}
        self._running_tasks: dict[TaskId, tuple[dict[str, str], int]] = {}  # task config, commit offset
        self._task_targets: dict[TaskId, TargetState] = {}
        self._departed: dict[str, float] = {}
        self._fence_checked_at = 0.0  # when _reconcile last read the status topic to confirm fencing
        self._reconciled: tuple[Any, ...] | None = None  # inputs of the last complete reconciliation
        self._reconciled_at = 0.0
        self._was_fenced = False  # fenced at the last tick: catch up with the config topic when it ends
        self._rebalance_inputs: tuple[Any, ...] | None = None  # the leader's last assignment computation
        self._own_heartbeat_seen: float | None = None
        self._replaying_statuses = True
        self._request_timeout_s = config.get_int("rest.request.timeout.ms") / 1000
        self.statuses = GenerationStatuses(status_store, lambda: self._assignment.generation)
        self.worker: Worker | None = None
        self.broker_monitor: Any = None  # says when Kafka has been unreachable for a while (for /health)
        config_store.listener = self
        self._assignment_reader = AssignmentReader(group_id)
        config_store.register_prefix(self._assignment_reader.key, self._on_assignment_record)
        status_store.register_prefix(HEARTBEAT_PREFIX, self._on_heartbeat_record)

    def attach_worker(self, worker: Worker) -> None:
        self.worker = worker
        worker.rebalance = RebalanceCounters()
        worker._reconfigure = self._request_reconfiguration  # connector contexts call back into the herder
        worker._on_topic = self._record_topic

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        assert self.worker is not None
        self._start_stores()
        # heartbeats have their own thread: a tick blocked on a slow connector must not look like a dead worker
        self._heartbeat_thread = threading.Thread(target=self._heartbeats, name="herder-heartbeat", daemon=True)
        self._heartbeat_thread.start()
        self._thread = threading.Thread(target=self._run, name="herder-tick", daemon=True)
        self._thread.start()
        # joined once our own heartbeat has come back through the topic
        deadline = time.monotonic() + max(30.0, self.timing.session_timeout_s)
        while self._own_heartbeat_seen is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._own_heartbeat_seen is None:
            raise ServerError("This worker's heartbeat did not come back from the status topic in time")
        log.info("Worker %s joined group %s", self.worker_id, self.group_id)

    def _start_stores(self) -> None:
        """Replay the three internal topics side by side: each start is mostly waiting on the broker."""
        def start_statuses() -> None:
            self.status_store.start()
            self._replaying_statuses = False

        starts = [start_statuses, self.offsets.offset_store.start, self.config_store.start]
        with concurrent.futures.ThreadPoolExecutor(len(starts), thread_name_prefix="store-start") as pool:
            futures = [pool.submit(start) for start in starts]
        for future in futures:
            future.result()  # the first failure, as a sequential start would have raised it

    def mark_ready(self) -> None:
        self.ready = True
        self._ready_event.set()

    def stop(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._wake.set()
        self._heartbeat_now.set()
        if self._thread is not None:
            self._thread.join(self.timing.session_timeout_s + 30)
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join(5)
        try:
            if self.worker is not None:
                self.worker.stop_all()
        except Exception as exc:  # noqa: BLE001
            log.error("Error while stopping connectors: %s", exc)
        try:  # leave the group: a tombstone of our heartbeat lets the leader rebalance at once
            self.status_store.send_raw(HEARTBEAT_PREFIX + self.worker_id, None)
            self.status_store.flush(10)
        except Exception as exc:  # noqa: BLE001
            log.error("Could not announce that this worker leaves the group: %s", exc)
        for store in (self.config_store, self.offsets.offset_store, self.status_store):
            try:
                store.stop()
            except Exception as exc:  # noqa: BLE001
                log.error("Error while stopping a store: %s", exc)

    # ---- records and events (reader threads: must not block) ------------------------------------

    def _on_heartbeat_record(self, key: str, raw: bytes | None) -> None:
        worker_id = key[len(HEARTBEAT_PREFIX):]
        heartbeat = decode_heartbeat(raw)
        if raw is not None and (heartbeat is None or heartbeat.worker_id != worker_id):
            log.warning("Ignoring invalid worker heartbeat record %s", key)
            return
        if heartbeat is not None and worker_id == self.worker_id and heartbeat.incarnation == self._incarnation:
            self._own_heartbeat_seen = time.monotonic()
        if heartbeat is not None and worker_id == self.worker_id and heartbeat.incarnation != self._incarnation \
                and heartbeat.started_ms > self._started_ms and not self._replaying_statuses:
            log.error("Another worker started with this worker's id %s (rest.advertised.host.name/port must be unique)",
                      worker_id)
        if raw is None and worker_id == self.worker_id and not self._stopping.is_set() and not self._replaying_statuses:
            self._heartbeat_now.set()  # someone removed us (a previous incarnation leaving): announce again
        self.membership.observe(worker_id, heartbeat, replay=self._replaying_statuses)
        self._wake.set()

    def _on_assignment_record(self, key: str, value: Any, started: bool) -> None:
        assignment = self._assignment_reader.read(key, value)
        if isinstance(assignment, str):  # a part (kept for its assignment), another group's, or invalid
            if assignment == INVALID:
                log.error("Ignoring invalid or incomplete assignment record %s", key)
            return
        with self._lock:
            if assignment.generation < self._assignment.generation:
                return
            self._assignment = assignment
            self._assignment_seen_at = time.monotonic()
        log.info("Assignment generation %d from leader %s: connectors %s, tasks %s", assignment.generation,
                 assignment.leader, sorted(assignment.connectors_of(self.worker_id)),
                 sorted(f"{c}-{i}" for c, i in assignment.tasks_of(self.worker_id)))
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
            except Exception:  # noqa: BLE001 - keep ticking; the next tick retries
                log.exception("Herder tick failed")

    def _heartbeats(self) -> None:
        while not self._stopping.is_set():
            try:
                self._send_heartbeat()
            except Exception:  # noqa: BLE001 - e.g. a full producer queue while Kafka is away; retry next time
                log.exception("Could not send a heartbeat")
            self._heartbeat_now.wait(self.timing.heartbeat_interval_s)
            self._heartbeat_now.clear()

    def _tick(self) -> None:
        if self.is_leader():
            self._maybe_rebalance()
        self._reconcile()
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

    def _call(self, fn: Callable[[], T], what: str) -> T:
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

    def _send_heartbeat(self) -> None:
        heartbeat = Heartbeat(self.worker_id, self.url, self._incarnation, self._started_ms, int(time.time() * 1000),
                              self._applied_generation)
        self.status_store.send_raw(heartbeat.key(), heartbeat.encode())

    def _leader(self) -> Heartbeat | None:
        return self.membership.leader()

    def is_leader(self) -> bool:
        leader = self._leader()
        return leader is not None and leader.worker_id == self.worker_id and leader.incarnation == self._incarnation

    def _fenced(self) -> bool:
        """True when our own heartbeats have not come back for a session timeout: the others consider us
        gone and hand our work out, so we stop it too (a worker cut off from Kafka must not run zombies)."""
        seen = self._own_heartbeat_seen
        return seen is None or time.monotonic() - seen > self.timing.session_timeout_s

    def _maybe_rebalance(self) -> None:
        now = time.monotonic()
        live = self.membership.live()
        with self._lock:
            current = self._assignment
            seen_at = self._assignment_seen_at
        unacked = sorted(w for w, hb in live.items() if hb.generation < current.generation)
        if unacked and now - seen_at < self.timing.session_timeout_s:
            return  # revocations of the current generation may still be running
        owners = current.owners()
        if (owners - set(live)) - set(self._departed):
            # Before handing a silent worker's work out, make sure the silence is not our own reader
            # lagging (a starved process, a slow broker): read the status topic to its end and look again.
            # Otherwise a live worker would be declared dead and its tasks run twice for a while.
            try:
                self.status_store.refresh()
            except Exception as exc:  # noqa: BLE001 - unconfirmed: decide at a later tick
                log.warning("Could not read the status topic to its end to confirm departed workers: %s", exc)
                return
            if not self.is_leader():
                return
            live = self.membership.live()
        for worker in owners - set(live):
            self._departed.setdefault(worker, now)
        for worker in list(self._departed):
            if worker in live or worker not in owners:
                del self._departed[worker]
        held = {w for w, t in self._departed.items() if now - t < self.timing.rebalance_delay_s}
        snapshot = self.config_store.snapshot()
        inputs = (snapshot, current, frozenset(live), frozenset(held))
        last = self._rebalance_inputs
        if last is not None and last[0] is snapshot and last[1] is current and last[2:] == inputs[2:]:
            return  # nothing the assignment depends on has changed since it was last computed
        tasks = [(c, i) for c, state in snapshot.connectors.items() if c not in snapshot.inconsistent
                 for i in range(len(state.task_configs))]
        connectors, placed = compute_assignment(current, list(live), snapshot.connectors, tasks, held)
        if connectors == current.connectors and placed == current.tasks:
            self._rebalance_inputs = inputs
            return
        # A leader that was frozen (or slow) may have missed a generation another leader published meanwhile:
        # read the config topic to its end first, and recompute at the next tick if the assignment moved on,
        # so no generation number is ever published twice.
        try:
            self.config_store.refresh()
        except Exception as exc:  # noqa: BLE001 - Kafka unreachable: decide at a later tick
            log.warning("Could not read the config topic to its end before publishing an assignment: %s", exc)
            return
        with self._lock:
            if self._assignment is not current:
                return
        new = Assignment(current.generation + 1, self.worker_id, self.url, connectors, placed)
        if unacked:
            log.warning("Workers %s did not acknowledge generation %d within the session timeout; rebalancing anyway",
                        unacked, current.generation)
        log.info("Leader %s publishes assignment generation %d for members %s (held for departed workers: %s)",
                 self.worker_id, new.generation, sorted(live), sorted(held))
        self.config_store.write_raw(new.records(self.group_id))
        self._rebalance_inputs = inputs

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
        if fenced and self._own_heartbeat_seen is not None \
                and time.monotonic() - self._fence_checked_at > self.timing.session_timeout_s:
            # our own reader may just be behind: catch up once before giving all our work away
            self._fence_checked_at = time.monotonic()
            try:
                self.status_store.refresh()
            except Exception as exc:  # noqa: BLE001 - Kafka unreachable: stay fenced
                log.warning("Could not read the status topic to its end: %s", exc)
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
        if last is not None and all(a is b for a, b in zip(inputs, last)) and not reconfig_pending \
                and time.monotonic() - self._reconciled_at < FULL_RECONCILE_S:
            return  # the snapshot and the assignment are shared, immutable views: identity is equality
        self._reconcile_with(worker, assignment, snapshot, fenced)
        self._reconciled, self._reconciled_at = inputs, time.monotonic()

    def _reconcile_with(self, worker: Worker, assignment: Assignment, snapshot: Any, fenced: bool) -> None:
        generation = assignment.generation
        connectors = snapshot.connectors
        mine_c = set() if fenced else {c for c in assignment.connectors_of(self.worker_id) if c in connectors}
        mine_t: dict[TaskId, ConnectorState] = {}
        if not fenced:
            for c, i in assignment.tasks_of(self.worker_id):
                state = connectors.get(c)
                if state is not None and c not in snapshot.inconsistent and i < len(state.task_configs) \
                        and state.target_state is not TargetState.STOPPED:
                    mine_t[(c, i)] = state

        # 1. stop tasks this worker must no longer run, or must run with other configs
        # (as the reference: a connector config change reaches tasks through the next task-config commit,
        # which its owner writes, so tasks restart once, with both configs new)
        to_stop = []
        for key, (task_config, commit_offset) in self._running_tasks.items():
            state = mine_t.get(key)
            if state is None or state.task_configs[key[1]] != task_config \
                    or snapshot.commit_offsets.get(key[0], -1) != commit_offset:
                to_stop.append(key)
        if to_stop:
            with self.stages.stage("stopping tasks"):
                worker.stop_tasks(to_stop)
            for name, index in to_stop:
                del self._running_tasks[(name, index)]
                self._task_targets.pop((name, index), None)
                state = connectors.get(name)
                if state is None or index >= len(state.task_configs) or state.target_state is TargetState.STOPPED:
                    self.statuses.remove_task(name, index)
                elif (name, index) not in mine_t:
                    self.statuses.put_task_safe(name, index, InstanceStatus(State.UNASSIGNED, self.worker_id))
        # 2. stop connectors likewise
        for name in list(self._running_connectors):
            config, _ = self._running_connectors[name]
            state = connectors.get(name)
            if name not in mine_c or state is None or state.config != config:
                with self.stages.stage("stopping the connector"):
                    worker.stop_connector(name)
                del self._running_connectors[name]
                if state is None:
                    self._forget_deleted(name)
                elif name not in mine_c:
                    self.statuses.put_connector_safe(name, InstanceStatus(State.UNASSIGNED, self.worker_id))
        for name in assignment.connectors_of(self.worker_id) - set(connectors):
            if self.status_store.connector(name) is not None or self.status_store.tasks(name) \
                    or self.status_store.topics(name):
                self._forget_deleted(name)  # deleted while we owned it: tombstone what is left
        # revocations are done: acknowledge the generation
        rebalance = worker.rebalance
        if self._applied_generation != generation and not fenced:
            self._applied_generation = generation
            self._heartbeat_now.set()
            if rebalance is not None:
                rebalance.completed_rebalances += 1
                rebalance.epoch = generation
                rebalance.leader_name = assignment.leader or ""
                rebalance.last_rebalance_monotonic = time.monotonic()
        if rebalance is not None:
            rebalance.rebalancing = fenced or self._applied_generation != generation
        # 3. start or move connectors to their target state
        for name in sorted(mine_c):
            state = connectors[name]
            running = self._running_connectors.get(name)
            if running is None:
                with self.stages.stage("starting the connector"):
                    ok = worker.start_connector(name, state.config, state.target_state)
                self._running_connectors[name] = (dict(state.config), state.target_state)
                if ok and state.target_state is TargetState.STARTED:
                    self._reconfig.add(name)
            elif running[1] is not state.target_state:
                with self.stages.stage("starting the connector"):
                    ok = worker.transition_connector(name, state.target_state)
                self._running_connectors[name] = (running[0], state.target_state)
                if ok and state.target_state is TargetState.STARTED:
                    self._reconfig.add(name)
        # 4. start tasks, or move them to their target state
        for key in sorted(mine_t):
            state = mine_t[key]
            target = TargetState.PAUSED if state.target_state is TargetState.PAUSED else TargetState.STARTED
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
            self._reconfigure_tasks(name, connectors[name],
                                    snapshot.config_offsets.get(name, -1) > snapshot.commit_offsets.get(name, -1))

    def _reconfigure_tasks(self, name: str, state: ConnectorState, config_changed: bool = False) -> None:
        """Generate task configs; publish them when they differ from the stored ones or when the
        connector config changed since the last commit (the reference's rule)."""
        worker = self.worker
        assert worker is not None
        if state.target_state is not TargetState.STARTED or not worker.is_running(name):
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
            plan = RestartPlan.build(request, status.state,
                                     {i: s.state for i, s in self.status_store.tasks(name).items()})
            if plan.connector and name in self._running_connectors:
                self._restart_connector_here(name, state)
            for index in plan.tasks:
                if (name, index) in self._running_tasks:
                    self._restart_task_here(name, index, state)

    def _restart_connector_here(self, name: str, state: ConnectorState) -> None:
        worker = self.worker
        assert worker is not None
        self.statuses.put_connector(name, InstanceStatus(State.RESTARTING, self.worker_id))
        with self.stages.stage("stopping the connector"):
            worker.stop_connector(name)
        with self.stages.stage("starting the connector"):
            ok = worker.start_connector(name, state.config, state.target_state)
        self._running_connectors[name] = (dict(state.config), state.target_state)
        if ok and state.target_state is TargetState.STARTED:
            self._reconfigure_tasks(name, state)

    def _restart_task_here(self, name: str, index: int, state: ConnectorState) -> bool:
        worker = self.worker
        assert worker is not None
        key = (name, index)
        self.statuses.put_task(name, index, InstanceStatus(State.RESTARTING, self.worker_id))
        worker.stop_tasks([key])
        target = TargetState.PAUSED if state.target_state is TargetState.PAUSED else TargetState.STARTED
        ok = worker.start_task(name, index, state.task_configs[index], state.config, target)
        commit = self.config_store.snapshot().commit_offsets.get(name, -1)
        self._running_tasks[key] = (dict(state.task_configs[index]), commit)
        self._task_targets[key] = target
        return ok


def _tasks_max(config: dict[str, str]) -> tuple[int, bool]:
    try:
        tasks_max = max(1, int(config.get("tasks.max", "1")))
    except ValueError:
        tasks_max = 1
    return tasks_max, config.get("tasks.max.enforce", "true").strip().lower() != "false"
