"""The distributed herder: same public methods and errors as the standalone herder, state from the
internal topics, and a tick thread that keeps this worker's share of the cluster's work running.

Writes (REST requests) go straight to the config topic and return once read back; the tick thread then
notices the change, like every other worker does, and reconciles: it stops what this worker should no
longer run, acknowledges the assignment generation in its heartbeat, then starts what it should run.
"""
from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
import time
import uuid
from typing import Any, Callable, TypeVar

from ..api.connector import SinkConnector, SourceConnector
from ..plugins import Plugins
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.kafka_config_store import ConfigUpdateListener, KafkaConfigStore
from ..storage.kafka_config_store import RestartRequest as StoredRestartRequest
from ..storage.kafka_status_store import KafkaStatusStore
from ..storage.states import INITIAL_STATES, State, TargetState
from ..storage.status_codec import TopicStatus
from ..worker.offsets import OffsetsManager
from ..worker.worker import Worker
from ..worker_config import WorkerConfig
from ..herder import offset_requests
from ..herder.errors import BadRequest, Forbidden, HerderError, NotFound, NotLeader, RebalanceNeeded, RequestTimeout, ServerError
from ..herder.restart import RestartPlan, RestartRequest
from ..herder.stages import StageTracker
from ..herder.validation import invalid_config_message, plugin_config_keys, validate_connector_config
from .assignment import ASSIGNMENT_PREFIX, Assignment, TaskId, compute_assignment, decode_assignment
from .membership import HEARTBEAT_PREFIX, Heartbeat, Membership, decode_heartbeat
from .statuses import GenerationStatuses

log = logging.getLogger(__name__)
T = TypeVar("T")

HEALTH_TIMEOUT_S = 10.0
TICK_S = 0.2  # the tick thread also wakes on every relevant record
SETTLE_WAIT_S = 10.0  # how long offset requests wait for a pending rebalance before answering 409
# How long a create or target-state change waits for the owners to report the new state, so that it is
# usually visible as soon as the request returns (the reference answers at once and statuses follow);
# best effort: the request succeeds either way.
STATUS_WAIT_S = 5.0
_SETTLED = {
    TargetState.PAUSED: (State.PAUSED, State.FAILED),
    TargetState.STARTED: (State.RUNNING, State.FAILED),
}


class NotAssigned(NotLeader):
    """The operation must run on the worker that owns the connector or task: the REST layer forwards it."""

    def __init__(self, owner_url: str | None, what: str) -> None:
        super().__init__(owner_url)
        if owner_url is not None:
            self.message = f"Cannot restart {what} since it is not assigned to this member; it runs on {owner_url}"
            self.args = (self.message,)


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


class DistributedHerder(ConfigUpdateListener):
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
        self._own_heartbeat_seen: float | None = None
        self._replaying_statuses = True
        self._request_timeout_s = config.get_int("rest.request.timeout.ms") / 1000
        self.statuses = GenerationStatuses(status_store, lambda: self._assignment.generation)
        self.worker: Worker | None = None
        config_store.listener = self
        config_store.register_prefix(ASSIGNMENT_PREFIX + group_id, self._on_assignment_record)
        status_store.register_prefix(HEARTBEAT_PREFIX, self._on_heartbeat_record)

    def attach_worker(self, worker: Worker) -> None:
        self.worker = worker
        worker._reconfigure = self._request_reconfiguration  # connector contexts call back into the herder
        worker._on_topic = self._record_topic

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        assert self.worker is not None
        self.status_store.start()
        self._replaying_statuses = False
        self.offsets.offset_store.start()
        self.config_store.start()
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
        assignment = decode_assignment(value)
        if assignment is None:
            log.error("Ignoring invalid assignment record %s", key)
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
        for worker in owners - set(live):
            self._departed.setdefault(worker, now)
        for worker in list(self._departed):
            if worker in live or worker not in owners:
                del self._departed[worker]
        held = {w for w, t in self._departed.items() if now - t < self.timing.rebalance_delay_s}
        snapshot = self.config_store.snapshot()
        tasks = [(c, i) for c, state in snapshot.connectors.items() if c not in snapshot.inconsistent
                 for i in range(len(state.task_configs))]
        connectors, placed = compute_assignment(current, list(live), snapshot.connectors, tasks, held)
        if connectors == current.connectors and placed == current.tasks:
            return
        new = Assignment(current.generation + 1, self.worker_id, self.url, connectors, placed)
        if unacked:
            log.warning("Workers %s did not acknowledge generation %d within the session timeout; rebalancing anyway",
                        unacked, current.generation)
        log.info("Leader %s publishes assignment generation %d for members %s (held for departed workers: %s)",
                 self.worker_id, new.generation, sorted(live), sorted(held))
        self.config_store.write_raw(ASSIGNMENT_PREFIX + self.group_id, new.encode())

    def _reconcile(self) -> None:
        worker = self.worker
        assert worker is not None
        with self._lock:
            assignment = self._assignment
        generation = assignment.generation
        snapshot = self.config_store.snapshot()
        connectors = snapshot.connectors
        fenced = self._fenced()
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
                    self.statuses.remove_connector(name)
                elif name not in mine_c:
                    self.statuses.put_connector_safe(name, InstanceStatus(State.UNASSIGNED, self.worker_id))
        for name in assignment.connectors_of(self.worker_id) - set(connectors):
            if self.status_store.connector(name) is not None or self.status_store.tasks(name):
                self.statuses.remove_connector(name)  # deleted while we owned it: tombstone what is left
        # revocations are done: acknowledge the generation
        if self._applied_generation != generation and not fenced:
            self._applied_generation = generation
            self._heartbeat_now.set()
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

    # ---- routing helpers ------------------------------------------------------------------------

    def _require_leader(self) -> None:
        leader = self._leader()
        if leader is None:
            raise NotLeader(None)
        if leader.worker_id != self.worker_id or leader.incarnation != self._incarnation:
            raise NotLeader(leader.url)

    def _url_of(self, worker_id: str | None) -> str | None:
        if worker_id is None:
            return None
        heartbeat = self.membership.live().get(worker_id)
        return heartbeat.url if heartbeat is not None else None

    def _request(self) -> Any:
        herder = self

        class _Guard:
            def __enter__(self) -> None:
                if not herder._request_lock.acquire(timeout=herder._request_timeout_s):
                    summary = herder.stages.summary()
                    raise RequestTimeout("Request timed out. " + summary if summary else "Request timed out")

            def __exit__(self, *exc: object) -> None:
                herder._request_lock.release()

        return _Guard()

    def _fresh_state(self, name: str, message: str) -> ConnectorState:
        with self.stages.stage("reading to the end of the config topic"):
            self.config_store.refresh()
        return self._state(name, message)

    def _await_status(self, name: str, settled: Callable[[InstanceStatus | None, list[InstanceStatus], ConnectorState | None], bool]) -> None:
        """Wait (STATUS_WAIT_S at most) until the statuses of `name` satisfy `settled`(connector status,
        statuses of its current tasks, its stored state)."""
        deadline = time.monotonic() + STATUS_WAIT_S
        while time.monotonic() < deadline and not self._stopping.is_set():
            state = self.config_store.snapshot().connectors.get(name)
            count = len(state.task_configs) if state is not None else 0
            tasks = [s for i, s in self.status_store.tasks(name).items() if i < count]
            if settled(self.status_store.connector(name), tasks, state):
                return
            time.sleep(0.05)

    def _await_target(self, name: str, target: TargetState) -> None:
        def settled(connector: InstanceStatus | None, tasks: list[InstanceStatus], state: ConnectorState | None) -> bool:
            if state is None or connector is None:
                return state is None
            if target is TargetState.STOPPED:
                return connector.state is State.STOPPED and not self.status_store.tasks(name)
            wanted = _SETTLED[target]
            return connector.state in wanted and len(tasks) == len(state.task_configs) \
                and all(t.state in wanted for t in tasks)

        self._await_status(name, settled)

    def _rebalance_pending(self, name: str | None = None) -> bool:
        with self._lock:
            assignment = self._assignment
        if name is not None and any(c == name for c, _ in assignment.tasks):
            return True
        live = self.membership.live()
        return any(hb.generation < assignment.generation for hb in live.values())

    # ---- reads (any thread) ---------------------------------------------------------------------

    def _state(self, name: str, message: str) -> ConnectorState:
        snapshot = self.config_store.snapshot()
        state = snapshot.connectors.get(name)
        if state is None:  # maybe just created through another worker: read the config topic to its end
            self.config_store.refresh()
            snapshot = self.config_store.snapshot()
            state = snapshot.connectors.get(name)
        if state is None:
            raise NotFound(message)
        if name in snapshot.inconsistent:
            state = ConnectorState(state.config, state.target_state, [])
        return state

    def connector_names(self) -> list[str]:
        return sorted(self.config_store.snapshot().connectors)

    def connector_info(self, name: str) -> dict[str, Any]:
        return self._info(name, self._state(name, f"Connector {name} not found"))

    def _info(self, name: str, state: ConnectorState) -> dict[str, Any]:
        assert self.worker is not None
        return {"name": name, "config": dict(state.config),
                "tasks": [{"connector": name, "task": i} for i in range(len(state.task_configs))],
                "type": self.worker.connector_type(state.config)}

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._state(name, f"Connector {name} not found").config)

    def task_infos(self, name: str) -> list[dict[str, Any]]:
        state = self._state(name, f"Connector {name} not found")
        return [{"id": {"connector": name, "task": i}, "config": dict(cfg)} for i, cfg in enumerate(state.task_configs)]

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        log.warning("The 'GET /connectors/{connector}/tasks-config' endpoint is deprecated and will be removed in a "
                    "future release; use 'GET /connectors/{connector}/tasks' instead")
        state = self._state(name, f"Connector {name} not found")
        if not state.task_configs:
            raise NotFound(f"Connector {name} not found")
        return {f"{name}-{i}": dict(cfg) for i, cfg in enumerate(state.task_configs)}

    @staticmethod
    def _status_body(status: InstanceStatus) -> dict[str, Any]:
        body: dict[str, Any] = {"state": status.state.value, "worker_id": status.worker_id}
        if status.trace:
            body["trace"] = status.trace
        return body

    def connector_status(self, name: str, overrides: RestartPlan | None = None) -> dict[str, Any]:
        assert self.worker is not None
        state = self.config_store.snapshot().connectors.get(name)
        status = self.status_store.connector(name)
        if state is None or status is None:  # maybe written a moment ago on another worker
            self.config_store.refresh()
            self.status_store.refresh()
            state = self.config_store.snapshot().connectors.get(name)
            status = self.status_store.connector(name)
        if state is None or status is None:
            raise NotFound(f"No status found for connector {name}")
        connector = self._status_body(status)
        if overrides is not None and overrides.connector:
            connector = {"state": State.RESTARTING.value, "worker_id": status.worker_id}
        tasks = []
        for index, task_status in sorted(self.status_store.tasks(name).items()):
            if index >= len(state.task_configs):
                continue  # a task of an older, larger config whose status is being removed
            body = {"id": index, **self._status_body(task_status)}
            if overrides is not None and index in overrides.tasks:
                body = {"id": index, "state": State.RESTARTING.value, "worker_id": task_status.worker_id}
            tasks.append(body)
        return {"name": name, "connector": connector, "tasks": tasks, "type": self.worker.connector_type(state.config)}

    def task_status(self, name: str, index: int) -> dict[str, Any]:
        status = self.status_store.task(name, index)
        if status is None or name not in self.config_store.snapshot().connectors:
            self.config_store.refresh()
            self.status_store.refresh()
            status = self.status_store.task(name, index)
        if status is None or name not in self.config_store.snapshot().connectors:
            raise NotFound(f"No status found for task {name}-{index}")
        return {"id": index, **self._status_body(status)}

    # ---- validation and plugins -----------------------------------------------------------------

    def validate(self, config: dict[str, Any]) -> dict[str, Any]:
        with self.stages.stage("performing multi-property validation for the connector"):
            return self._validate(config)

    def _validate(self, config: dict[str, Any]) -> dict[str, Any]:
        infos = validate_connector_config(self.plugins, config)
        assert self.worker is not None
        try:
            sink = self.worker.is_sink({k: str(v) for k, v in config.items() if v is not None})
        except Exception:  # noqa: BLE001 - the class problem is already reported
            sink = False
        if sink:
            _check_sink_group(infos, config, self.group_id)
        return infos

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        desc = self.plugins.find(plugin)
        if desc is None:
            raise NotFound(f"Unknown plugin {plugin}.")
        with self.stages.stage("retrieving the configuration definition from the connector"):
            return plugin_config_keys(desc.cls)

    # ---- config changes (leader) ----------------------------------------------------------------

    def put_connector_config(self, name: str, config: dict[str, Any], allow_replace: bool,
                             initial_state: str | None = None) -> tuple[bool, dict[str, Any]]:
        target = None
        if initial_state is not None:
            target = INITIAL_STATES.get(initial_state.upper())
            if target is None:
                raise BadRequest(f"Invalid value {initial_state} for field initial_state: must be one of RUNNING, PAUSED, STOPPED (any case)")
        self._require_leader()
        with self.stages.stage("performing multi-property validation for the connector"):
            infos = self._validate(config)
        if infos["error_count"]:
            raise BadRequest(invalid_config_message(infos))
        clean = {k: str(v) for k, v in config.items()}
        with self._request():
            self._require_leader()
            self.config_store.refresh()
            existing = self.config_store.snapshot().connectors.get(name)
            if existing is not None and not allow_replace:
                raise HerderError(f"Connector {name} already exists", 409)
            with self.stages.stage(f"writing a config for connector {name} to the config topic"):
                if existing is not None:
                    self.config_store.put_connector_config(name, clean)
                else:
                    initial = None if target in (None, TargetState.STARTED) else target
                    self.config_store.put_connector_config(name, clean, initial)
            self._wake.set()
            info = self._info(name, self._state(name, f"Connector {name} not found"))
        if existing is None:
            self._await_status(name, lambda connector, _tasks, _state: connector is not None)
        return existing is None, info

    def patch_connector_config(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        self._require_leader()
        with self._request():
            state = self._fresh_state(name, f"Connector {name} not found")
            merged: dict[str, Any] = dict(state.config)
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            return self.put_connector_config(name, merged, allow_replace=True)[1]

    def delete_connector(self, name: str) -> None:
        self._require_leader()
        with self._request():
            self._fresh_state(name, f"Connector {name} not found")
            with self.stages.stage(f"removing the config for connector {name} from the config topic"):
                self.config_store.remove_connector_config(name)
        self._wake.set()
        self._await_status(name, lambda connector, _tasks, _state: connector is None)

    # ---- target states --------------------------------------------------------------------------

    def _write_target(self, name: str, target: TargetState) -> None:
        self._fresh_state(name, f"Unknown connector {name}")
        with self.stages.stage(f"writing the target state of connector {name} to the config topic"):
            self.config_store.put_target_state(name, target)
        self._wake.set()
        self._await_target(name, target)

    def pause_connector(self, name: str) -> None:
        self._write_target(name, TargetState.PAUSED)  # any worker may write target states

    def resume_connector(self, name: str) -> None:
        self._write_target(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        self._fresh_state(name, f"Unknown connector {name}")  # 404 before leadership, as the reference
        self._require_leader()
        with self._request():
            self._fresh_state(name, f"Unknown connector {name}")
            with self.stages.stage(f"writing the target state of connector {name} to the config topic"):
                self.config_store.put_task_configs(name, [])  # KIP-875: empty task set first
                self.config_store.put_target_state(name, TargetState.STOPPED)
        self._wake.set()
        self._await_target(name, TargetState.STOPPED)

    # ---- restarts -------------------------------------------------------------------------------

    def restart_connector(self, name: str) -> None:
        state = self._fresh_state(name, f"Unknown connector: {name}")
        owner = self._assignment.connectors.get(name)
        if owner != self.worker_id:
            if self.is_leader():
                raise NotAssigned(self._url_of(owner), f"connector {name}")
            self._require_leader()

        def apply() -> None:
            if name not in self._running_connectors:
                raise RebalanceNeeded()
            self._restart_connector_here(name, state)

        self._call(apply, f"restarting connector {name}")

    def restart_connector_and_tasks(self, request: RestartRequest) -> dict[str, Any]:
        name = request.connector
        self._require_leader()
        with self._request():
            self._fresh_state(name, f"Unknown connector: {name}")
            connector_status = self.status_store.connector(name)
            if connector_status is None:
                raise NotFound(f"Status for connector {name} not found")
            task_states = {i: s.state for i, s in self.status_store.tasks(name).items()}
            plan = RestartPlan.build(request, connector_status.state, task_states)
            body = self.connector_status(name, overrides=plan)
            with self.stages.stage(f"writing a restart request for connector {name} to the config topic"):
                self.config_store.put_restart_request(
                    StoredRestartRequest(name, request.only_failed, request.include_tasks))
            return body

    def restart_task(self, name: str, index: int) -> None:
        state = self._fresh_state(name, f"Unknown connector: {name}")
        if not 0 <= index < len(state.task_configs):
            raise NotFound(f"Unknown task: {name}-{index}")
        owner = self._assignment.tasks.get((name, index))
        if owner != self.worker_id:
            if self.is_leader():
                raise NotAssigned(self._url_of(owner), f"task {name}-{index}")
            self._require_leader()

        def apply() -> None:
            current = self._state(name, f"Unknown connector: {name}")
            if (name, index) not in self._running_tasks and (name, index) not in self._assignment.tasks_of(self.worker_id):
                raise RebalanceNeeded()
            if index >= len(current.task_configs):
                raise NotFound(f"Unknown task: {name}-{index}")
            if not self._restart_task_here(name, index, current):
                raise ServerError(f"Failed to start task: {name}-{index}")

        self._call(apply, f"restarting task {name}-{index}")

    # ---- offsets --------------------------------------------------------------------------------

    def connector_offsets(self, name: str) -> dict[str, Any]:
        state = self._state(name, f"Connector {name} not found")
        if self._is_sink(state.config):
            return {"offsets": self.offsets.sink_offsets(name, state.config)}
        return {"offsets": self.offsets.source_offsets(name)}

    def _is_sink(self, config: dict[str, str]) -> bool:
        assert self.worker is not None
        try:
            return self.worker.is_sink(config)
        except Exception as exc:  # noqa: BLE001
            raise ServerError(f"Could not determine the type of connector class {config.get('connector.class')}: {exc}") from exc

    def _offsets_precheck(self, name: str) -> ConnectorState:
        self._require_leader()
        state = self._fresh_state(name, f"Connector {name} not found")
        if state.target_state is not TargetState.STOPPED or state.task_configs:
            raise BadRequest(offset_requests.not_stopped_message(name))
        # stopped, but its tasks may still be assigned or stopping: after a stop that just returned, give
        # the group a moment to settle before answering 409 (retriable)
        deadline = time.monotonic() + SETTLE_WAIT_S
        while self._rebalance_pending(name) and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._rebalance_pending(name):
            raise RebalanceNeeded()
        return state

    def alter_offsets(self, name: str, entries: list[dict[str, Any]]) -> str:
        assert self.worker is not None
        with self._request():
            state = self._offsets_precheck(name)
            hook = self.worker.new_connector_for_hook(state.config)
            with self.stages.stage(f"altering offsets of connector {name}"):
                if isinstance(hook, SinkConnector):
                    parsed = _bad_request(lambda: offset_requests.parse_sink_offsets(entries))
                    return self.offsets.alter_sink(name, state.config, hook, parsed)
                assert isinstance(hook, SourceConnector)
                parsed_source = _bad_request(lambda: offset_requests.parse_source_offsets(entries))
                return self.offsets.alter_source(name, state.config, hook, parsed_source)

    def reset_offsets(self, name: str) -> str:
        assert self.worker is not None
        with self._request():
            state = self._offsets_precheck(name)
            hook = self.worker.new_connector_for_hook(state.config)
            with self.stages.stage(f"resetting offsets of connector {name}"):
                if isinstance(hook, SinkConnector):
                    return self.offsets.reset_sink(name, state.config, hook)
                assert isinstance(hook, SourceConnector)
                return self.offsets.reset_source(name, state.config, hook)

    # ---- topics (KIP-558) -----------------------------------------------------------------------

    def _record_topic(self, name: str, index: int, topic: str) -> None:
        if not self.config.get_bool("topic.tracking.enable"):
            return
        if self.status_store.topic(name, topic) is None:
            self.status_store.put_topic(TopicStatus(topic, name, index, int(time.time() * 1000)))

    def connector_topics(self, name: str) -> dict[str, Any]:
        if not self.config.get_bool("topic.tracking.enable"):
            raise Forbidden("Topic tracking is disabled.")
        return {name: {"topics": sorted(t.topic for t in self.status_store.topics(name))}}

    def reset_connector_topics(self, name: str) -> None:
        if not self.config.get_bool("topic.tracking.enable"):
            raise Forbidden("Topic tracking is disabled.")
        if not self.config.get_bool("topic.tracking.allow.reset"):
            raise Forbidden("Topic tracking reset is disabled.")
        for status in self.status_store.topics(name):
            self.status_store.delete_topic(name, status.topic)
        assert self.worker is not None
        for (connector, _), runner in list(self.worker.tasks.items()):
            if connector == name:
                runner._topics_seen.clear()  # type: ignore[attr-defined]

    # ---- health ---------------------------------------------------------------------------------

    def health(self) -> tuple[int, dict[str, str]]:
        if not self.ready:
            self._ready_event.wait(HEALTH_TIMEOUT_S)
        if not self.ready:
            return 503, {"status": "starting", "message": _with_summary("Worker is still starting up.", self.stages.summary())}
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._calls.put((lambda: None, future))
        self._wake.set()
        try:
            future.result(timeout=HEALTH_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return 500, {"status": "unhealthy", "message": _with_summary(
                "Worker was unable to handle this request and may be unable to handle other requests.", self.stages.summary())}
        return 200, {"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}

    # ---- introspection (tests, logs) ------------------------------------------------------------

    def assignment(self) -> Assignment:
        with self._lock:
            return self._assignment


def _tasks_max(config: dict[str, str]) -> tuple[int, bool]:
    try:
        tasks_max = max(1, int(config.get("tasks.max", "1")))
    except ValueError:
        tasks_max = 1
    return tasks_max, config.get("tasks.max.enforce", "true").strip().lower() != "false"


def _check_sink_group(infos: dict[str, Any], config: dict[str, Any], worker_group: str) -> None:
    """Distributed validation (the reference's validateSinkConnectorConfig): a sink's consumer group may not
    be the worker group."""
    override = config.get("consumer.override.group.id")
    if override is not None:
        key, value = "consumer.override.group.id", str(override)
        message = f"Consumer group {override} conflicts with Connect worker group {worker_group}"
        conflict = value == worker_group
    else:
        key, value = "name", str(config.get("name") or "")
        message = f"Consumer group for sink connector named {value} conflicts with Connect worker group {worker_group}"
        conflict = f"connect-{value}" == worker_group
    if not conflict:
        return
    for entry in infos["configs"]:
        if entry.get("value") and entry["value"].get("name") == key:
            entry["value"]["errors"].append(message)
            break
    else:
        infos["configs"].append({"definition": None, "value": {
            "name": key, "value": value, "recommended_values": [], "errors": [message], "visible": True}})
    infos["error_count"] += 1


def _with_summary(message: str, summary: str | None) -> str:
    return f"{message} {summary}" if summary else message


def _bad_request(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except offset_requests.BadRequest as exc:
        raise BadRequest(str(exc)) from None
