"""The distributed herder: the standalone herder's public methods and errors, state from the internal
topics, and routing (leader-only operations raise NotLeader, owner-only restarts NotAssigned).

Writes (REST requests) go straight to the config topic and return once read back; every worker's tick
thread (member.py) then notices the change and reconciles its share of the work.
"""
from __future__ import annotations

import concurrent.futures
import logging
import time
from typing import Any, Callable, TypeVar

from ..api.connector import SinkConnector, SourceConnector
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.kafka_config_store import RestartRequest as StoredRestartRequest
from ..storage.states import INITIAL_STATES, State, TargetState
from ..storage.status_codec import TopicStatus
from ..herder import offset_requests, views
from ..herder.errors import BadRequest, Forbidden, HerderError, NotFound, NotLeader, RebalanceNeeded, RequestTimeout, ServerError
from ..herder.restart import RestartPlan, RestartRequest
from ..herder.validation import invalid_config_message, plugin_config_keys, validate_connector_config
from .assignment import Assignment
from .member import GroupMember, Timing

log = logging.getLogger(__name__)
T = TypeVar("T")

HEALTH_TIMEOUT_S = 10.0
UNHEALTHY = "Worker was unable to handle this request and may be unable to handle other requests."
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


__all__ = ["DistributedHerder", "NotAssigned", "Timing"]


class DistributedHerder(GroupMember):
    """The REST layer's herder in distributed mode: the standalone herder's methods and errors."""

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
        return views.connector_info(name, state, self.worker.connector_type(state.config))

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._state(name, f"Connector {name} not found").config)

    def task_infos(self, name: str) -> list[dict[str, Any]]:
        return views.task_infos(name, self._state(name, f"Connector {name} not found"))

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        return views.tasks_config(name, self._state(name, f"Connector {name} not found"))

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
        return views.connector_state_info(name, status, self.status_store.tasks(name),
                                          self.worker.connector_type(state.config), overrides,
                                          task_count=len(state.task_configs))

    def task_status(self, name: str, index: int) -> dict[str, Any]:
        status = self.status_store.task(name, index)
        if status is None or name not in self.config_store.snapshot().connectors:
            self.config_store.refresh()
            self.status_store.refresh()
            status = self.status_store.task(name, index)
        if status is None or name not in self.config_store.snapshot().connectors:
            raise NotFound(f"No status found for task {name}-{index}")
        return {"id": index, **views.status_body(status)}

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

    def settle_forwarded(self, name: str) -> None:
        """A create, config change, delete or stop of `name` that this worker forwarded has succeeded on
        the leader: read the config topic to its end and wait (as the leader did) until the statuses
        read here show the change, so a read from this worker right after the answer agrees with it."""
        self.config_store.refresh()
        state = self.config_store.snapshot().connectors.get(name)
        if state is None:
            self._await_status(name, lambda connector, _tasks, _state: connector is None)
        elif state.target_state is TargetState.STOPPED:
            self._await_target(name, TargetState.STOPPED)
        else:
            self._await_status(name, lambda connector, _tasks, _state: connector is not None)

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
            return 500, {"status": "unhealthy", "message": _with_summary(UNHEALTHY, self.stages.summary())}
        kafka_problem = self.broker_monitor.problem() if self.broker_monitor is not None else None
        if kafka_problem:
            return 500, {"status": "unhealthy", "message": f"{UNHEALTHY} {kafka_problem}"}
        return 200, {"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}

    # ---- introspection (tests, logs) ------------------------------------------------------------

    def assignment(self) -> Assignment:
        with self._lock:
            return self._assignment


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
