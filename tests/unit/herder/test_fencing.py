"""KIP-618's zombie fencing without a broker: which connectors are pending fencing (the config topic's
records), what a round fences and which task count it records, the leader's scheduled rounds, and tasks of a
connector pending fencing held back until the round's task count record is read."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import orjson
import pytest
from confluent_kafka import KafkaError, KafkaException

from runtime.api.errors import ConnectError
from runtime.control.errors import BadRequest, ServerError
from runtime.control.stages import StageTracker
from runtime.distributed.assignment import Assignment
from runtime.herder.fencing import LeaderRounds, ZombieFencing, failed_round_statuses, task_transactional_id
from runtime.herder.local_work import LocalWork
from runtime.herder.topics import MemoryTopics
from runtime.storage.base import InstanceStatus, StatusStore
from runtime.storage.kafka_config_store import ClusterConfig, KafkaConfigStore
from runtime.storage.kafka_log import TopicSpec
from runtime.storage.states import State, TargetState
from runtime.worker_config import WorkerConfig

GROUP = "grp"
SOURCE = {"connector.class": "Source"}
SINK = {"connector.class": "Sink"}


class Topic:
    """A config store fed the records the leader writes, in order, as its reader thread would be."""

    def __init__(self) -> None:
        self.store = KafkaConfigStore(TopicSpec("configs", 1), {"bootstrap.servers": "unused:9092"})
        self.offset = 0
        self.written: list[tuple[str, Any]] = []

    def record(self, key: str, value: Any) -> None:
        self.store._on_record(key.encode(), None if value is None else orjson.dumps(value), 0, self.offset)
        self.offset += 1

    def connector(self, name: str, config: dict[str, str], tasks: int) -> None:
        self.record(f"connector-{name}", {"properties": config})
        self.commit(name, tasks)

    def commit(self, name: str, tasks: int) -> None:
        for i in range(tasks):
            self.record(f"task-{name}-{i}", {"properties": {"task": str(i)}})
        self.record(f"commit-{name}", {"tasks": tasks})

    # what ZombieFencing asks of the store
    def refresh(self) -> None:
        pass

    def snapshot(self) -> ClusterConfig:
        return self.store.snapshot()

    def put_task_count_record(self, name: str, count: int) -> None:
        self.written.append((name, count))
        self.record(f"tasks-fencing-{name}", {"task-count": count})


def test_task_configs_are_pending_fencing_until_a_task_count_record_follows_them() -> None:
    topic = Topic()
    topic.connector("a", SOURCE, 2)
    assert topic.snapshot().pending_fencing == {"a"}
    topic.record("tasks-fencing-a", {"task-count": 2})
    assert topic.snapshot().pending_fencing == set() and topic.snapshot().task_count_records == {"a": 2}
    topic.commit("a", 3)  # a new generation of task configs
    assert topic.snapshot().pending_fencing == {"a"}
    topic.record("tasks-fencing-a", {"task-count": "three"})  # unreadable: skipped with a log line
    assert topic.snapshot().pending_fencing == {"a"}
    topic.record("connector-a", None)  # deleted: nothing left to fence for
    assert topic.snapshot().pending_fencing == set() and "a" not in topic.snapshot().task_count_records


@pytest.fixture
def topic() -> Topic:
    return Topic()


@pytest.fixture
def fenced() -> list[list[str]]:
    return []


@pytest.fixture
def fencing(topic: Topic, fenced: list[list[str]]) -> ZombieFencing:
    def fence(client_config: dict[str, str], ids: list[str], timeout_s: float) -> None:
        fenced.append(ids)

    return ZombieFencing(
        WorkerConfig({"bootstrap.servers": "unused:9092"}),
        GROUP,
        topic,  # type: ignore[arg-type]  # the store's reads and the task count write
        StageTracker(),
        is_source=lambda config: config is not None and config.get("connector.class") == "Source",
        fence=fence,
    )


def test_a_first_round_fences_nothing_and_records_the_task_count(topic, fencing, fenced) -> None:
    topic.connector("a", SOURCE, 3)
    fencing.run("a")
    assert fenced == [] and topic.written == [("a", 3)]
    fencing.run("a")  # nothing pending any more: nothing fenced, nothing written
    assert fenced == [] and topic.written == [("a", 3)]


def test_a_new_generation_fences_every_task_of_the_previous_count(topic, fencing, fenced) -> None:
    topic.connector("a", SOURCE, 3)
    fencing.run("a")
    topic.commit("a", 2)
    fencing.run("a")
    assert fenced == [[task_transactional_id(GROUP, "a", i) for i in range(3)]] == [["grp-a-0", "grp-a-1", "grp-a-2"]]
    assert topic.written == [("a", 3), ("a", 2)]
    topic.commit("a", 0)  # stopped: the two tasks of the last generation are fenced, and 0 recorded
    fencing.run("a")
    assert fenced[-1] == ["grp-a-0", "grp-a-1"] and topic.written[-1] == ("a", 0)


def test_one_task_after_one_task_needs_no_fencing(topic, fencing, fenced) -> None:
    # the new task's producer has the same transactional id: initialising it fences the old one
    topic.connector("a", SOURCE, 1)
    fencing.run("a")
    topic.commit("a", 1)
    fencing.run("a")
    assert fenced == [] and topic.written == [("a", 1), ("a", 1)]


def test_sinks_are_refused_and_failures_are_server_errors(topic, fencing, fenced) -> None:
    topic.connector("s", SINK, 1)
    with pytest.raises(BadRequest, match="Connector s is not a source connector"):
        fencing.run("s")
    topic.connector("a", SOURCE, 2)
    fencing.run("a")
    topic.commit("a", 2)

    def fails(client_config: dict[str, str], ids: list[str], timeout_s: float) -> None:
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "no coordinator"))

    fencing._fence = fails
    with pytest.raises(ServerError, match="Failed to perform zombie fencing: no coordinator"):
        fencing.run("a")
    assert topic.written == [("a", 2)] and "a" in topic.snapshot().pending_fencing


def test_task_configs_generated_during_a_round_fail_it(topic, fencing) -> None:
    topic.connector("a", SOURCE, 2)
    fencing.run("a")
    topic.commit("a", 3)

    def meanwhile(client_config: dict[str, str], ids: list[str], timeout_s: float) -> None:
        topic.commit("a", 4)

    fencing._fence = meanwhile
    with pytest.raises(ServerError, match="Fencing failed because new task configurations were generated"):
        fencing.run("a")
    assert topic.written == [("a", 2)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_leader_runs_one_round_per_pending_source_connector_and_retries_failures(topic) -> None:
    runs: list[str] = []
    done = threading.Semaphore(0)
    failing = {"b"}

    class Rounds:
        def is_source(self, config: dict[str, str]) -> bool:
            return config.get("connector.class") == "Source"

        def run(self, name: str) -> None:
            runs.append(name)
            if name in failing:
                raise ServerError("no coordinator")

    clock = Clock()
    reported: list[tuple[str, str]] = []
    rounds = LeaderRounds(
        Rounds(),  # type: ignore[arg-type]
        done.release,
        clock,
        on_failed=lambda name, error: reported.append((name, str(error))),
    )
    topic.connector("a", SOURCE, 1)
    topic.connector("b", SOURCE, 1)
    topic.connector("s", SINK, 1)
    topic.connector("stopped", SOURCE, 0)  # no tasks to start: left pending for the next round asked for
    try:
        rounds.schedule(topic.snapshot())
        assert done.acquire(timeout=5) and done.acquire(timeout=5)
        assert sorted(runs) == ["a", "b"]  # not the sink, not the stopped source
        assert reported == [("b", "no coordinator")]  # the herder shows b's waiting tasks FAILED
        rounds.schedule(topic.snapshot())  # "b" failed a moment ago: not yet again ("a" is still pending here)
        assert done.acquire(timeout=5) and sorted(runs) == ["a", "a", "b"]
        clock.now += 10
        failing.clear()
        rounds.schedule(topic.snapshot())
        assert done.acquire(timeout=5) and done.acquire(timeout=5) and sorted(runs) == ["a", "a", "a", "b", "b"]
        assert reported == [("b", "no coordinator")]
    finally:
        rounds.close()


def test_a_failed_round_shows_the_connectors_assigned_tasks_failed_once_per_cause() -> None:
    assigned = {("a", 0): "w1:8083", ("a", 1): "w2:8083", ("other", 0): "w1:8083"}
    shown: dict[tuple[str, int], InstanceStatus] = {("a", 1): InstanceStatus(State.RUNNING, "w2:8083")}
    error = ServerError("Failed to perform zombie fencing: the coordinator is not available")

    written = failed_round_statuses("a", error, assigned, lambda c, i: shown.get((c, i)))
    assert [(i, s.state, s.worker_id) for i, s in written] == [
        (0, State.FAILED, "w1:8083"),
        (1, State.FAILED, "w2:8083"),
    ]
    trace = written[0][1].trace or ""
    assert "Failed to perform round of zombie fencing" in trace and "the coordinator is not available" in trace

    shown.update({("a", i): status for i, status in written})
    assert failed_round_statuses("a", error, assigned, lambda c, i: shown.get((c, i))) == []  # the retry's again
    shown[("a", 0)] = InstanceStatus(State.RESTARTING, "w1:8083")  # a restart: the next failure shows again
    again = failed_round_statuses("a", error, assigned, lambda c, i: shown.get((c, i)))
    assert [(i, s.state) for i, s in again] == [(0, State.FAILED)]
    other = ServerError("Failed to perform zombie fencing: timed out")
    assert len(failed_round_statuses("a", other, assigned, lambda c, i: shown.get((c, i)))) == 2  # a new cause


class FakeWorker:
    """The worker as LocalWork drives it: records which tasks it was asked to start."""

    graceful_timeout_s = 1.0

    def __init__(self) -> None:
        self.started: list[tuple[str, int]] = []
        self.exactly_once: dict[tuple[str, int], Any] = {}
        self.tasks: dict[tuple[str, int], Any] = {}

    def _done(self, value: Any = True) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_result(value)
        return future

    def start_connector(self, name: str, config: dict[str, str], target: TargetState, on_reconfigure: Any) -> Any:
        return self._done(False)  # never running: no task configs are generated here

    def stop_connector(self, name: str) -> concurrent.futures.Future:
        return self._done()

    def transition_connector(self, name: str, target: TargetState, *args: Any) -> concurrent.futures.Future:
        return self._done(False)

    def start_task(self, name: str, index: int, *args: Any) -> bool:
        self.started.append((name, index))
        self.exactly_once[(name, index)] = args[-1]
        return True

    def stop_tasks(self, keys: list[tuple[str, int]]) -> None:
        pass


def local_work(
    topic: Topic, worker: FakeWorker, statuses: StatusStore | None = None, owns: Any = lambda name, index: True
) -> LocalWork:
    """Worker w1's share of an exactly-once cluster (group GROUP), over `topic`'s config store."""
    return LocalWork(
        worker,  # type: ignore[arg-type]
        topic.store,
        statuses or StatusStore(),  # type: ignore[arg-type]
        MemoryTopics(WorkerConfig({"bootstrap.servers": "unused:9092"})),
        "w1",
        StageTracker(),
        publish=lambda held: None,
        wake=lambda: None,
        is_leader=lambda: True,
        owns=owns,
        exactly_once_group=GROUP,
        is_source=lambda config: config.get("connector.class") == "Source",
    )


def test_tasks_of_a_connector_pending_fencing_start_once_its_task_count_is_recorded(topic) -> None:
    worker = FakeWorker()
    work = local_work(topic, worker)
    topic.connector("a", SOURCE, 2)
    topic.connector("s", SINK, 1)
    placement = Assignment(1, "w1", "", {"a": "w1", "s": "w1"}, {("a", 0): "w1", ("a", 1): "w1", ("s", 0): "w1"})
    work.reconcile(placement, topic.snapshot(), fenced=False)
    assert worker.started == [("s", 0)]  # the source's tasks wait for the leader's round
    topic.record("tasks-fencing-a", {"task-count": 2})
    work.reconcile(placement, topic.snapshot(), fenced=False)
    assert worker.started == [("s", 0), ("a", 0), ("a", 1)]
    assert work.held.tasks == {("a", 0), ("a", 1), ("s", 0)}
    # the source's tasks run exactly once, with their transactional ids; the sink's do not
    assert worker.exactly_once[("s", 0)] is None
    start = worker.exactly_once[("a", 1)]
    assert start.transactional_id == "grp-a-1"
    start.still_current()  # still current, still ours
    topic.commit("a", 2)  # a newer generation: the task must not fence the one that replaces it
    with pytest.raises(ConnectError, match="earlier generation"):
        start.still_current()


def test_offsets_of_an_exactly_once_source_change_only_after_a_round_and_under_its_transactional_id() -> None:
    from types import SimpleNamespace

    from runtime.herder.distributed import DistributedHerder
    from runtime.storage.base import ConnectorState

    rounds: list[str] = []

    def run(name: str) -> None:
        rounds.append(name)
        if name == "broken":
            raise ServerError("Failed to perform zombie fencing: no coordinator")

    herder = SimpleNamespace(
        _offsets_precheck=lambda name: ConnectorState(SOURCE, TargetState.STOPPED),
        exactly_once=True,
        _is_source=lambda config: True,
        fencing=SimpleNamespace(run=run),
        member=SimpleNamespace(group_id=GROUP),
    )
    state, transactional_id = DistributedHerder._fenced_precheck(herder, "a")  # type: ignore[arg-type]
    assert rounds == ["a"] and transactional_id == "grp-a" and state.target_state is TargetState.STOPPED
    with pytest.raises(ServerError) as failure:
        DistributedHerder._fenced_precheck(herder, "broken")  # type: ignore[arg-type]
    assert failure.value.status == 500
    assert failure.value.message == "Failed to perform zombie fencing for source connector prior to modifying offsets"
    herder.exactly_once = False  # at least once: no round, a plain write
    assert DistributedHerder._fenced_precheck(herder, "a")[1] is None and rounds == ["a", "broken"]  # type: ignore[arg-type]


def test_a_task_fenced_while_this_worker_owns_it_restarts_once_per_placement(topic) -> None:
    # KIP-618's race: a zombie's producer init fenced the task the group runs here. The herder restarts it (its
    # init fences the zombie back), once per placement, and only while it is this worker's own.
    worker, statuses, owned = FakeWorker(), StatusStore(), {"now": True}
    work = local_work(topic, worker, statuses, owns=lambda name, index: owned["now"])
    topic.connector("a", SOURCE, 1)
    topic.record("tasks-fencing-a", {"task-count": 1})

    def place(generation: int) -> None:
        work.reconcile(Assignment(generation, "w1", "", {"a": "w1"}, {("a", 0): "w1"}), topic.snapshot(), False)

    def fenced(start: Any) -> int:
        """The instance `start` reports its fence; how many times the task has been started since."""
        statuses.put_task("a", 0, InstanceStatus(State.FAILED, "w1", "TaskFencedError"))
        start.on_fenced()
        work.run_restarts()
        return len(worker.started)

    place(1)
    first = worker.exactly_once[("a", 0)]
    assert fenced(first) == 2, "the fenced task was not restarted"
    status = statuses.task("a", 0)
    assert status is not None and status.state is State.RESTARTING
    assert fenced(first) == 2, "a late report of an instance already replaced restarted the task"
    second = worker.exactly_once[("a", 0)]
    assert fenced(second) == 2, "fenced twice in one placement: it must stay FAILED"
    place(2)  # the group placed its tasks again: once more
    assert fenced(second) == 3
    owned["now"] = False  # this worker is out of the group (it was frozen, say): the task is not its own
    place(3)
    assert fenced(worker.exactly_once[("a", 0)]) == 3
    owned["now"] = True
    statuses.put_task("a", 0, InstanceStatus(State.RUNNING, "w2"))  # another worker runs it now
    worker.exactly_once[("a", 0)].on_fenced()
    work.run_restarts()
    assert len(worker.started) == 3
