"""The distributed herder: the standalone herder's public methods and errors, state from the internal
topics, and routing (leader-only operations raise NotLeader, owner-only restarts NotAssigned).

It is made of the group member (runtime/distributed/member.py: membership, the leader's assignor), the
work this worker runs (local_work.py) and the tick thread that owns that work (tick.py). Writes (REST
requests) go straight to the config topic and return once read back; every worker's tick thread then
notices the change and reconciles its share of the work.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..control import target_states
from ..control.errors import BadRequest, HerderError, NotFound, NotLeader, RebalanceNeeded, RequestTimeout, ServerError
from ..control.restart import RestartPlan, RestartRequest
from ..control.stages import StageTracker
from ..distributed.assignment import Assignment
from ..distributed.member import GroupMember
from ..distributed.statuses import GenerationStatuses
from ..plugins import Plugins
from ..storage.base import ConnectorState, InstanceStatus
from ..storage.kafka_config_store import KafkaConfigStore, PrivilegedWriteError
from ..storage.kafka_config_store import RestartRequest as StoredRestartRequest
from ..storage.kafka_status_store import KafkaStatusStore
from ..storage.states import TargetState
from ..worker.offsets import OffsetsManager
from ..worker.worker import Worker
from ..worker_config import WorkerConfig
from . import views
from .base import STATUS_WAIT_S, HerderBase, patched_config
from .fencing import LeaderRounds, ZombieFencing, connector_transactional_id, failed_round_statuses
from .local_work import LocalWork
from .signatures import RequestSignature, check_signature
from .tick import TickThread
from .topics import ActiveTopics
from .validation import check_source_exactly_once

log = logging.getLogger(__name__)
T = TypeVar("T")

SETTLE_WAIT_S = 10.0  # how long offset requests wait for a pending rebalance before answering 409
POLL_S = 0.01  # how often those waits look again: in-memory checks, cheap, and each wait adds to a request
# inter.worker.verification.algorithms' default (this runtime does not make it configurable)
VERIFICATION_ALGORITHMS = ["HmacSHA256"]


class NotAssigned(NotLeader):
    """The operation must run on the worker that owns the connector or task: the REST layer forwards it."""

    def __init__(self, owner_url: str | None, what: str) -> None:
        super().__init__(owner_url)
        if owner_url is not None:
            self.message = f"Cannot restart {what} since it is not assigned to this member; it runs on {owner_url}"
            self.args = (self.message,)


__all__ = ["DistributedHerder", "NotAssigned"]


class DistributedHerder(HerderBase):
    """The REST layer's herder in distributed mode: the standalone herder's methods and errors, over the
    group member, the work this worker runs and the tick thread that owns it."""

    _empty_tasks_config_is_missing = False

    def __init__(
        self,
        config: WorkerConfig,
        plugins: Plugins,
        worker: Worker,
        member: GroupMember,
        config_store: KafkaConfigStore,
        status_store: KafkaStatusStore,
        statuses: GenerationStatuses,
        offsets: OffsetsManager,
        topics: ActiveTopics,
        kafka_cluster_id: str | None,
        wakeup: threading.Event,
        broker_monitor: Any = None,
    ) -> None:
        """`statuses` is the status store stamping the member's generation, which the worker writes through;
        `topics` the active topics the worker records; `wakeup` the tick thread's, which `member` sets."""
        self.config = config
        self.plugins = plugins
        self.worker = worker
        self.member = member
        self.config_store = config_store
        self.status_store = status_store
        self.statuses = statuses
        self.offsets = offsets
        self.topics = topics
        self.worker_id = member.worker_id
        self.url = member.url
        self.kafka_cluster_id = kafka_cluster_id
        self.broker_monitor = broker_monitor  # says when Kafka has been unreachable for a while (for /health)
        self.stages = StageTracker()  # one tracker: a timeout names the tick thread's stage too
        self._request_timeout_s = config.get_int("rest.request.timeout.ms") / 1000
        # KIP-618: the leader fences zombie source tasks; with `enabled` a new generation of a source
        # connector's tasks starts only once it has (with `preparing` tasks still deliver at least once)
        self.exactly_once = config.exactly_once_source_enabled()
        self.fencing = ZombieFencing(config, member.group_id, config_store, self.stages, self._is_source)
        self.rounds = (
            LeaderRounds(self.fencing, wakeup.set, on_failed=self._fencing_failed)
            if config.transactional_leader_enabled()
            else None
        )
        self.work = LocalWork(
            worker,
            config_store,
            statuses,
            topics,
            self.worker_id,
            self.stages,
            member.report_held,
            wakeup.set,
            member.is_leader,
            self._owns,
            exactly_once_group=member.group_id if self.exactly_once else None,
            is_source=self._is_source,
        )
        config_store.set_update_listener(self.work)
        self.tick = TickThread(
            member,
            self.work,
            config_store,
            self.stages,
            wakeup,
            self._request_timeout_s,
            leader_step=self._schedule_fencing if self.rounds is not None else None,
        )
        self.ready = False
        self._ready_event = threading.Event()
        self._request_lock = threading.RLock()  # one leader-side write at a time (exists checks, then writes)

    # ---- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Replay the internal topics and join the group (returns once the first assignment is applied)."""
        self._start_stores()
        self.member.start()
        self.tick.start()
        self.member.wait_joined(self.tick.stopping)

    def _is_source(self, config: dict[str, str]) -> bool:
        return self.worker.connector_type(config) == "source"

    def _owns(self, name: str, index: int) -> bool:
        """Task `name`-`index` is this worker's in the generation it holds, and it is not fenced."""
        return self.member.assignment().tasks.get((name, index)) == self.worker_id and not self.member.fenced()

    def _schedule_fencing(self) -> None:
        assert self.rounds is not None
        self.rounds.schedule(self.config_store.snapshot())

    def _fencing_failed(self, name: str, error: BaseException) -> None:
        """A round for `name` failed (the leader, a rounds thread): its tasks waiting for it show FAILED
        (fencing.failed_round_statuses), as the reference's tasks fail their preflight round."""
        if not (self.exactly_once and name in self.config_store.snapshot().pending_fencing):
            return  # with `preparing` no task waits for a round
        for index, status in failed_round_statuses(name, error, self.member.assignment().tasks, self.statuses.task):
            self.statuses.put_task_safe(name, index, status)

    def _start_stores(self) -> None:
        """Replay the three internal topics side by side: each start is mostly waiting on the broker."""
        starts = [self.status_store.start, self.offsets.offset_store.start, self.config_store.start]
        with concurrent.futures.ThreadPoolExecutor(len(starts), thread_name_prefix="store-start") as pool:
            futures = [pool.submit(start) for start in starts]
        for future in futures:
            future.result()  # the first failure, as a sequential start would have raised it

    def mark_ready(self) -> None:
        self.ready = True
        self._ready_event.set()

    def stop(self) -> None:
        if self.tick.stopping.is_set():
            return
        self.worker.begin_shutdown()  # a tick waiting for a connector's start() lets the tick thread stop
        self.tick.stop(self.member.timing.session_timeout_s + 30)
        if self.rounds is not None:
            self.rounds.close()
        try:
            self.worker.stop_all()
        except Exception as exc:  # noqa: BLE001 - shutdown goes on whatever a connector's stop raised
            log.error("Error while stopping connectors: %s", exc)
        self.member.stop()  # leaves the group once everything is stopped
        for store in (self.config_store, self.offsets.offset_store, self.status_store):
            try:
                store.stop()
            except Exception as exc:  # noqa: BLE001 - shutdown goes on: each store is stopped
                log.error("Error while stopping a store: %s", exc)

    # ---- routing helpers ------------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self.member.is_leader()

    def leader_url(self) -> str | None:
        return self.member.leader_url()

    def _require_leader(self) -> None:
        if self.member.is_leader():
            return
        leader = self.member.leader_url()
        # never forward to ourselves: while we rejoin as the leader, the request waits for the rebalance
        raise NotLeader(None if leader is None or leader == self.url else leader)

    def _request(self) -> Any:
        herder = self

        class _Guard:
            def __enter__(self) -> None:
                if not herder._request_lock.acquire(timeout=herder._request_timeout_s):
                    summary = herder.stages.summary()
                    raise RequestTimeout("Request timed out. " + summary if summary else "Request timed out")

            def __exit__(self, kind: object, error: object, trace: object) -> None:
                herder._request_lock.release()
                if isinstance(error, PrivilegedWriteError):  # fenced out by a newer leader: the client retries
                    raise ServerError(
                        "Failed to write to config topic; this may be due to a transient error and the request can "
                        "be safely retried"
                    ) from error

        return _Guard()

    def _fresh_state(self, name: str, message: str) -> ConnectorState:
        with self.stages.stage("reading to the end of the config topic"):
            self.config_store.refresh()
        return self._state(name, message)

    def _await_status(
        self, name: str, settled: Callable[[InstanceStatus | None, list[InstanceStatus], ConnectorState | None], bool]
    ) -> None:
        """Wait (STATUS_WAIT_S at most) until the statuses of `name` satisfy `settled`(connector status,
        statuses of its current tasks, its stored state)."""
        deadline = time.monotonic() + STATUS_WAIT_S
        while time.monotonic() < deadline and not self.tick.stopping.is_set():
            state = self.config_store.snapshot().connectors.get(name)
            count = len(state.task_configs) if state is not None else 0
            tasks = [s for i, s in self.status_store.tasks(name).items() if i < count]
            if settled(self.status_store.connector(name), tasks, state):
                return
            time.sleep(POLL_S)

    def _await_target(self, name: str, target: TargetState) -> None:
        def settled(
            connector: InstanceStatus | None, tasks: list[InstanceStatus], state: ConnectorState | None
        ) -> bool:
            if state is None or connector is None:
                return state is None
            return target_states.target_reached(
                target, connector, tasks, len(state.task_configs), bool(self.status_store.tasks(name))
            )

        self._await_status(name, settled)

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
        return _visible(snapshot, name)

    def connector_names(self) -> list[str]:
        return sorted(self.config_store.snapshot().connectors)

    def connector_status(self, name: str, overrides: RestartPlan | None = None) -> dict[str, Any]:
        state = self.config_store.snapshot().connectors.get(name)
        body = self._status_info(name, state, overrides) if state is not None else None
        if body is None:  # maybe written a moment ago on another worker
            self.config_store.refresh()
            self.status_store.refresh()
            state = self.config_store.snapshot().connectors.get(name)
            body = self._status_info(name, state, overrides) if state is not None else None
        if body is None:
            raise NotFound(f"No status found for connector {name}")
        return body

    def _listing_entries(self) -> list[tuple[str, ConnectorState]]:
        # one snapshot, and no read to the end of a topic for a connector without a status yet
        snapshot = self.config_store.snapshot()
        return [(name, _visible(snapshot, name)) for name in sorted(snapshot.connectors)]

    def _status_info(
        self, name: str, state: ConnectorState, overrides: RestartPlan | None = None
    ) -> dict[str, Any] | None:
        status = self.status_store.connector(name)
        if status is None:
            return None
        return views.connector_state_info(
            name,
            status,
            self.status_store.tasks(name),
            self.worker.connector_type(state.config),
            overrides,
            task_count=len(state.task_configs),
        )

    def task_status(self, name: str, index: int) -> dict[str, Any]:
        status = self.status_store.task(name, index)
        if status is None or name not in self.config_store.snapshot().connectors:
            self.config_store.refresh()
            self.status_store.refresh()
            status = self.status_store.task(name, index)
        if status is None or name not in self.config_store.snapshot().connectors:
            raise NotFound(f"No status found for task {name}-{index}")
        return {"id": index, **views.status_body(status)}

    # ---- where connector code runs (HerderBase) --------------------------------------------------

    def _staged(self, fn: Callable[[], T], stage: str) -> T:
        with self.stages.stage(stage):
            return fn()

    def _more_validation(self, infos: dict[str, Any], config: dict[str, Any]) -> None:
        try:
            sink = self.worker.is_sink({k: str(v) for k, v in config.items() if v is not None})
        except Exception:  # noqa: BLE001 - the class problem is already reported
            sink = False
        if sink:
            _check_sink_group(infos, config, self.member.group_id)
        else:  # KIP-618's preflight checks, on the config the connector would be given
            check_source_exactly_once(
                self.plugins, infos, self._resolved(config), self.config.exactly_once_source_enabled()
            )

    def _resolved(self, config: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.worker.resolver.resolve({k: str(v) for k, v in config.items() if v is not None})
        except Exception:  # noqa: BLE001 - an unresolvable reference is already reported by the validation
            return config

    def _wait_ready(self, timeout_s: float) -> None:
        self._ready_event.wait(timeout_s)

    def _responsive(self, timeout_s: float) -> bool:
        return self.tick.responsive(timeout_s)

    # ---- config changes (leader) ----------------------------------------------------------------

    def put_connector_config(
        self,
        name: str,
        config: dict[str, Any],
        allow_replace: bool,
        initial_state: str | None = None,
        initial_offsets: list[dict[str, Any]] | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        target = target_states.initial_target(initial_state)
        self._require_leader()
        with self.stages.stage("performing multi-property validation for the connector"):
            self._require_valid(config)
        clean = {k: str(v) for k, v in config.items()}
        offsets_status = None
        with self._request():
            self._require_leader()
            self.config_store.refresh()
            existing = self.config_store.snapshot().connectors.get(name)
            if existing is not None and not allow_replace:
                raise HerderError(f"Connector {name} already exists", 409)
            if existing is None and initial_offsets is not None:
                # KIP-995: in place before the config record exists, so before any worker can start a task
                offsets_status = self._set_initial_offsets(name, clean, initial_offsets)
            try:
                with self.stages.stage(f"writing a config for connector {name} to the config topic"):
                    if existing is not None:
                        self.config_store.put_connector_config(name, clean)
                    else:
                        initial = target_states.created(clean, target).target_state
                        # a connector created STARTED needs no target-state record, as the reference writes it
                        self.config_store.put_connector_config(
                            name, clean, None if initial is TargetState.STARTED else initial
                        )
            except Exception:
                if offsets_status is not None:
                    self._take_back_initial_offsets(name, clean)
                raise
            self.tick.wake()
            info = self._info(name, self._state(name, f"Connector {name} not found"))
        if existing is None:
            self._await_status(name, lambda connector, _tasks, _state: connector is not None)
        return existing is None, info if offsets_status is None else {**info, "offsets_status": offsets_status}

    def _set_initial_offsets(self, name: str, config: dict[str, str], entries: list[dict[str, Any]]) -> str:
        """Check and write a create's initial offsets (leader, request lock held), once no task of a deleted
        namesake still runs (its commits would overwrite them): 409, retriable, when some still do. On an
        exactly-once worker a source connector's are written in a transaction under its transactional id, as
        PATCH writes them (KIP-875); no task generation exists yet, so there is nothing to fence (a delete
        drops the connector's task count record, as the reference's config store does)."""
        with self.stages.stage(f"setting initial offsets for connector {name}"):
            self._check_initial_offsets(config, entries)
            self._await_settled(name)
            transactional_id = (
                connector_transactional_id(self.member.group_id, name)
                if self.exactly_once and self._is_source(config)
                else None
            )
            return self._write_initial_offsets(name, config, entries, transactional_id)

    def _await_settled(self, name: str) -> None:
        """Wait (SETTLE_WAIT_S at most) until no task of `name` is assigned or reports a status; 409 after."""
        deadline = time.monotonic() + SETTLE_WAIT_S
        while self._rebalance_pending(name) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        if self._rebalance_pending(name):
            raise RebalanceNeeded()

    def patch_connector_config(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        self._require_leader()
        with self._request():
            state = self._fresh_state(name, f"Connector {name} not found")
            return self.put_connector_config(name, patched_config(state.config, patch), allow_replace=True)[1]

    def delete_connector(self, name: str) -> None:
        self._require_leader()
        with self._request():
            self._fresh_state(name, f"Connector {name} not found")
            with self.stages.stage(f"removing the config for connector {name} from the config topic"):
                self.config_store.remove_connector_config(name)
        self.tick.wake()
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

    def _change_target(self, name: str, target: TargetState) -> None:
        if target_states.clears_tasks(target):  # a stop writes task configs: the leader's job
            self._fresh_state(name, f"Unknown connector {name}")  # 404 before leadership, as the reference
            self._require_leader()
            with self._request():
                self._write_transition(name, target)
        else:
            self._write_transition(name, target)  # any worker may write a pause or a resume
        self.tick.wake()
        self._await_target(name, target)

    def _write_transition(self, name: str, target: TargetState) -> None:
        state = target_states.transitioned(self._fresh_state(name, f"Unknown connector {name}"), target)
        with self.stages.stage(f"writing the target state of connector {name} to the config topic"):
            if target_states.clears_tasks(target):
                self.config_store.put_task_configs(name, state.task_configs)  # KIP-875: empty task set first
            self.config_store.put_target_state(name, state.target_state)

    # ---- restarts -------------------------------------------------------------------------------

    def restart_connector(self, name: str) -> None:
        state = self._fresh_state(name, f"Unknown connector: {name}")
        owner = self.member.assignment().connectors.get(name)
        if owner != self.worker_id:
            if self.member.is_leader():
                raise NotAssigned(self.member.url_of(owner), f"connector {name}")
            self._require_leader()

        def apply() -> concurrent.futures.Future:
            if not self.work.runs_connector(name):
                raise RebalanceNeeded()
            return self.work.restart_connector(name, state)

        started = self.tick.call(apply, f"restarting connector {name}")
        concurrent.futures.wait([started], timeout=STATUS_WAIT_S)  # see STATUS_WAIT_S

    def restart_connector_and_tasks(self, request: RestartRequest) -> dict[str, Any]:
        name = request.connector
        self._require_leader()
        with self._request():
            self._fresh_state(name, f"Unknown connector: {name}")
            # the plan (which instances restart) is read from the statuses: first read what other workers
            # wrote up to now, so it covers every task whose status any worker could already show
            with self.stages.stage("reading to the end of the status topic"):
                self.status_store.refresh()
            connector_status = self.status_store.connector(name)
            if connector_status is None:
                raise NotFound(f"Status for connector {name} not found")
            task_states = {i: s.state for i, s in self.status_store.tasks(name).items()}
            plan = RestartPlan.build(request, connector_status.state, task_states)
            body = self.connector_status(name, overrides=plan)
            with self.stages.stage(f"writing a restart request for connector {name} to the config topic"):
                self.config_store.put_restart_request(
                    StoredRestartRequest(name, request.only_failed, request.include_tasks)
                )
            return body

    def restart_task(self, name: str, index: int) -> None:
        state = self._fresh_state(name, f"Unknown connector: {name}")
        if not 0 <= index < len(state.task_configs):
            raise NotFound(f"Unknown task: {name}-{index}")
        owner = self.member.assignment().tasks.get((name, index))
        if owner != self.worker_id:
            if self.member.is_leader():
                raise NotAssigned(self.member.url_of(owner), f"task {name}-{index}")
            self._require_leader()

        def apply() -> None:
            current = self._state(name, f"Unknown connector: {name}")
            # it runs here, or is assigned here (about to start)
            if (
                not self.work.runs_task(name, index)
                and self.member.assignment().tasks.get((name, index)) != self.worker_id
            ):
                raise RebalanceNeeded()
            if index >= len(current.task_configs):
                raise NotFound(f"Unknown task: {name}-{index}")
            if not self.work.restart_task(name, index, current):
                raise ServerError(f"Failed to start task: {name}-{index}")

        self.tick.call(apply, f"restarting task {name}-{index}")

    # ---- offsets --------------------------------------------------------------------------------

    def _offsets_precheck(self, name: str) -> ConnectorState:
        self._require_leader()
        state = self._fresh_state(name, f"Connector {name} not found")
        target_states.require_stopped(name, state)
        # stopped, but its tasks may still be assigned or stopping: after a stop that just returned, give
        # the group a moment to settle before answering 409 (retriable)
        self._await_settled(name)
        return state

    def _fenced_precheck(self, name: str) -> tuple[ConnectorState, str | None]:
        """The offsets checks, and for a source connector on an exactly-once worker a round of zombie fencing
        first (its earlier tasks can then no longer commit), then the checks again, as the reference: the
        state, and the transactional id the offsets are then written under (KIP-875)."""
        state = self._offsets_precheck(name)
        if not (self.exactly_once and self._is_source(state.config)):
            return state, None
        try:
            self.fencing.run(name)
        except Exception as exc:
            log.error("Failed to perform zombie fencing for source connector prior to modifying offsets: %s", exc)
            raise ServerError(
                "Failed to perform zombie fencing for source connector prior to modifying offsets"
            ) from exc
        return self._offsets_precheck(name), connector_transactional_id(self.member.group_id, name)

    def alter_offsets(self, name: str, entries: list[dict[str, Any]]) -> str:
        with self._request():
            state, transactional_id = self._fenced_precheck(name)
            with self.stages.stage(f"altering offsets of connector {name}"):
                return self._alter_stopped(name, state, entries, transactional_id)

    def reset_offsets(self, name: str) -> str:
        with self._request():
            state, transactional_id = self._fenced_precheck(name)
            with self.stages.stage(f"resetting offsets of connector {name}"):
                return self._reset_stopped(name, state, transactional_id)

    # ---- cluster log levels (KIP-976) -------------------------------------------------------------

    def set_cluster_log_level(self, namespace: str, level: str) -> None:
        # every worker, this one included, applies it when it reads the record (LocalWork.on_logger_level)
        self.config_store.put_logger_level(namespace, level)

    def _rebalance_pending(self, name: str) -> bool:
        """A rebalance is under way, or tasks of `name` are still assigned or still report a status (their
        owners have not stopped them yet)."""
        return self.member.rebalance_pending(name) or bool(self.status_store.tasks(name))

    # ---- introspection (tests, logs) ------------------------------------------------------------

    def assignment(self) -> Assignment:
        return self.member.assignment()

    def owns(self, name: str, task: int | None) -> bool:
        """Whether the current assignment gives this worker the connector (task None) or the task."""
        assignment = self.member.assignment()
        owner = assignment.connectors.get(name) if task is None else assignment.tasks.get((name, task))
        return owner == self.worker_id

    def assigned_counts(self) -> tuple[int, int] | None:
        assignment = self.member.assignment()
        return len(assignment.connectors_of(self.worker_id)), len(assignment.tasks_of(self.worker_id))

    # ---- internal endpoints (InternalClusterResource) -------------------------------------------

    def _check_request_signature(self, signature: RequestSignature | None) -> None:
        """KIP-507: checked on the receiving worker, before routing, only while the group runs the sessioned
        protocol (this worker offers "compatible" first, so normally it does not: the reference skips the
        check then too)."""
        if self.member.group.protocol() != "sessioned":
            return
        check_signature(signature, self.config_store.snapshot().session_key, VERIFICATION_ALGORITHMS)

    def put_task_configs(self, name: str, configs: list[dict[str, Any]], signature: RequestSignature | None) -> None:
        """`POST /connectors/{c}/tasks`: the leader writes these task configs for the connector as given."""
        self._check_request_signature(signature)
        self._require_leader()
        with self._request():
            self._require_leader()
            state = self._fresh_state(name, f"Connector {name} not found")
            target_states.require_task_configs_allowed(name, state, configs)
            with self.stages.stage(f"writing {len(configs)} task configs for connector {name} to the config topic"):
                self.config_store.put_task_configs(name, configs)
        self.tick.wake()

    def fence_zombies(self, name: str, signature: RequestSignature | None) -> None:
        """`PUT /connectors/{c}/fence` (KIP-618), whatever exactly.once.source.support says, as the reference:
        a round of zombie fencing (fencing.py) when the connector's task configs are pending fencing."""
        self._check_request_signature(signature)
        self._require_leader()
        state = self._fresh_state(name, f"Connector {name} not found")
        if not self._is_source(state.config):
            raise BadRequest(f"Connector {name} is not a source connector")
        try:
            self.fencing.run(name)
        except PrivilegedWriteError as exc:
            raise ServerError(
                "Failed to write to config topic; this may be due to a transient error and the request can be "
                "safely retried"
            ) from exc


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
        infos["configs"].append(
            {
                "definition": None,
                "value": {"name": key, "value": value, "recommended_values": [], "errors": [message], "visible": True},
            }
        )
    infos["error_count"] += 1


def _visible(snapshot: Any, name: str) -> ConnectorState:
    """The stored state of `name` as requests see it: a connector whose task configs are inconsistent
    has no tasks."""
    state = snapshot.connectors[name]
    if name in snapshot.inconsistent:
        return ConnectorState(state.config, state.target_state, [])
    return state
