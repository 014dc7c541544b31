"""The worker: runs the connector instances and task threads the herder asks for.

A connector's start(), stop() and target-state changes run on the connector's own daemon thread, in the
order they were asked for (as the reference's WorkerConnector thread). Each returns a future: the herders
continue from its callbacks and never wait for it on their own threads (a standalone create waits for its
start, as the reference's does). A stop voids what was asked for that connector before it:
a start not yet under way never creates its instance, and an instance stopped while it starts, or while a
pause runs its stop(), reports no status any more (the status is then its stopper's to write).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..api.connector import Connector, ConnectorContext, SinkConnector, SourceConnectorContext
from ..api.errors import ConnectError
from ..api.task import OffsetStorageReader
from ..config_providers import ConfigResolver
from ..daemon_executor import KeyedDaemonExecutor
from ..log_context import connector_context
from ..plugins import Plugins
from ..storage.base import InstanceStatus, OffsetStore, StatusStore
from ..storage.connector_offset_store import ConnectorOffsetStore
from ..storage.states import State, TargetState
from ..worker_config import WorkerConfig
from .counters import RebalanceCounters, WorkerCounters
from .exactly_once import ExactlyOnceStart
from .offsets import SourceOffsetStores
from .source_runner import StoreOffsetReader
from .task_builder import TaskBuilder
from .task_processes import RemoteTaskRunner, TaskProcessPool
from .task_runner import TaskRunner, format_trace

log = logging.getLogger(__name__)


def run_bounded(fn: Callable[[], Any], timeout_s: float, what: str) -> bool:
    """Run `fn` in a helper thread and wait at most `timeout_s`; True if it finished without raising."""
    outcome: dict[str, BaseException | None] = {}

    def target() -> None:
        try:
            fn()
            outcome["error"] = None
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, whatever it is
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=what, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        log.error("%s did not finish within %.1fs; carrying on without it", what, timeout_s)
        return False
    error = outcome.get("error")
    if error is not None:
        log.error("%s threw: %s", what, error, exc_info=error)
        return False
    return True


def succeeded(job: concurrent.futures.Future, what: str) -> bool:
    """Whether a finished connector job returned True (an error escaping it is logged here: nobody waits for it)."""
    if job.cancelled():
        return False
    error = job.exception()
    if error is not None:
        log.error("%s failed: %s", what, error, exc_info=error)
        return False
    return bool(job.result())


ReconfigurationListener = Callable[[str], object]  # the herder's: regenerate the named connector's tasks


class _ConnectorContext(SourceConnectorContext):
    def __init__(self, worker: Worker, name: str, epoch: int, on_reconfigure: ReconfigurationListener | None) -> None:
        self._worker = worker
        self._name = name
        self._epoch = epoch
        self._on_reconfigure = on_reconfigure

    def request_task_reconfiguration(self) -> None:
        if self._on_reconfigure is not None:
            self._on_reconfigure(self._name)

    def raise_error(self, error: BaseException) -> None:
        self._worker.fail_connector(self._name, error, self._epoch)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._worker.connector_offset_reader(self._name)


@dataclass
class ConnectorInstance:
    name: str
    connector: Connector
    config: dict[str, str]  # as stored: config provider references unresolved
    resolved: dict[str, str]  # what the connector sees
    state: State
    epoch: int  # the stops of its name asked for before it was created (see Worker._stops)
    started: bool = False


class Worker:
    def __init__(
        self,
        config: WorkerConfig,
        plugins: Plugins,
        offset_store: OffsetStore,
        statuses: StatusStore,
        worker_id: str,
        on_topic: Callable[[str, int, str], None] | None = None,
        resolver: ConfigResolver | None = None,
        source_offset_stores: SourceOffsetStores | None = None,
        rebalance: RebalanceCounters | None = None,
    ) -> None:
        """`on_topic(connector, task, topic)` hears of each topic a task uses (KIP-558); distributed mode adds
        `source_offset_stores` (connectors with their own offsets topic, KIP-618) and the group member's
        `rebalance` counters (for the metrics). Connectors' requests to regenerate their tasks go to the
        listener each start is given (`start_connector`)."""
        self.config = config
        self.resolver = resolver or ConfigResolver({})
        self.plugins = plugins
        self.offset_store = offset_store
        self.statuses = statuses
        self.worker_id = worker_id
        self.connectors: dict[str, ConnectorInstance] = {}
        self._connector_threads = KeyedDaemonExecutor("connector")
        # connectors and _stops change together: a stop takes the instance away and voids earlier jobs at once
        self._connectors_lock = threading.Lock()
        self._stops: dict[str, int] = {}  # connector -> stops asked for so far (a job's epoch)
        self._connector_job_done = threading.Condition()
        self._shutting_down = False  # set by begin_shutdown: nobody waits for a connector any more
        self.tasks: dict[tuple[str, int], TaskRunner | RemoteTaskRunner] = {}
        self._on_topic = on_topic
        self.graceful_timeout_s = config.get_int("task.shutdown.graceful.timeout.ms") / 1000
        self.source_offset_stores = source_offset_stores
        self.counters = WorkerCounters()
        self.rebalance = rebalance
        self.task_builder = TaskBuilder(
            config, plugins, statuses, worker_id, self.on_topic_seen, self.task_offset_store
        )
        # task.processes > 0: tasks run in child processes (Python threads share one interpreter lock)
        processes = config.get_int("task.processes")
        self.task_processes: TaskProcessPool | None = None
        if processes > 0:
            self.task_processes = TaskProcessPool(
                processes, dict(config.originals), worker_id, statuses, self.on_topic_seen, self.graceful_timeout_s
            )

    # ---- connectors -----------------------------------------------------------------------------

    def _report_connector(self, name: str, epoch: int, state: State, trace: str | None = None) -> bool:
        """Write the status of `name`'s instance of `epoch`; False (nothing written) once a stop voided it."""
        with self._connectors_lock:
            if self._stops.get(name, 0) != epoch:
                return False
            self.statuses.put_connector(name, InstanceStatus(state, self.worker_id, trace))
            instance = self.connectors.get(name)
            if instance is not None:
                instance.state = state
        return True

    def on_topic_seen(self, connector: str, index: int, topic: str) -> None:
        """A task of this worker (a thread, or in a task process) used `topic` for the first time."""
        if self._on_topic is not None:
            self._on_topic(connector, index, topic)

    def fail_connector(self, name: str, error: BaseException, epoch: int | None = None) -> None:
        """FAILED with the trace of `error`, for the instance of `epoch` (default: the current one)."""
        log.error("Connector %s raised an error", name, exc_info=error)
        if epoch is None:
            with self._connectors_lock:
                epoch = self._stops.get(name, 0)
        self._report_connector(name, epoch, State.FAILED, format_trace(error))

    def _submit_connector_job(self, name: str, job: Callable[[int], bool]) -> concurrent.futures.Future:
        """Queue `job(epoch)` on the connector's thread; it does nothing (False) once a stop asked for later,
        or the worker's shutdown, has voided it."""
        with self._connectors_lock:
            epoch = self._stops.get(name, 0)

        def run() -> bool:
            with self._connectors_lock:
                void = self._shutting_down or self._stops.get(name, 0) != epoch
            if void:
                return False
            with connector_context(name):
                return job(epoch)

        return self._connector_threads.submit(name, run)

    def await_connector(self, future: concurrent.futures.Future) -> bool:
        """Wait for a connector job (a start the caller answers for); False when the worker began shutting
        down first (the job still runs, on its daemon thread)."""

        def done(_: concurrent.futures.Future) -> None:
            with self._connector_job_done:
                self._connector_job_done.notify_all()

        future.add_done_callback(done)
        with self._connector_job_done:
            self._connector_job_done.wait_for(lambda: future.done() or self._shutting_down)
        return future.done() and not future.cancelled() and bool(future.result())

    def begin_shutdown(self) -> None:
        """Stop waiting for connectors: a herder thread waiting for a start() that never returns carries on."""
        with self._connectors_lock:
            self._shutting_down = True
        with self._connector_job_done:
            self._connector_job_done.notify_all()

    def start_connector(
        self, name: str, config: dict[str, str], target: TargetState, on_reconfigure: ReconfigurationListener
    ) -> concurrent.futures.Future:
        """Create a new instance and bring it to `target`, on the connector's thread after what was asked
        before (the previous instance's stop, say); its requests to regenerate its tasks go to `on_reconfigure`.
        The future says whether it got there (False, with a FAILED status, when it failed; False too when a
        stop voided it)."""
        return self._submit_connector_job(
            name, lambda epoch: self._start_counted(name, config, target, epoch, on_reconfigure)
        )

    def _start_counted(
        self,
        name: str,
        config: dict[str, str],
        target: TargetState,
        epoch: int,
        on_reconfigure: ReconfigurationListener | None,
    ) -> bool:
        self.counters.connector_startup_attempts += 1
        started = self._start_connector(name, config, target, epoch, on_reconfigure)
        if started:
            self.counters.connector_startup_successes += 1
        else:
            self.counters.connector_startup_failures += 1
        return started

    def _start_connector(
        self,
        name: str,
        config: dict[str, str],
        target: TargetState,
        epoch: int,
        on_reconfigure: ReconfigurationListener | None,
    ) -> bool:
        log.info("Creating connector %s of type %s", name, config.get("connector.class", ""))
        try:
            connector = self.plugins.new_connector(config.get("connector.class", ""))
            resolved = self.resolver.resolve(config)
        except Exception as exc:  # noqa: BLE001 - an unknown class, an unreadable secrets file
            self.fail_connector(name, exc, epoch)
            return False
        instance = ConnectorInstance(name, connector, dict(config), resolved, State.UNASSIGNED, epoch)
        with self._connectors_lock:
            if self._stops.get(name, 0) != epoch:
                return False  # stopped before it existed
            self.connectors[name] = instance
        try:
            connector.initialize(_ConnectorContext(self, name, epoch, on_reconfigure))
        except Exception as exc:  # noqa: BLE001 - a connector's own code may raise anything: it fails with it
            self.fail_connector(name, exc, epoch)
            return False
        return self._transition_instance(instance, target)

    def transition_connector(
        self,
        name: str,
        target: TargetState,
        config: dict[str, str] | None = None,
        on_reconfigure: ReconfigurationListener | None = None,
    ) -> concurrent.futures.Future:
        """Bring the instance to `target` on the connector's thread; with `config`, an instance whose creation
        failed is created again (listening with `on_reconfigure`). The future says whether it got there (a
        stop() it runs is bounded by the graceful timeout there, and nobody need wait for it)."""

        def transition(epoch: int) -> bool:
            instance = self.connectors.get(name)
            if instance is None:
                return config is not None and self._start_counted(name, config, target, epoch, on_reconfigure)
            return self._transition_instance(instance, target)

        return self._submit_connector_job(name, transition)

    def _transition_instance(self, instance: ConnectorInstance, target: TargetState) -> bool:
        """On the connector's thread; True once `target` is reached and reported."""
        name = instance.name
        if instance.state is State.FAILED and target is not TargetState.STOPPED:
            log.info("Connector %s is FAILED; not moving it to %s (restart it, or stop it)", name, target.value)
            return False
        if target is TargetState.STARTED:
            if not instance.started:
                try:
                    instance.connector.start(dict(instance.resolved))
                    instance.started = True
                except Exception as exc:  # noqa: BLE001 - a connector's own code may raise anything: it fails with it
                    self.fail_connector(name, exc, instance.epoch)
                    return False
            return self._report_connector(name, instance.epoch, State.RUNNING)
        self._stop_instance(instance)
        return self._report_connector(
            name, instance.epoch, State.PAUSED if target is TargetState.PAUSED else State.STOPPED
        )

    def _stop_instance(self, instance: ConnectorInstance) -> None:
        """On the connector's thread: a stop() that outlasts the graceful timeout is left running on a
        thread of its own, so a later start of the same connector does not wait for it forever."""
        if instance.started:
            instance.started = False
            with connector_context(instance.name):
                if run_bounded(instance.connector.stop, self.graceful_timeout_s, f"stop of connector {instance.name}"):
                    log.info("Completed shutdown for connector %s", instance.name)

    def stop_connector(self, name: str) -> concurrent.futures.Future:
        """Forget the instance and void what was asked for it so far, now; stop it on its own thread. The
        future is done once everything asked for the connector before has run and its stop() returned (or
        the graceful timeout passed); nobody need wait for it."""
        with self._connectors_lock:
            self._stops[name] = self._stops.get(name, 0) + 1
            instance = self.connectors.pop(name, None)

        def stop() -> None:
            if instance is not None:
                self._stop_instance(instance)

        return self._connector_threads.submit(name, stop)

    def restart_connector(
        self, name: str, config: dict[str, str], target: TargetState, on_reconfigure: ReconfigurationListener
    ) -> concurrent.futures.Future:
        """Stop the instance and start a new one (that order, on the connector's thread); the status says
        RESTARTING until the new instance reports. The future is the start's."""
        self.stop_connector(name)
        self.statuses.put_connector(name, InstanceStatus(State.RESTARTING, self.worker_id))
        return self.start_connector(name, config, target, on_reconfigure)

    def is_running(self, name: str) -> bool:
        instance = self.connectors.get(name)
        return instance is not None and instance.started and instance.state is State.RUNNING

    def task_configs(self, name: str, max_tasks: int, enforce: bool) -> list[dict[str, str]]:
        instance = self.connectors[name]
        configs = instance.connector.task_configs(max_tasks)
        if configs is None:
            configs = []
        if enforce and len(configs) > max_tasks:
            raise ValueError(
                f"The connector {name} has generated {len(configs)} tasks, which is greater than {max_tasks}, "
                "the maximum number of tasks it is configured to create. This behavior should be considered a bug "
                "and is disallowed. If necessary, it can be permitted by reconfiguring the connector with "
                "'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect."
            )
        from ..plugins import class_name as display_name

        class_name = display_name(instance.connector.task_class())
        result = []
        for cfg in configs:
            cfg = {str(k): str(v) for k, v in (cfg or {}).items()}
            cfg["task.class"] = class_name
            result.append(cfg)
        return self.resolver.restore_references(instance.config, instance.resolved, result)

    def connector_type(self, config: dict[str, str]) -> str:
        try:
            return self.plugins.connector_desc(config.get("connector.class", "")).type
        except ConnectError:  # no such connector class
            return "unknown"

    # ---- tasks ----------------------------------------------------------------------------------

    def start_task(
        self,
        name: str,
        index: int,
        task_config: dict[str, str],
        connector_config: dict[str, str],
        target: TargetState,
        exactly_once: ExactlyOnceStart | None = None,
    ) -> bool:
        """Start one task (a thread here, or in a task process when `task.processes` > 0); failures
        become a FAILED status with the trace. `exactly_once`: a source task the herder runs exactly once
        (its transactional id; see runtime/worker/exactly_once.py), as a thread of this process."""
        self.counters.task_startup_attempts += 1
        try:
            task_config = self.resolver.resolve(task_config)
            connector_config = self.resolver.resolve(connector_config)
            if exactly_once is not None:
                runner: TaskRunner | RemoteTaskRunner = self.task_builder.build(
                    name, index, task_config, connector_config, target, exactly_once
                )
            elif self.task_processes is not None:
                runner = self._start_remote_task(name, index, task_config, connector_config, target)
            else:
                runner = self.task_builder.build(name, index, task_config, connector_config, target)
        except Exception as exc:
            log.error("Failed to start task %s-%s", name, index, exc_info=exc)
            self.statuses.put_task_safe(name, index, InstanceStatus(State.FAILED, self.worker_id, format_trace(exc)))
            self.counters.task_startup_failures += 1
            return False
        self.counters.task_startup_successes += 1
        self.tasks[(name, index)] = runner
        runner.start()
        return True

    def _start_remote_task(
        self, name: str, index: int, task_config: dict[str, str], connector_config: dict[str, str], target: TargetState
    ) -> RemoteTaskRunner:
        """A task in a task process: the process builds its runner from the same resolved configs; a
        source task's offsets stay in this process's store, which the task reads and writes through it."""
        pool = self.task_processes
        assert pool is not None
        self.plugins.connector_desc(connector_config.get("connector.class", ""))  # unknown class: fail here
        if not task_config.get("task.class"):
            raise ValueError(f"Task config of {name}-{index} has no task.class")
        offset_store = None if self.is_sink(connector_config) else self.task_offset_store(name, index, connector_config)
        return pool.task_runner(name, index, task_config, connector_config, target, offset_store)

    def transition_tasks(self, name: str, target: TargetState) -> None:
        for (connector, _), runner in list(self.tasks.items()):
            if connector == name:
                runner.transition_to(target)

    def task_indices(self, name: str) -> list[int]:
        return sorted(i for c, i in self.tasks if c == name)

    def stop_tasks(self, keys: list[tuple[str, int]]) -> None:
        """Signal every task first, then wait for all within one graceful timeout."""
        runners = [self.tasks.pop(k) for k in keys if k in self.tasks]
        for runner in runners:
            runner.stop()
        deadline = time.monotonic() + self.graceful_timeout_s
        for runner in runners:
            runner.await_stop(max(0.0, deadline - time.monotonic()))

    def stop_all(self) -> None:
        self.stop_tasks(list(self.tasks))
        stops = [self.stop_connector(name) for name in list(self.connectors)]
        # side by side, each bounded by the graceful timeout; one queued behind a start() that never
        # returns is abandoned with its daemon thread
        _, pending = concurrent.futures.wait(stops, timeout=self.graceful_timeout_s + 1)
        if pending:
            log.error("%d connector(s) did not stop in time; exiting without them", len(pending))
        self._connector_threads.shutdown()
        if self.task_processes is not None:
            self.task_processes.close(self.graceful_timeout_s)

    def forget_seen_topics(self, name: str) -> None:
        """Make the connector's running tasks report each topic again the next time they see it."""
        for (connector, _), runner in list(self.tasks.items()):
            if connector == name:
                runner.forget_seen_topics()

    def source_offset_store(
        self, name: str, connector_config: dict[str, str], client_id: str | None = None
    ) -> ConnectorOffsetStore:
        """The (not yet started) offset store of a source connector's task: the worker's, or its own topic's first."""
        if self.source_offset_stores is None:
            return ConnectorOffsetStore.worker_only(self.offset_store)
        return self.source_offset_stores.for_connector(name, connector_config, client_id)

    def task_offset_store(self, name: str, index: int, connector_config: dict[str, str]) -> OffsetStore:
        """The (not yet started) offset store of one source task."""
        return self.source_offset_store(name, connector_config, f"connector-offsets-{name}-{index}")

    def connector_offset_reader(self, name: str) -> OffsetStorageReader:
        instance = self.connectors.get(name)
        if (
            instance is None
            or self.source_offset_stores is None
            or not self.source_offset_stores.uses_connector_store(instance.resolved)
        ):
            return StoreOffsetReader(name, self.offset_store)
        # the connector instance keeps no store open: each read opens its topic's store, then closes it
        return StoreOffsetReader(name, self.source_offset_store(name, instance.resolved), transient=True)

    def new_connector_for_hook(self, config: dict[str, str]) -> Connector:
        return self.plugins.new_connector(config.get("connector.class", ""))

    def is_sink(self, config: dict[str, str]) -> bool:
        return issubclass(self.plugins.connector_desc(config.get("connector.class", "")).cls, SinkConnector)


__all__ = ["ConnectorContext", "ConnectorInstance", "Worker", "run_bounded", "succeeded"]
