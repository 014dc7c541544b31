"""A distributed Connect cluster of worker processes on the test broker: its own group and internal topics."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from .broker import unique
from .process import run_side_by_side
from .worker import WorkerProcess, wait_for

HEARTBEAT_MS = 500
SESSION_TIMEOUT_MS = 4000


def group_topics(group: str) -> dict[str, Any]:
    """A distributed group's id and internal topics of its own, named after it, one replica each (a test
    broker has one node): what every worker of a test group (ours or the reference) is configured with."""
    return {
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": 1,
        "offset.storage.replication.factor": 1,
        "status.storage.replication.factor": 1,
    }


class Cluster:
    """Workers of one Connect group; `api(i)` talks to worker i."""

    def __init__(
        self, root: Path, bootstrap_servers: str, size: int, *, leader_first: bool = False, **extra: Any
    ) -> None:
        """`leader_first`: `start()` starts worker 0 alone first, so that it leads (for a test that also picks the
        leader's worker id); otherwise every worker starts at once (see `start`)."""
        group = unique("connect-group")
        self.props: dict[str, Any] = {
            **group_topics(group),
            "offset.storage.partitions": 3,
            "status.storage.partitions": 3,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "scheduled.rebalance.max.delay.ms": 0,
            "offset.flush.interval.ms": 1000,
            **extra,
        }
        self.root = root
        self.bootstrap_servers = bootstrap_servers
        self.leader_first = leader_first
        self.workers: list[WorkerProcess] = [self.new_worker(i) for i in range(size)]
        self.clients: dict[int, httpx.Client] = {}

    def new_worker(self, index: int) -> WorkerProcess:
        return WorkerProcess(self.root / f"worker{index}", self.bootstrap_servers, props=self.props, mode="distributed")

    def start(self) -> Cluster:
        """Start every worker, and return once they are one group in one generation, with the leader first
        (`workers[0]`, `api(0)`).

        The workers start side by side: they race to create the internal topics and to lead, which a worker
        must handle (faults/test_simultaneous_start.py proves it does), and a cluster is up in about the time
        of one worker's start and one join. Started one after the other, each process's start-up and each
        join (about session.timeout.ms/2 on Tansu) came in turn. With `leader_first`, worker 0 starts alone
        and leads, and the others then join it."""
        if self.leader_first:
            self.workers[0].start()
            start_together(self.workers[1:])
            return self
        start_together(self.workers)
        if len(self.workers) > 1:
            leader = wait_for(self._settled_leader, 60, 0.1, "the workers to settle in one generation")
            first = self.index_of(leader)
            # a new list: one a caller took before the start (for pod names, say) keeps its order
            self.workers = [self.workers[first], *self.workers[:first], *self.workers[first + 1 :]]
            self._close_clients()  # made for the indices before
        return self

    def _settled_leader(self) -> str | None:
        """The leader's worker id once every worker has applied the same generation, under the same leader."""
        views = {self._rebalance_view(i) for i in range(len(self.workers))}
        if len(views) != 1:
            return None
        (epoch, leader), *_ = views
        return leader if epoch is not None and leader else None

    def restart(self) -> Cluster:
        """Start every (stopped) worker again, all side by side: the internal topics exist now. Same ports, so
        the same worker ids; any of them may lead."""
        start_together(self.workers)
        return self

    def api(self, index: int) -> httpx.Client:
        if index not in self.clients:
            self.clients[index] = httpx.Client(base_url=self.workers[index].url, timeout=60)
        return self.clients[index]

    def worker_id(self, index: int) -> str:
        return f"127.0.0.1:{self.workers[index].port}"

    def index_of(self, worker_id: str) -> int:
        return next(i for i in range(len(self.workers)) if self.worker_id(i) == worker_id)

    def status(self, name: str, via: int = 0) -> dict[str, Any] | None:
        response = self.api(via).get(f"/connectors/{name}/status")
        return response.json() if response.status_code == 200 else None

    def wait_state(
        self,
        name: str,
        connector: str,
        tasks: int,
        task_state: str = "RUNNING",
        via: int = 0,
        timeout_s: float = 30.0,
        exclude_worker: str | None = None,
    ) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            body = self.status(name, via)
            if body is None or body["connector"]["state"] != connector or len(body["tasks"]) != tasks:
                return None
            if any(t["state"] != task_state for t in body["tasks"]):
                return None
            owners = [body["connector"]["worker_id"], *(t["worker_id"] for t in body["tasks"])]
            if exclude_worker is not None and exclude_worker in owners:
                return None
            return body

        try:
            return wait_for(
                check, timeout_s, 0.1, f"{name} {connector} with {tasks} tasks {task_state} (via worker {via})"
            )
        except AssertionError as exc:  # say what the worker showed instead, for the next reader of a CI log
            shown = {i: self._status_or_why(name, i) for i in range(len(self.workers)) if self.workers[i].process}
            raise AssertionError(f"{exc}; statuses shown by each worker: {shown}") from None

    def _status_or_why(self, name: str, via: int) -> dict[str, Any] | str | None:
        """What worker `via` shows, or why it showed nothing (a frozen worker does not answer)."""
        try:
            return self.status(name, via)
        except httpx.HTTPError as exc:
            return f"no answer: {type(exc).__name__}"

    def rebalance_epoch(self, index: int) -> float | None:
        """The generation worker `index` applied, from its /metrics; None while it rebalances."""
        return self._rebalance_view(index)[0]

    def _rebalance_view(self, index: int) -> tuple[float | None, str]:
        """(the generation worker `index` applied, or None while it rebalances; the leader it names), from its
        /metrics."""
        from prometheus_client.parser import text_string_to_metric_families

        values: dict[str, float] = {}
        leader = ""
        for family in text_string_to_metric_families(self.api(index).get("/metrics").text):
            for sample in family.samples:
                if sample.name == "kafka_connect_worker_rebalance_leader_name":
                    leader = sample.labels.get("leader_name", "")
                elif sample.name.startswith("kafka_connect_worker_rebalance_"):
                    values[sample.name] = sample.value
        if values.get("kafka_connect_worker_rebalance_rebalancing") != 0:
            return None, leader
        return values.get("kafka_connect_worker_rebalance_epoch"), leader

    def stop_one_by_one(self) -> None:
        """Stop every worker gracefully, each once the others have settled on the generation that followed
        the last stop. Tansu: a LeaveGroup that reaches it while the leaving member's JoinGroup is pending
        can leave the group led by a member it has already removed, and no worker can join it again
        (reproduced with bare kafka-python members); Apache Kafka has no such state. Stopping all three at
        once, or the next before the others have rejoined, sends exactly that LeaveGroup."""
        for index, worker in enumerate(self.workers):
            others = range(index + 1, len(self.workers))
            before = {i: -1.0 if (e := self.rebalance_epoch(i)) is None else e for i in others}  # 0 is a generation
            worker.stop()

            def settled() -> bool:
                epochs = [self.rebalance_epoch(i) for i in others]
                return all(e is not None and e > before[i] for i, e in zip(others, epochs)) and len(set(epochs)) <= 1

            if others:
                wait_for(settled, 60, 0.1, f"workers {list(others)} settled after worker {index} stopped")

    def logs(self) -> str:
        return "\n\n".join(f"--- worker {i} ({w.url})\n{w.log_tail(40)}" for i, w in enumerate(self.workers))

    def _close_clients(self) -> None:
        for client in self.clients.values():
            client.close()
        self.clients.clear()

    def stop(self) -> None:
        """Stop every worker gracefully, all at once: a cluster is stopped for good (each has a group and
        topics of its own), so nothing waits for the rest to rebalance in between, as stopping them in turn
        did (a rebalance, about session.timeout.ms/2 on Tansu, per worker). A test that starts the same group
        again stops it with `stop_one_by_one`."""
        self._close_clients()
        run_side_by_side([worker.stop for worker in self.workers])


@contextmanager
def running_cluster(root: Path, bootstrap_servers: str, size: int, **extra: Any) -> Iterator[Cluster]:
    """A started cluster, stopped on the way out (module fixtures share one)."""
    cluster = Cluster(root, bootstrap_servers, size, **extra)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def start_together(workers: list[WorkerProcess]) -> None:
    """Launch every worker at the same instant (a barrier opens for all at once); raise the first failure."""
    barrier = threading.Barrier(max(1, len(workers)))

    def start(worker: WorkerProcess) -> Callable[[], None]:
        def call() -> None:
            barrier.wait()
            worker.start()

        return call

    run_side_by_side([start(w) for w in workers])
