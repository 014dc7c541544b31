"""Zombie fencing for exactly-once source connectors (KIP-618), as the reference's DistributedHerder and
Worker.fenceZombies do it.

Each source task of a connector sends through a transactional producer with the id
`<group.id>-<connector>-<task>`. When the connector gets a new generation of task configs, tasks of the
previous generation may still run somewhere (a frozen worker, a stop that never returned): the leader
fences them before the new generation starts, by bumping the epoch of every transactional id of the
previous task count (the latest `tasks-fencing-<connector>` record), then records the new task count.
A connector is "pending fencing" from its latest task configs until that record (ClusterConfig).

Apache Kafka's Admin client has `fenceProducers`; confluent-kafka's has not. What fenceProducers sends for
each id is an InitProducerId with that transactional id: the transaction coordinator bumps the id's epoch,
aborts the transaction its producer had open, and refuses that producer from then on. Initialising a
producer with the id (`init_transactions`) sends exactly that request, so that is how an id is fenced here.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping

from confluent_kafka import KafkaException, Producer

from ..control.errors import BadRequest, ServerError
from ..control.stages import StageTracker
from ..storage.base import InstanceStatus
from ..storage.kafka_config_store import ClusterConfig, KafkaConfigStore
from ..storage.states import State
from ..worker import clients
from ..worker.exactly_once import task_transactional_id
from ..worker_config import WorkerConfig

log = logging.getLogger(__name__)

FENCING_TIMEOUT_S = 90.0  # the reference's: the REST request timeout's default
PARALLEL_FENCES = 8
RETRY_AFTER_S = 5.0  # a failed round of the leader's is tried again after this long


def cluster_transactional_id(group_id: str) -> str:
    """The transactional id of the leader's config-topic producer (the reference's transactionalProducerId)."""
    return f"connect-cluster-{group_id}"


def connector_transactional_id(group_id: str, connector: str) -> str:
    """The transactional id KIP-875's offset changes of an exactly-once source connector are written under."""
    return f"{group_id}-{connector}"


def fence_producers(client_config: dict[str, str], transactional_ids: Iterable[str], timeout_s: float) -> None:
    """Fence the producers of these transactional ids (see the module docs), side by side; raises the first
    failure."""
    ids = list(transactional_ids)
    if not ids:
        return

    def fence(transactional_id: str) -> None:
        producer = clients.create_client(
            Producer, {**client_config, "transactional.id": transactional_id}, "zombie fencing producer"
        )
        producer.init_transactions(timeout_s)
        producer.close()  # it opened no transaction

    with concurrent.futures.ThreadPoolExecutor(min(PARALLEL_FENCES, len(ids)), "zombie-fencing") as pool:
        for future in [pool.submit(fence, i) for i in ids]:
            future.result()


class ZombieFencing:
    """The leader's rounds of zombie fencing, one at a time per connector."""

    def __init__(
        self,
        config: WorkerConfig,
        group_id: str,
        config_store: KafkaConfigStore,
        stages: StageTracker,
        is_source: Callable[[dict[str, str]], bool],
        fence: Callable[[dict[str, str], list[str], float], None] = fence_producers,
    ) -> None:
        self.config = config
        self.group_id = group_id
        self.config_store = config_store
        self.stages = stages
        self.is_source = is_source
        self._fence = fence
        self._lock = threading.Lock()
        self._rounds: dict[str, threading.Lock] = {}

    def _round_lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self._rounds.setdefault(name, threading.Lock())

    def run(self, name: str) -> None:
        """A round for connector `name` (the caller is the leader): when its task configs are pending fencing,
        fence the transactional ids of the previous task count (none when there is no task count record yet,
        or when one task follows one task: the new task's producer fences the old one itself), then write the
        current task count. Nothing when nothing is pending. BadRequest for a sink connector; ServerError
        when fencing or the write fails."""
        with self._round_lock(name):
            with self.stages.stage("reading to the end of the config topic"):
                self.config_store.refresh()
            snapshot = self.config_store.snapshot()
            state = snapshot.connectors.get(name)
            if state is None:
                raise ServerError(f"Connector {name} not found")
            if not self.is_source(state.config):
                raise BadRequest(f"Connector {name} is not a source connector")
            if name not in snapshot.pending_fencing:
                log.debug("Skipping zombie fencing for connector %s: every earlier task generation is fenced", name)
                return
            count = 0 if name in snapshot.inconsistent else len(state.task_configs)
            previous = snapshot.task_count_records.get(name)
            if previous is not None and (previous != 1 or count != 1):
                generation = snapshot.commit_offsets.get(name)
                ids = [task_transactional_id(self.group_id, name, i) for i in range(previous)]
                log.info("Fencing out %d task producers of source connector %s", previous, name)
                with self.stages.stage(f"fencing out {previous} task producers for source connector {name}"):
                    try:
                        self._fence(clients.admin_config(self.config, state.config, sink=False), ids, FENCING_TIMEOUT_S)
                    except KafkaException as exc:
                        raise ServerError(f"Failed to perform zombie fencing: {_message(exc)}") from exc
                self.config_store.refresh()
                if self.config_store.snapshot().commit_offsets.get(name) != generation:
                    raise ServerError("Fencing failed because new task configurations were generated for the connector")
            with self.stages.stage(f"writing a task count record for connector {name} to the config topic"):
                self.config_store.put_task_count_record(name, count)


def failed_round_statuses(
    name: str,
    error: BaseException,
    assigned: Mapping[tuple[str, int], str],
    current: Callable[[str, int], InstanceStatus | None],
) -> list[tuple[int, InstanceStatus]]:
    """The statuses to write when a round for connector `name` failed with `error`: each of its tasks in the
    assignment (`assigned`: (connector, task) -> worker id) FAILED, for the worker it is assigned to, with
    the cause in its trace, as the reference's task fails its preflight round. Not again for a task that
    already shows this failure (`current`: its status), as rounds are retried: a task starts (RUNNING) once
    one succeeds, and a restart shows RESTARTING until the next round's outcome."""
    try:  # raised for its chained trace, as the reference's task reports the cause under its own message
        raise ServerError("Failed to perform round of zombie fencing") from error
    except ServerError as failure:
        trace = "".join(traceback.format_exception(failure))
    statuses = []
    for (connector, index), owner in sorted(assigned.items()):
        if connector != name:
            continue
        shown = current(name, index)
        if shown is None or shown.state is not State.FAILED or shown.trace != trace:
            statuses.append((index, InstanceStatus(State.FAILED, owner, trace)))
    return statuses


def _message(exc: BaseException) -> str:
    error = exc.args[0] if exc.args else None
    text = getattr(error, "str", None)
    return text() if callable(text) else str(exc)


class LeaderRounds:
    """Before a new generation of a source connector's tasks starts, the leader runs its round (exactly-once
    support `preparing` or `enabled`), as soon as it reads the task configs: the reference's tasks ask for it
    before they start, this leader does not wait to be asked. Rounds run on a few threads of their own, so the
    tick never waits for the brokers; the tasks start once the round's task count record is read. A connector
    with no tasks to start (STOPPED) is left pending, as in the reference: the next round (PUT /fence, an offsets
    change, a resume) fences what ran before. A round that fails is tried again after RETRY_AFTER_S, and
    `on_failed` hears of each failure (the reference's tasks fail when their round does: the herder shows the
    waiting tasks FAILED with the cause). `schedule` is called by the tick thread, only on the leader."""

    def __init__(
        self,
        fencing: ZombieFencing,
        on_done: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        on_failed: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        self.fencing = fencing
        self._on_done = on_done
        self._on_failed = on_failed
        self._clock = clock
        self._pool = concurrent.futures.ThreadPoolExecutor(2, "fencing-round")
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._failed_at: dict[str, float] = {}

    def schedule(self, snapshot: ClusterConfig) -> None:
        now = self._clock()
        for name in sorted(snapshot.pending_fencing):
            state = snapshot.connectors.get(name)
            if (
                state is None
                or not state.task_configs
                or name in snapshot.inconsistent
                or not self.fencing.is_source(state.config)
            ):
                continue
            with self._lock:
                failed_at = self._failed_at.get(name)
                if name in self._running or (failed_at is not None and now - failed_at < RETRY_AFTER_S):
                    continue
                self._running.add(name)
            self._pool.submit(self._run, name)

    def _run(self, name: str) -> None:
        failed = False
        try:
            self.fencing.run(name)
        except Exception as exc:  # noqa: BLE001 - logged, reported; tried again later
            failed = True
            log.error("Zombie fencing round for connector %s failed (it is tried again): %s", name, exc)
            if self._on_failed is not None:
                try:
                    self._on_failed(name, exc)
                except Exception as report_error:  # noqa: BLE001 - the retry must still be scheduled
                    log.error("Could not report the failed fencing round of connector %s: %s", name, report_error)
        with self._lock:
            self._running.discard(name)
            if failed:
                self._failed_at[name] = self._clock()
            else:
                self._failed_at.pop(name, None)
        self._on_done()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
