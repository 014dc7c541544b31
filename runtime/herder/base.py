"""What the standalone and the distributed herder do the same way.

Both herders follow one target-state machine (target_states.py) and differ in where state lives, how a
change is stored and applied (one herder thread over local files; a tick loop over the internal topics) and
how a request reaches the code that changes it. Everything here only needs a connector's stored state
(`_state`), a way to run a step under a named stage (`_staged`) and a way to store and apply a target state
(`_change_target`): the REST views, validation, pause/resume/stop, the offsets endpoints' steps after the
STOPPED check, topic-tracking rules and the health answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..api.connector import SinkConnector, SourceConnector
from ..control import offset_requests
from ..control.errors import BadRequest, Forbidden, NotFound, ServerError
from ..control.restart import RestartPlan
from ..control.stages import StageTracker
from ..plugins import Plugins
from ..storage.base import ConnectorState
from ..storage.states import TargetState
from ..worker_config import WorkerConfig
from . import views
from .topics import ActiveTopics
from .validation import invalid_config_message, plugin_config_keys, validate_connector_config

if TYPE_CHECKING:
    from ..worker.offsets import OffsetsManager
    from ..worker.worker import Worker

log = logging.getLogger(__name__)
T = TypeVar("T")

HEALTH_TIMEOUT_S = 10.0
# How long a request that hands a change to a connector's thread (distributed: to its owner) then waits for the
# change to show, so that a status read right after the answer usually shows it (contract section 9). Best
# effort: a connector whose stop() or start() takes longer holds up only this wait, never the herder, and the
# request succeeds either way.
STATUS_WAIT_S = 5.0
UNHEALTHY = "Worker was unable to handle this request and may be unable to handle other requests."
HEALTHY = "Worker has completed startup and is ready to handle requests."


def patched_config(config: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """PATCH /connectors/{c}/config: the stored config with the patch's keys set, and its null keys removed."""
    merged = dict(config)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


class HerderBase:
    """Shared behaviour; subclasses provide `_state`, `_staged`, `_responsive` and `_change_target`."""

    config: WorkerConfig
    plugins: Plugins
    worker: Worker  # set at construction by each backend
    offsets: OffsetsManager
    topics: ActiveTopics
    stages: StageTracker
    broker_monitor: Any
    ready: bool

    # ---- what each herder provides --------------------------------------------------------------

    def _state(self, name: str, message: str) -> ConnectorState:
        """The stored state of `name`, or NotFound(message)."""
        raise NotImplementedError

    def _listing_entries(self) -> list[tuple[str, ConnectorState]]:
        """Every connector and its stored state, sorted by name, read at once (for a listing)."""
        raise NotImplementedError

    def _status_info(
        self, name: str, state: ConnectorState, overrides: RestartPlan | None = None
    ) -> dict[str, Any] | None:
        """ConnectorStateInfo of `name` from the statuses read so far, or None when it has none yet."""
        raise NotImplementedError

    def _staged(self, fn: Callable[[], T], stage: str) -> T:
        """Run `fn` where this herder runs connector code, under the stage a timeout message names."""
        raise NotImplementedError

    def _wait_ready(self, timeout_s: float) -> None:
        raise NotImplementedError

    def _responsive(self, timeout_s: float) -> bool:
        """Whether the herder's own thread answers within `timeout_s` (the health check's probe)."""
        raise NotImplementedError

    def _more_validation(self, infos: dict[str, Any], config: dict[str, Any]) -> None:
        """Mode-specific checks added to a validation result."""

    # ---- reads ------------------------------------------------------------------------------------

    def connector_info(self, name: str) -> dict[str, Any]:
        return self._info(name, self._state(name, f"Connector {name} not found"))

    def connector_listing(self, status: bool, info: bool) -> dict[str, dict[str, Any]]:
        """`GET /connectors?expand=...`: each connector's status and/or info, from one read of the stored
        states. A connector with no status yet is left out, as the reference does."""
        result: dict[str, dict[str, Any]] = {}
        for name, state in self._listing_entries():
            entry: dict[str, Any] = {}
            if status:
                body = self._status_info(name, state)
                if body is None:
                    continue
                entry["status"] = body
            if info:
                entry["info"] = self._info(name, state)
            result[name] = entry
        return result

    def _info(self, name: str, state: ConnectorState) -> dict[str, Any]:
        return views.connector_info(name, state, self.worker.connector_type(state.config))

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._state(name, f"Connector {name} not found").config)

    def task_infos(self, name: str) -> list[dict[str, Any]]:
        return views.task_infos(name, self._state(name, f"Connector {name} not found"))

    # the standalone reference answers 404 for a connector without tasks, the distributed one `{}`
    _empty_tasks_config_is_missing = True

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        return views.tasks_config(
            name, self._state(name, f"Connector {name} not found"), self._empty_tasks_config_is_missing
        )

    # ---- validation and plugins -------------------------------------------------------------------

    def validate(self, config: dict[str, Any]) -> dict[str, Any]:
        return self._staged(lambda: self._validate(config), "performing multi-property validation for the connector")

    def _validate(self, config: dict[str, Any]) -> dict[str, Any]:
        """Validate the resolved config, but show references, never the secrets they resolve to."""
        resolver = self.worker.resolver
        if not resolver.has_references({k: v for k, v in config.items() if isinstance(v, str)}):
            infos = validate_connector_config(self.plugins, config)
        else:
            resolved = resolver.resolve({k: v for k, v in config.items() if v is not None})
            infos = validate_connector_config(self.plugins, {**config, **resolved})
            for entry in infos["configs"]:
                value = entry["value"]
                if value and value["name"] in config and config[value["name"]] != resolved.get(value["name"]):
                    value["value"] = config[value["name"]]
        self._more_validation(infos, config)
        return infos

    def _require_valid(self, config: dict[str, Any]) -> None:
        infos = self._validate(config)
        if infos["error_count"]:
            raise BadRequest(invalid_config_message(infos))

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        desc = self.plugins.find(plugin)
        if desc is None:
            raise NotFound(f"Unknown plugin {plugin}.")
        return self._staged(
            lambda: plugin_config_keys(desc.cls), "retrieving the configuration definition from the connector"
        )

    # ---- target states (KIP-52, KIP-875): decided in target_states, stored and applied by each herder ----

    def pause_connector(self, name: str) -> None:
        self._change_target(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        self._change_target(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        self._change_target(name, TargetState.STOPPED)

    def _change_target(self, name: str, target: TargetState) -> None:
        """Store `target_states.transitioned(state, target)` for `name` and apply it (404 "Unknown connector")."""
        raise NotImplementedError

    def leader_url(self) -> str | None:
        """Nothing is forwarded in standalone mode."""
        return None

    def settle_forwarded(self, name: str) -> None:
        """After a change of `name` forwarded to the leader: nothing to wait for where nothing is forwarded
        (the distributed herder waits until this worker has read the change)."""

    # ---- offsets (KIP-875) --------------------------------------------------------------------------

    def connector_offsets(self, name: str) -> dict[str, Any]:
        state = self._state(name, f"Connector {name} not found")
        if self._is_sink(state.config):
            return {"offsets": self.offsets.sink_offsets(name, state.config)}
        return {"offsets": self.offsets.source_offsets(name, state.config)}

    def _is_sink(self, config: dict[str, str]) -> bool:
        try:
            return self.worker.is_sink(config)
        except Exception as exc:
            raise ServerError(
                f"Could not determine the type of connector class {config.get('connector.class')}: {exc}"
            ) from exc

    def _alter_stopped(
        self, name: str, state: ConnectorState, entries: list[dict[str, Any]], transactional_id: str | None = None
    ) -> str:
        """Alter the offsets of a connector already checked STOPPED, through its `alter_offsets` hook; a source
        connector's in one transaction under `transactional_id` when given (exactly-once, KIP-875)."""
        hook = self.worker.new_connector_for_hook(state.config)
        config = self._resolved_for_offsets(name, state.config)
        if isinstance(hook, SinkConnector):
            parsed = _bad_request(lambda: offset_requests.parse_sink_offsets(entries))
            return self.offsets.alter_sink(name, config, hook, parsed)
        assert isinstance(hook, SourceConnector)
        parsed_source = _bad_request(lambda: offset_requests.parse_source_offsets(entries))
        return self.offsets.alter_source(name, config, hook, parsed_source, transactional_id=transactional_id)

    def _reset_stopped(self, name: str, state: ConnectorState, transactional_id: str | None = None) -> str:
        hook = self.worker.new_connector_for_hook(state.config)
        config = self._resolved_for_offsets(name, state.config)
        if isinstance(hook, SinkConnector):
            return self.offsets.reset_sink(name, config, hook)
        assert isinstance(hook, SourceConnector)
        return self.offsets.reset_source(name, config, hook, transactional_id=transactional_id)

    def _resolved_for_offsets(self, name: str, config: dict[str, str]) -> dict[str, str]:
        """The config with its config provider references resolved, as the reference hands `alterOffsets`
        (and builds the offsets request's clients from): a connector's credentials are often references."""
        try:
            return self.worker.resolver.resolve(config)
        except Exception as exc:
            raise ServerError(f"Failed to resolve the configuration of connector {name}: {exc}") from exc

    # ---- offsets at create (KIP-995, as apache/kafka#23268) ------------------------------------------

    def _check_initial_offsets(self, config: dict[str, str], entries: list[dict[str, Any]]) -> None:
        """PATCH's checks of a create's `initial_offsets` (its 400s), before anything is written."""
        parse = offset_requests.parse_sink_offsets if self._is_sink(config) else offset_requests.parse_source_offsets
        _bad_request(lambda: parse(entries))

    def _write_initial_offsets(
        self, name: str, config: dict[str, str], entries: list[dict[str, Any]], transactional_id: str | None = None
    ) -> str:
        """Make `entries` the offsets of `name`, about to be created, through PATCH's path (its `alter_offsets`
        hook, its writes; a source connector's in one transaction under `transactional_id` when given, as
        PATCH on an exactly-once worker): offsets outlive a connector, so partitions a deleted namesake left
        are reset in the same alter, and the new connector starts exactly where it was told. The message
        PATCH would give."""
        sink = self._is_sink(config)
        current = self.offsets.sink_offsets(name, config) if sink else self.offsets.source_offsets(name, config)
        stale = [{"partition": entry["partition"], "offset": None} for entry in current]
        state = ConnectorState(config, TargetState.STOPPED, [])
        return self._alter_stopped(name, state, stale + entries, None if sink else transactional_id)

    def _take_back_initial_offsets(self, name: str, config: dict[str, str]) -> None:
        """The create that wrote them failed: reset the offsets again (best effort), as nothing was created."""
        try:
            self._reset_stopped(name, ConnectorState(config, TargetState.STOPPED, []))
        except Exception as exc:  # noqa: BLE001 - the create's own error is what the client must see
            log.error("Could not reset the initial offsets of connector %s after its create failed: %s", name, exc)

    # ---- topics (KIP-558) ---------------------------------------------------------------------------

    def _check_topic_tracking(self, reset: bool = False) -> None:
        if not self.config.get_bool("topic.tracking.enable"):
            raise Forbidden("Topic tracking is disabled.")
        if reset and not self.config.get_bool("topic.tracking.allow.reset"):
            raise Forbidden("Topic tracking reset is disabled.")

    def connector_topics(self, name: str) -> dict[str, Any]:
        self._check_topic_tracking()
        return {name: {"topics": self.topics.topics(name)}}

    def reset_connector_topics(self, name: str) -> None:
        self._check_topic_tracking(reset=True)
        self.topics.reset(name)
        self.worker.forget_seen_topics(name)  # its running tasks report each topic again when they next see it

    # ---- health ---------------------------------------------------------------------------------------

    def health(self) -> tuple[int, dict[str, str]]:
        """The reference's three answers, plus "Kafka unreachable" from the broker monitor."""
        if not self.ready:
            self._wait_ready(HEALTH_TIMEOUT_S)
        if not self.ready:
            return 503, {
                "status": "starting",
                "message": with_summary("Worker is still starting up.", self.stages.summary()),
            }
        if not self._responsive(HEALTH_TIMEOUT_S):
            return 500, {"status": "unhealthy", "message": with_summary(UNHEALTHY, self.stages.summary())}
        kafka_problem = self.broker_monitor.problem() if self.broker_monitor is not None else None
        if kafka_problem:
            return 500, {"status": "unhealthy", "message": f"{UNHEALTHY} {kafka_problem}"}
        return 200, {"status": "healthy", "message": HEALTHY}


def with_summary(message: str, summary: str | None) -> str:
    return f"{message} {summary}" if summary else message


def _bad_request(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except offset_requests.BadRequest as exc:
        raise BadRequest(str(exc)) from None
