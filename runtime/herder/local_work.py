"""What runs on a distributed worker, owned by its tick thread (tick.py): the connectors and tasks it runs,
the revoked connectors still stopping, and the reconciliation that brings them to this worker's share of
the placement and the stored configs.

Only the tick thread changes this state. Other threads read the `Held` value it publishes after each step
(what runs here: the group member reports it when this worker joins, REST threads ask whether a connector
or task is here), and hand it work through inboxes under a lock: connectors asking for their task configs
to be regenerated (their own threads), restart requests read from the config topic (its reader thread), and
exactly-once tasks that failed fenced (their own threads; see `_restart_fenced`).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable

from ..api.errors import ConnectError
from ..control.restart import RestartPlan, RestartRequest
from ..control.stages import StageTracker
from ..control.target_states import task_target, tasks_run
from ..distributed.assignment import Assignment, TaskId
from ..distributed.member import Held
from ..log_levels import LOG_LEVELS, level_number
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.kafka_config_store import ClusterConfig, ConfigUpdateListener, KafkaConfigStore, PrivilegedWriteError
from ..storage.kafka_config_store import RestartRequest as StoredRestartRequest
from ..storage.kafka_status_store import KafkaStatusStore
from ..storage.states import State, TargetState
from ..worker.exactly_once import ExactlyOnceStart, task_transactional_id
from ..worker.worker import Worker
from .task_configs import generate_task_configs, reconfigure_when_started
from .topics import ActiveTopics

log = logging.getLogger(__name__)

# A reconciliation whose inputs (config snapshot, placement, fencing, pending regenerations) are those of the
# last one is skipped, so an idle cluster costs next to nothing whatever its size; a full pass still runs
# this often, for what the inputs do not show (statuses of a deleted connector read late).
FULL_RECONCILE_S = 5.0


class LocalWork(ConfigUpdateListener):
    """This worker's share of the work. Also the config topic's listener: every change that matters wakes
    the tick thread (`wake`)."""

    def __init__(
        self,
        worker: Worker,
        config_store: KafkaConfigStore,
        statuses: KafkaStatusStore,
        topics: ActiveTopics,
        worker_id: str,
        stages: StageTracker,
        publish: Callable[[Held], None],
        wake: Callable[[], None],
        is_leader: Callable[[], bool],
        owns: Callable[[str, int], bool],
        exactly_once_group: str | None = None,
        is_source: Callable[[dict[str, str]], bool] = lambda config: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`statuses` stamps what it writes with the generation (GenerationStatuses); `publish` hears each new
        `Held` (the group member's `report_held`); `owns(connector, task)` whether a task is this worker's now.
        With `exactly_once_group` (exactly.once.source.support=enabled: the group id) the tasks of source
        connectors run exactly once (KIP-618): a new generation waits until the leader has fenced the earlier
        one, and each task's producer has the id `<group>-<connector>-<task>`."""
        self.worker = worker
        self.config_store = config_store
        self.statuses = statuses
        self.topics = topics
        self.worker_id = worker_id
        self.stages = stages
        self._publish = publish
        self._wake = wake
        self._is_leader = is_leader
        self._owns = owns
        self._exactly_once_group = exactly_once_group
        self._is_source = is_source
        self._clock = clock
        self.held = Held()  # replaced whole by the tick thread; read by any thread
        # the tick thread's own
        self._connectors: dict[str, tuple[dict[str, str], TargetState]] = {}  # config, target
        self._tasks: dict[TaskId, tuple[dict[str, str], int]] = {}  # task config, commit offset
        self._task_targets: dict[TaskId, TargetState] = {}
        # revoked connectors whose stop is under way, with when to stop waiting for it (the graceful timeout):
        # this worker reports them released (UNASSIGNED), and rejoins, only once they have stopped
        self._releasing: dict[str, tuple[concurrent.futures.Future, float]] = {}
        self._reconciled: tuple[object, ...] | None = None  # inputs of the last complete reconciliation
        self._reconciled_at = 0.0
        self._placement = 0  # the generation of the placement last reconciled
        self._started = 0  # numbers each task start, so that a fence reported late is told from a new one
        self._task_starts: dict[TaskId, int] = {}  # the number of each exactly-once task's latest start
        self._refenced: dict[TaskId, int] = {}  # task -> the placement it was restarted in after a fence
        # inboxes (any thread)
        self._inbox = threading.Lock()
        self._restarts: dict[str, RestartRequest] = {}
        self._reconfig: set[str] = set()
        self._fenced: dict[TaskId, int] = {}  # exactly-once tasks that failed fenced -> the start that failed

    # ---- what other threads ask -------------------------------------------------------------------

    def runs_connector(self, name: str) -> bool:
        return name in self.held.connectors

    def runs_task(self, name: str, index: int) -> bool:
        return (name, index) in self.held.tasks

    def request_reconfiguration(self, name: str) -> None:
        """A connector asks for its task configs to be regenerated (any thread; the tick thread does it)."""
        with self._inbox:
            self._reconfig.add(name)
        self._wake()

    # ---- the config topic's events (its reader thread: must not block) ---------------------------

    def on_connector_config_update(self, connector: str) -> None:
        self._wake()

    def on_connector_config_remove(self, connector: str) -> None:
        self._wake()

    def on_task_config_update(self, connector: str, task_ids: list[int]) -> None:
        self._wake()

    def on_target_state_change(self, connector: str, state: TargetState) -> None:
        self._wake()

    def on_restart_request(self, request: StoredRestartRequest) -> None:
        wanted = RestartRequest(request.connector, request.only_failed, request.include_tasks)
        with self._inbox:
            pending = self._restarts.get(request.connector)
            if pending is None or wanted.impact() > pending.impact():
                self._restarts[request.connector] = wanted
        self._wake()

    def on_task_count_record(self, connector: str, count: int) -> None:
        self._wake()  # a new generation of the connector's tasks may start now

    def on_logger_level(self, namespace: str, level: str) -> None:
        # KIP-976: a cluster-scoped level, read after start-up (the store does not announce older ones)
        number = level_number(level)
        if number is None:
            log.error("Ignoring cluster log level record for %s with unknown level %r", namespace, level)
            return
        log.info("Setting the level of %s to %s, as the cluster's log level record says", namespace, level.upper())
        LOG_LEVELS.set(namespace, number)

    # ---- the tick thread ------------------------------------------------------------------------

    def runs_anything(self) -> bool:
        return bool(self._connectors or self._tasks)

    def releasing(self) -> bool:
        return bool(self._releasing)

    def _published(self) -> None:
        self.held = Held(frozenset(self._connectors), frozenset(self._releasing), frozenset(self._tasks))
        self._publish(self.held)

    def reconcile(self, assignment: Assignment, config: ClusterConfig, fenced: bool) -> None:
        """Bring what runs here to this worker's share of `assignment` under `config` (nothing when
        `fenced`), unless nothing it depends on changed since the last time."""
        with self._inbox:
            reconfig_pending = bool(self._reconfig)
        self._placement = assignment.generation
        inputs = (config, assignment, fenced)
        last = self._reconciled
        if (
            last is not None
            and all(a is b for a, b in zip(inputs, last, strict=True))
            and not reconfig_pending
            and self._clock() - self._reconciled_at < FULL_RECONCILE_S
        ):
            return  # the snapshot and the placement are immutable views: identity is equality
        self._reconcile(assignment, config, fenced)
        self._reconciled, self._reconciled_at = inputs, self._clock()

    def _reconcile(self, assignment: Assignment, config: ClusterConfig, fenced: bool) -> None:
        worker = self.worker
        connectors = config.connectors
        mine_c = set() if fenced else {c for c in assignment.connectors_of(self.worker_id) if c in connectors}
        mine_t: dict[TaskId, ConnectorState] = {}
        waiting: set[TaskId] = set()  # KIP-618: a new generation waits until the leader fenced the earlier one
        if not fenced:
            for c, i in assignment.tasks_of(self.worker_id):
                state = connectors.get(c)
                if (
                    state is not None
                    and c not in config.inconsistent
                    and i < len(state.task_configs)
                    and tasks_run(state.target_state)
                ):
                    if c in config.pending_fencing and self._exactly_once(state):
                        waiting.add((c, i))
                    else:
                        mine_t[(c, i)] = state

        # 1. stop tasks this worker must no longer run, or must run with other configs
        # (as the reference: a connector config change reaches tasks through the next task-config commit,
        # which its owner writes, so tasks restart once, with both configs new)
        to_stop = []
        for key, (task_config, commit_offset) in self._tasks.items():
            state = mine_t.get(key)
            if (
                state is None
                or state.task_configs[key[1]] != task_config
                or config.commit_offsets.get(key[0], -1) != commit_offset
            ):
                to_stop.append(key)
        if to_stop:
            with self.stages.stage("stopping tasks"):
                worker.stop_tasks(to_stop)
            for name, index in to_stop:
                del self._tasks[(name, index)]
                self._task_targets.pop((name, index), None)
                self._task_starts.pop((name, index), None)
                self._refenced.pop((name, index), None)
                state = connectors.get(name)
                if state is None or index >= len(state.task_configs) or not tasks_run(state.target_state):
                    self.statuses.remove_task(name, index)
                elif (name, index) not in mine_t and (name, index) not in waiting:
                    self.statuses.put_task_safe(name, index, InstanceStatus(State.UNASSIGNED, self.worker_id))
            self._published()
        # 2. stop connectors likewise
        stopped_any = False
        for name in list(self._connectors):
            running_config, _ = self._connectors[name]
            state = connectors.get(name)
            if name not in mine_c or state is None or state.config != running_config:
                # handed to the connector's thread, after a start still under way: the tick goes on
                stopped = worker.stop_connector(name)
                del self._connectors[name]
                if state is None:
                    self._forget_deleted(name)  # what the stopped instance would still report is void
                elif name not in mine_c:
                    self._releasing[name] = (stopped, self._clock() + worker.graceful_timeout_s)
                    stopped.add_done_callback(lambda _: self._wake())
                stopped_any = True
        if stopped_any:
            self._published()
        for name in assignment.connectors_of(self.worker_id) - set(connectors):
            if self.statuses.connector(name) is not None or self.statuses.tasks(name) or self.topics.topics(name):
                self._forget_deleted(name)  # deleted while we owned it: tombstone what is left
        # 3. start or move connectors to their target state; what starts is published first (the leader
        # must never hand out what may run here)
        starting = {name for name in mine_c if name not in self._connectors}
        for name in starting:
            self._releasing.pop(name, None)  # ours again: its thread starts it once the stop is done
            self._connectors[name] = (dict(connectors[name].config), connectors[name].target_state)
        new_tasks = {key for key in mine_t if key not in self._tasks}
        for key in new_tasks:
            self._tasks[key] = (dict(mine_t[key].task_configs[key[1]]), config.commit_offsets.get(key[0], -1))
            self._task_targets[key] = task_target(mine_t[key].target_state)
        if starting or new_tasks:
            self._published()
        for name in sorted(mine_c):
            state = connectors[name]
            if name in starting:
                started = worker.start_connector(
                    name, dict(state.config), state.target_state, self.request_reconfiguration
                )
                reconfigure_when_started(name, state.target_state, started, self.request_reconfiguration)
            elif self._connectors[name][1] is not state.target_state:
                # queued behind whatever the connector's thread runs now (a start, a stop() that blocks)
                moved = worker.transition_connector(name, state.target_state)
                self._connectors[name] = (self._connectors[name][0], state.target_state)
                reconfigure_when_started(name, state.target_state, moved, self.request_reconfiguration)
        # 4. start tasks, or move them to their target state
        for key in sorted(mine_t):
            state = mine_t[key]
            target = task_target(state.target_state)
            if key in new_tasks:
                self._start_task(key, state, target)
            elif self._task_targets.get(key) is not target:
                runner = worker.tasks.get(key)
                if runner is not None:
                    runner.transition_to(target)
                self._task_targets[key] = target
        # 5. regenerate task configs of this worker's connectors where needed
        with self._inbox:
            wanted, self._reconfig = self._reconfig & mine_c, set()
        for name in sorted(wanted):
            self._reconfigure_tasks(
                name, connectors[name], config.config_offsets.get(name, -1) > config.commit_offsets.get(name, -1)
            )

    def _reconfigure_tasks(self, name: str, state: ConnectorState, config_changed: bool) -> None:
        """Generate task configs; publish them when they differ from the stored ones or when the connector
        config changed since the last commit (the reference's rule)."""
        configs = generate_task_configs(self.worker, name, state, self.stages)
        if configs is not None and (configs != state.task_configs or config_changed):
            with self.stages.stage(f"writing task configs for connector {name} to the config topic"):
                try:
                    self.config_store.put_task_configs(name, configs, privileged=self._is_leader())
                except PrivilegedWriteError as exc:  # the leader lost its write privileges: again next tick
                    log.warning("Could not write the task configs of connector %s: %s", name, exc)
                    self.request_reconfiguration(name)

    def _forget_deleted(self, name: str) -> None:
        """Tombstone a deleted connector's statuses and, as the reference does on revocation, its active
        topics (KIP-558), so `GET /connectors/<c>/topics` reads empty once it is gone."""
        self.statuses.remove_connector(name)
        self.topics.reset(name)

    def report_released(self) -> None:
        """Report each revoked connector released (UNASSIGNED, which the leader waits for before handing it
        out) once its stop is done, or once the graceful timeout has passed without it, as the reference
        stops waiting then."""
        now = self._clock()
        released = False
        for name, (stopped, deadline) in list(self._releasing.items()):
            if stopped.done() or now >= deadline:
                if not stopped.done():
                    log.error("Connector %s did not stop within the graceful timeout; releasing it anyway", name)
                del self._releasing[name]
                released = True
                self.statuses.put_connector_safe(name, InstanceStatus(State.UNASSIGNED, self.worker_id))
        if released:
            self._published()

    def run_restarts(self) -> None:
        """Apply the restart requests read from the config topic (KIP-745) to what runs here, then restart the
        exactly-once tasks a zombie fenced."""
        with self._inbox:
            pending, self._restarts = self._restarts, {}
        if pending:
            self._run_requested_restarts(pending)
        self._restart_fenced()

    def _run_requested_restarts(self, pending: dict[str, RestartRequest]) -> None:
        config = self.config_store.snapshot()
        for name, request in pending.items():
            state = config.connectors.get(name)
            status = self.statuses.connector(name)
            if state is None or status is None:
                continue
            plan = RestartPlan.build(request, status.state, {i: s.state for i, s in self.statuses.tasks(name).items()})
            if plan.connector and name in self._connectors:
                self.restart_connector(name, state)
            for index in plan.tasks:
                if (name, index) in self._tasks:
                    self.restart_task(name, index, state)

    def restart_connector(self, name: str, state: ConnectorState) -> concurrent.futures.Future:
        """Restart a connector this worker runs: handed to its thread, after what it runs now (a start under
        way, say); its task configs are regenerated once it has started. The future is the new instance's
        start."""
        started = self.worker.restart_connector(name, state.config, state.target_state, self.request_reconfiguration)
        self._connectors[name] = (dict(state.config), state.target_state)
        self._published()
        reconfigure_when_started(name, state.target_state, started, self.request_reconfiguration)
        return started

    def restart_task(self, name: str, index: int, state: ConnectorState) -> bool:
        """Restart a task this worker runs or holds; False when it did not start."""
        worker = self.worker
        key = (name, index)
        self.statuses.put_task(name, index, InstanceStatus(State.RESTARTING, self.worker_id))
        worker.stop_tasks([key])
        target = task_target(state.target_state)
        self._tasks[key] = (dict(state.task_configs[index]), self.config_store.snapshot().commit_offsets.get(name, -1))
        self._task_targets[key] = target
        self._published()
        return self._start_task(key, state, target)

    def _exactly_once(self, state: ConnectorState) -> bool:
        """The connector's tasks run exactly once (a source connector on an `enabled` worker)."""
        return self._exactly_once_group is not None and self._is_source(state.config)

    def _start_task(self, key: TaskId, state: ConnectorState, target: TargetState) -> bool:
        name, index = key
        exactly_once = None
        group = self._exactly_once_group
        if group is not None and self._exactly_once(state):
            generation = self._tasks[key][1]
            self._started += 1
            start = self._task_starts[key] = self._started
            exactly_once = ExactlyOnceStart(
                task_transactional_id(group, name, index),
                still_current=lambda: self._still_current(name, index, generation),
                on_fenced=lambda: self._task_fenced(key, start),
            )
        return self.worker.start_task(name, index, state.task_configs[index], state.config, target, exactly_once)

    def _still_current(self, name: str, index: int, generation: int) -> None:
        """On the task's thread, before its producer fences earlier ones (the reference's
        verifyTaskGenerationAndOwnership): its task configs are still the latest, and it is still this
        worker's; otherwise it must not start, lest it fence the task that replaced it."""
        config = self.config_store.snapshot()
        if config.commit_offsets.get(name, -1) != generation or name in config.pending_fencing:
            raise ConnectError(f"Task {name}-{index} belongs to an earlier generation of task configs; not starting it")
        if not self._owns(name, index):
            raise ConnectError(f"Task {name}-{index} is no longer assigned to this worker; not starting it")

    def _task_fenced(self, key: TaskId, start: int) -> None:
        """An exactly-once task failed fenced (its thread): the tick thread decides what to do."""
        with self._inbox:
            self._fenced[key] = start
        self._wake()

    def _restart_fenced(self) -> None:
        """Restart each exactly-once task a zombie fenced, once per placement.

        KIP-618 leaves a race (the reference has it too): a worker frozen after its check that a task is still
        its own, but before its producer's init, wakes up without the task and its init completes all the same,
        fencing the instance the group started meanwhile. That instance then fails (on Tansu, by a commit that
        times out) while its worker still owns the task, with the latest task configs; the zombie's own check
        after its init stops it. So such a failure is restarted: the new instance's init fences the zombie back
        and it resumes from the committed offsets. Once per placement of the group, so that two workers that
        both think they own a task cannot fence each other in turn; a second fence leaves it FAILED."""
        with self._inbox:
            fenced, self._fenced = self._fenced, {}
        if not fenced:
            return
        config = self.config_store.snapshot()
        for key, start in fenced.items():
            name, index = key
            state = config.connectors.get(name)
            if self._task_starts.get(key) != start or state is None:
                continue  # stopped, or started again, since
            if config.commit_offsets.get(name, -1) != self._tasks[key][1] or name in config.pending_fencing:
                continue  # newer task configs replace it
            status = self.statuses.task(name, index)
            if not self._owns(name, index) or (status is not None and status.worker_id != self.worker_id):
                log.info("Task %s-%d was fenced and is no longer this worker's; not restarting it", name, index)
                continue
            if self._refenced.get(key) == self._placement:
                log.error(
                    "Task %s-%d was fenced again in generation %d of the placement; leaving it FAILED",
                    name,
                    index,
                    self._placement,
                )
                continue
            self._refenced[key] = self._placement
            log.warning(
                "Task %s-%d failed fenced (or with a commit of unknown outcome) while it is this worker's, with the "
                "latest task configs: a zombie's producer init fenced it; restarting it, which fences the zombie",
                name,
                index,
            )
            self.restart_task(name, index, state)
