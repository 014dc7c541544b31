"""The standalone herder: one thread owns all connector state and applies requests in order.

REST handlers call the public methods; each mutating call is queued to the herder thread and
awaited with the request timeout, so there is one place where state changes and no lock juggling.
A create or config update waits for the connector's start(), as the reference's does, and its statuses
are written before it is answered. Pauses, resumes, stops and restarts are handed to the connector's own
thread (runtime/worker/worker.py), where a stop() or start() that blocks holds up neither the herder nor
other connectors; the request then waits STATUS_WAIT_S at most for the change to show.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..control import target_states
from ..control.errors import HerderError, NotFound, RequestTimeout, ServerError
from ..control.restart import RestartPlan, RestartRequest
from ..control.stages import StageTracker
from ..daemon_executor import SerialDaemonExecutor
from ..log_levels import LOG_LEVELS, level_number
from ..plugins import Plugins
from ..storage.base import ConfigStore, ConnectorState, InstanceStatus, StatusStore
from ..storage.states import State, TargetState
from ..worker.offsets import OffsetsManager
from ..worker.worker import Worker
from ..worker_config import WorkerConfig
from . import views
from .base import STATUS_WAIT_S, HerderBase, patched_config
from .signatures import RequestSignature
from .task_configs import generate_task_configs, reconfigure_when_started
from .topics import ActiveTopics

log = logging.getLogger(__name__)
T = TypeVar("T")


class StandaloneHerder(HerderBase):
    def __init__(
        self,
        config: WorkerConfig,
        plugins: Plugins,
        worker: Worker,
        config_store: ConfigStore,
        statuses: StatusStore,
        offsets: OffsetsManager,
        topics: ActiveTopics,
        worker_id: str,
        kafka_cluster_id: str | None,
        broker_monitor: Any = None,
    ) -> None:
        """`topics` are the active topics the worker records (its `on_topic`)."""
        self.config = config
        self.plugins = plugins
        self.worker = worker
        self.config_store = config_store
        self.statuses = statuses
        self.offsets = offsets
        self.topics = topics
        self.worker_id = worker_id
        self.kafka_cluster_id = kafka_cluster_id
        self.broker_monitor = broker_monitor  # says when Kafka has been unreachable for a while
        self.stages = StageTracker()
        self.ready = False
        self._ready_event = threading.Event()
        self._lock = threading.RLock()
        self._connectors: dict[str, ConnectorState] = {}
        # connector config each connector's running tasks were generated from
        self._applied_configs: dict[str, dict[str, str]] = {}
        # daemon: a connector stuck in start() keeps the herder thread waiting, never the process's exit
        self._executor = SerialDaemonExecutor("herder")
        self._request_timeout_s = config.get_int("rest.request.timeout.ms") / 1000
        self._stopped = False

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Load stored connectors and queue each to come back in its target state.

        The starts run on the herder thread in order, after this returns, so the REST API answers
        (and /health says "starting") even while a connector's start() takes long."""
        self.config_store.start()
        self.offsets.offset_store.start()
        loaded = self.config_store.load()
        with self._lock:
            self._connectors = loaded
        for name in sorted(loaded):
            self._executor.submit(self._restore_connector, name)

    def _restore_connector(self, name: str) -> None:
        try:
            with self.stages.stage(f"starting connector {name}"):
                self._start_connector_and_tasks(name, use_stored_tasks=True)
        except Exception as exc:
            log.error("Could not restore connector %s: %s", name, exc, exc_info=exc)

    def wait_until_ready(self, timeout_s: float | None = None) -> bool:
        """Block until everything queued before mark_ready() has been applied."""
        return self._ready_event.wait(timeout_s)

    def mark_ready(self) -> None:
        """Ready once everything queued so far (restored connectors, CLI connectors) has been applied."""

        def ready() -> None:
            self.ready = True
            self._ready_event.set()

        self._executor.submit(ready)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.worker.begin_shutdown()  # the herder thread may be waiting for a connector's start()
        try:
            future = self._executor.submit(self.worker.stop_all)
            future.result(timeout=self.worker.graceful_timeout_s * 2 + 5)
        except Exception as exc:  # noqa: BLE001 - shutdown goes on whatever a connector's stop raised
            log.error("Error while stopping connectors: %s", exc)
        self._executor.shutdown()
        self.offsets.offset_store.stop()
        self.config_store.stop()

    # ---- the herder thread ----------------------------------------------------------------------

    def _submit(self, fn: Callable[[], T], stage: str | None = None) -> T:
        def run() -> T:
            if stage is None:
                return fn()
            with self.stages.stage(stage):
                return fn()

        if self._executor.on_thread():
            return run()
        future = self._executor.submit(run)
        try:
            return future.result(timeout=self._request_timeout_s)
        except concurrent.futures.TimeoutError:
            summary = self.stages.summary()
            raise RequestTimeout("Request timed out. " + summary if summary else "Request timed out") from None

    def _request_reconfiguration(self, name: str) -> concurrent.futures.Future | None:
        """Queue a regeneration of the connector's tasks on the herder thread (None once stopping)."""
        if self._stopped:
            return None
        try:
            return self._executor.submit(self._guarded_reconfigure, name)
        except RuntimeError:  # shut down meanwhile
            return None

    def _settle(self, change: concurrent.futures.Future) -> None:
        """Give a change handed to a connector's thread STATUS_WAIT_S at most to show (see STATUS_WAIT_S)."""
        concurrent.futures.wait([change], timeout=STATUS_WAIT_S)

    def _guarded_reconfigure(self, name: str) -> None:
        try:
            self._reconfigure_tasks(name)
        except Exception as exc:  # noqa: BLE001 - the herder thread must not die over a connector's taskConfigs
            log.error("Task reconfiguration of %s failed: %s", name, exc)

    # ---- helpers (herder thread) ----------------------------------------------------------------

    def _state(self, name: str, message: str) -> ConnectorState:
        with self._lock:
            state = self._connectors.get(name)
        if state is None:
            raise NotFound(message)
        return state

    def _persist(self, name: str, state: ConnectorState | None) -> None:
        """Write ahead: every change is stored before it is acted on, so a failed write (a full disk)
        answers an error and leaves both the file and the running connectors as they were."""
        with self.stages.stage(f"writing a config for connector {name} to the config store"):
            try:
                self.config_store.save(name, state)
            except OSError as exc:
                raise ServerError(
                    f"Could not save the configuration of connector {name}: {exc.strerror or exc}; nothing was changed"
                ) from None
        with self._lock:
            if state is None:
                self._connectors.pop(name, None)
            else:
                self._connectors[name] = state

    def _stop_tasks(self, name: str) -> None:
        self.worker.stop_tasks([(name, i) for i in self.worker.task_indices(name)])
        for index in list(self.statuses.tasks(name)):  # also tasks that never got a runner (failed to start)
            self.statuses.remove_task(name, index)

    def _start_tasks(self, name: str, state: ConnectorState, only: tuple[int, ...] | None = None) -> None:
        target = target_states.task_target(state.target_state)
        for index, task_config in enumerate(state.task_configs):
            if only is None or index in only:
                self.worker.start_task(name, index, task_config, state.config, target)

    def _start_connector_and_tasks(self, name: str, use_stored_tasks: bool = False) -> None:
        state = self._state(name, f"Connector {name} not found")
        with self.stages.stage("starting the connector"):
            ok = self.worker.await_connector(
                self.worker.start_connector(name, state.config, state.target_state, self._request_reconfiguration)
            )
        if not target_states.tasks_run(state.target_state):
            return
        if state.target_state is TargetState.PAUSED:
            if use_stored_tasks:
                self._start_tasks(name, state)
            return
        if ok:
            self._reconfigure_tasks(name)

    def _reconfigure_tasks(self, name: str) -> None:
        """Ask the connector for task configs and replace the tasks when those changed, when the
        connector config changed since the tasks were made (the reference's rule), or when none run."""
        with self._lock:
            state = self._connectors.get(name)
        new_configs = None if state is None else generate_task_configs(self.worker, name, state, self.stages)
        if state is None or new_configs is None:
            return
        changed = new_configs != state.task_configs or self._applied_configs.get(name) != state.config
        if not changed and len(self.worker.task_indices(name)) == len(new_configs):
            return
        updated = ConnectorState(state.config, state.target_state, new_configs)
        if new_configs != state.task_configs:
            self._persist(name, updated)
        self._stop_tasks(name)
        self._applied_configs[name] = dict(state.config)
        self._start_tasks(name, updated)

    # ---- reads (any thread) ---------------------------------------------------------------------

    def connector_names(self) -> list[str]:
        with self._lock:
            return sorted(self._connectors)

    def connector_status(self, name: str, overrides: RestartPlan | None = None) -> dict[str, Any]:
        with self._lock:
            state = self._connectors.get(name)
        body = self._status_info(name, state, overrides) if state is not None else None
        if body is None:
            raise NotFound(f"No status found for connector {name}")
        return body

    def _listing_entries(self) -> list[tuple[str, ConnectorState]]:
        with self._lock:
            return sorted(self._connectors.items())

    def _status_info(
        self, name: str, state: ConnectorState, overrides: RestartPlan | None = None
    ) -> dict[str, Any] | None:
        status = self.statuses.connector(name)
        if status is None:
            return None
        return views.connector_state_info(
            name, status, self.statuses.tasks(name), self.worker.connector_type(state.config), overrides
        )

    def task_status(self, name: str, index: int) -> dict[str, Any]:
        status = self.statuses.task(name, index)
        with self._lock:
            known = name in self._connectors
        if status is None or not known:
            raise NotFound(f"No status found for task {name}-{index}")
        return {"id": index, **views.status_body(status)}

    def assigned_counts(self) -> tuple[int, int] | None:
        return None  # no group, no coordinator metrics (as the reference's standalone worker)

    def owns(self, name: str, task: int | None) -> bool:
        """One worker runs everything there is."""
        with self._lock:
            state = self._connectors.get(name)
        return state is not None and (task is None or task < len(state.task_configs))

    def is_leader(self) -> bool:
        return True  # the only worker

    # ---- where connector code runs (HerderBase) --------------------------------------------------

    def _staged(self, fn: Callable[[], T], stage: str) -> T:
        return self._submit(fn, stage)

    def _wait_ready(self, timeout_s: float) -> None:
        self._ready_event.wait(timeout_s)

    def _responsive(self, timeout_s: float) -> bool:
        try:
            self._executor.submit(lambda: None).result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            return False
        return True

    # ---- config changes -------------------------------------------------------------------------

    def put_connector_config(
        self,
        name: str,
        config: dict[str, Any],
        allow_replace: bool,
        initial_state: str | None = None,
        initial_offsets: list[dict[str, Any]] | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        target = target_states.initial_target(initial_state)

        def apply() -> tuple[bool, dict[str, Any]]:
            with self.stages.stage("performing multi-property validation for the connector"):
                self._require_valid(config)
            clean = {k: str(v) for k, v in config.items()}
            with self._lock:
                existing = self._connectors.get(name)
            if existing is not None and not allow_replace:
                raise HerderError(f"Connector {name} already exists", 409)
            offsets_status = None
            if existing is None:
                offsets_status = self._create(name, target_states.created(clean, target), initial_offsets)
            else:
                self._persist(name, target_states.reconfigured(existing, clean))
                # only the connector restarts; its tasks are replaced if the new config changes them
                with self.stages.stage("stopping the connector"):
                    self.worker.stop_connector(name)
            self._start_connector_and_tasks(name)
            info = self._info(name, self._state(name, f"Connector {name} not found"))
            return existing is None, info if offsets_status is None else {**info, "offsets_status": offsets_status}

        return self._submit(apply, f"writing a config for connector {name}")

    def _create(self, name: str, state: ConnectorState, initial_offsets: list[dict[str, Any]] | None) -> str | None:
        """Store a new connector, its initial offsets first (KIP-995; none of its tasks can start before it is
        stored): the offsets' message, or None without offsets."""
        if initial_offsets is None:
            self._persist(name, state)
            return None
        with self.stages.stage(f"setting initial offsets for connector {name}"):
            self._check_initial_offsets(state.config, initial_offsets)
            message = self._write_initial_offsets(name, state.config, initial_offsets)
        try:
            self._persist(name, state)
        except Exception:
            self._take_back_initial_offsets(name, state.config)
            raise
        return message

    def patch_connector_config(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        def apply() -> dict[str, Any]:
            state = self._state(name, f"Connector {name} not found")
            return self.put_connector_config(name, patched_config(state.config, patch), allow_replace=True)[1]

        return self._submit(apply, f"writing a config for connector {name}")

    def delete_connector(self, name: str) -> None:
        def apply() -> None:
            self._state(name, f"Connector {name} not found")
            self._persist(name, None)
            self._stop_tasks(name)
            with self.stages.stage("stopping the connector"):
                self.worker.stop_connector(name)
            self._applied_configs.pop(name, None)
            self.statuses.remove_connector(name)
            # active topics outlive the connector, as in the reference (until PUT .../topics/reset)

        self._submit(apply, f"deleting connector {name}")

    # ---- target states --------------------------------------------------------------------------

    def _change_target(self, name: str, target: TargetState) -> None:
        def apply() -> concurrent.futures.Future:
            state = self._state(name, f"Unknown connector {name}")
            self._persist(name, target_states.transitioned(state, target))
            if target_states.tasks_run(target):
                self.worker.transition_tasks(name, target)
            else:
                self._stop_tasks(name)
            # the connector's own thread moves it (creating it again if that failed before)
            moved = self.worker.transition_connector(name, target, state.config, self._request_reconfiguration)
            return reconfigure_when_started(name, target, moved, self._request_reconfiguration)

        self._settle(self._submit(apply, f"changing the target state of connector {name} to {target.value}"))

    # ---- restarts -------------------------------------------------------------------------------

    def restart_connector(self, name: str) -> None:
        def apply() -> concurrent.futures.Future:
            state = self._state(name, f"Unknown connector: {name}")
            started = self.worker.restart_connector(
                name, state.config, state.target_state, self._request_reconfiguration
            )
            return reconfigure_when_started(name, state.target_state, started, self._request_reconfiguration)

        self._settle(self._submit(apply, f"restarting connector {name}"))

    def restart_connector_and_tasks(self, request: RestartRequest) -> dict[str, Any]:
        name = request.connector

        def apply() -> tuple[dict[str, Any], concurrent.futures.Future | None]:
            state = self._state(name, f"Unknown connector: {name}")
            connector_status = self.statuses.connector(name)
            if connector_status is None:
                raise NotFound(f"Status for connector {name} not found")
            task_states = {i: s.state for i, s in self.statuses.tasks(name).items()}
            plan = RestartPlan.build(request, connector_status.state, task_states)
            body = self.connector_status(name, overrides=plan)
            started = (
                self.worker.restart_connector(name, state.config, state.target_state, self._request_reconfiguration)
                if plan.connector
                else None
            )
            for index in plan.tasks:
                self.statuses.put_task(name, index, InstanceStatus(State.RESTARTING, self.worker_id))
            self.worker.stop_tasks([(name, i) for i in plan.tasks])
            if plan.tasks and target_states.tasks_run(state.target_state):
                self._start_tasks(name, self._state(name, f"Unknown connector: {name}"), only=plan.tasks)
            return body, started

        body, started = self._submit(apply, f"restarting connector {name}")
        if started is not None:
            self._settle(started)
        return body

    def restart_task(self, name: str, index: int) -> None:
        def apply() -> None:
            state = self._state(name, f"Unknown connector: {name}")
            if not 0 <= index < len(state.task_configs):
                raise NotFound(f"Unknown task: {name}-{index}")
            self.worker.stop_tasks([(name, index)])
            target = target_states.task_target(state.target_state)
            if not self.worker.start_task(name, index, state.task_configs[index], state.config, target):
                raise ServerError(f"Failed to start task: {name}-{index}")

        self._submit(apply, f"restarting task {name}-{index}")

    # ---- offsets --------------------------------------------------------------------------------

    def _check_stopped(self, name: str) -> ConnectorState:
        state = self._state(name, f"Connector {name} not found")
        target_states.require_stopped(name, state)
        return state

    def alter_offsets(self, name: str, entries: list[dict[str, Any]]) -> str:
        return self._submit(
            lambda: self._alter_stopped(name, self._check_stopped(name), entries),
            f"altering offsets of connector {name}",
        )

    def reset_offsets(self, name: str) -> str:
        return self._submit(
            lambda: self._reset_stopped(name, self._check_stopped(name)), f"resetting offsets of connector {name}"
        )

    def set_cluster_log_level(self, namespace: str, level: str) -> None:
        number = level_number(level)
        assert number is not None, level  # the REST layer has checked it
        LOG_LEVELS.set(namespace, number)  # one worker: the cluster is this worker

    # ---- internal endpoints: the reference's standalone herder refuses both (500) ----------------

    def put_task_configs(self, name: str, configs: list[dict[str, Any]], signature: RequestSignature | None) -> None:
        raise ServerError("Kafka Connect in standalone mode does not support externally setting task configurations.")

    def fence_zombies(self, name: str, signature: RequestSignature | None) -> None:
        raise ServerError("Kafka Connect in standalone mode does not support exactly-once source connectors.")
