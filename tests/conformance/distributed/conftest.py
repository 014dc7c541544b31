"""The conformance suite against two CLUSTERS: the reference's distributed mode and ours.

The test modules here re-export the standalone suite's tests (`from tests.conformance.test_x import *`);
these fixtures replace its targets. Each side is its own Connect group (group.id and internal topics) on the
session's broker: two reference workers (`kafka-connect-oracle distributed`, started side by side) and two of
ours (`tests.support.cluster.Cluster`: worker 0 starts first and leads). Every request goes to a FOLLOWER, so
leader-only work is forwarded and reads come from a worker that learned everything from the internal topics.

Only a live comparison is meaningful here: the golden file records the standalone reference. With
CONFORMANCE_TARGETS=ours our cluster alone is checked against the reference's status codes only (the
`status=` of each step), bodies are not compared. Tests whose expectations differ by mode read the `mode`
fixture ("distributed" here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.broker import unique
from tests.support.cluster import Cluster, group_topics
from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle
from tests.support.process import run_side_by_side
from tests.support.worker import wait_for

from ..conftest import RECORDING, WORKER_PROPS, _wanted
from ..harness import ORACLE, OURS, Target

ORACLE_WORKERS = 2
OUR_WORKERS = 2
# Both clusters get the same settings; the reference gets the same internal-topic layout as ours.
# Tansu answers a JoinGroup only after session.timeout.ms / 2 and the reference rebalances about twice per
# connector create/delete, so its side sets the pace (~2 s per rebalance at 4000 ms; 6000 ms took about 20%
# longer in all). 2000 ms ran faster still but wedged the reference's sink consumer group in a trial run.
CLUSTER_PROPS: dict[str, Any] = {
    **WORKER_PROPS,
    "scheduled.rebalance.max.delay.ms": 0,
    "session.timeout.ms": 4000,
    "heartbeat.interval.ms": 1000,
    "offset.flush.interval.ms": 500,
    "offset.storage.partitions": 3,
    "status.storage.partitions": 3,
    # the group protocol our workers choose (group.py offers "compatible" first): under it the reference checks
    # no KIP-507 signatures on internal requests either (the sessioned default would answer them 400)
    "connect.protocol": "compatible",
}


def group_props() -> dict[str, Any]:
    return {**CLUSTER_PROPS, **group_topics(unique("cf-group"))}


class OracleCluster:
    """Reference workers of one group, started side by side; `follower()` is one that does not lead."""

    def __init__(self, root: Path, bootstrap_servers: str, size: int, tool: Path) -> None:
        props = group_props()
        self.workers = [
            OracleProcess(
                root / f"oracle{i}",
                bootstrap_servers,
                props=props,
                tool=tool,
                mode="distributed",
                java_options=FAST_START_JAVA,
            )
            for i in range(size)
        ]

    def start(self) -> OracleCluster:
        run_side_by_side([w.start for w in self.workers])
        return self

    def follower(self) -> OracleProcess:
        """A worker that is not the leader, once every worker's latest assignment names the same leader."""

        def agreed() -> str | None:
            leaders = {w.leader_url() for w in self.workers}
            return leaders.pop() if len(leaders) == 1 and None not in leaders else None

        leader = wait_for(agreed, 60, 0.2, f"the reference workers agreeing on a leader\n{self.logs()}")
        return next(w for w in self.workers if w.url != leader)

    def logs(self) -> str:
        return "\n\n".join(f"--- reference worker {w.url}\n{w.log_tail(30)}" for w in self.workers)

    def stop(self) -> None:
        run_side_by_side([w.stop for w in self.workers])


@pytest.fixture
def mode() -> str:
    return "distributed"


@pytest.fixture(scope="session")
def golden() -> None:
    """No golden answers in distributed mode: the recording is the standalone reference's."""
    if RECORDING:
        pytest.skip("CONFORMANCE_RECORD records the standalone reference only")


@pytest.fixture(scope="session")
def clusters(
    bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[OracleCluster | None, Cluster | None]]:
    """Both clusters, started at the same time (JVM start-up dominates)."""
    tool = require_oracle() if _wanted(ORACLE) else None
    oracle = (
        OracleCluster(tmp_path_factory.mktemp("oracle-cluster"), bootstrap_servers, ORACLE_WORKERS, tool)
        if tool is not None
        else None
    )
    ours = (
        Cluster(tmp_path_factory.mktemp("our-cluster"), bootstrap_servers, OUR_WORKERS, **group_props())
        if _wanted(OURS)
        else None
    )
    try:
        run_side_by_side([c.start for c in (oracle, ours) if c is not None])
        yield oracle, ours
    finally:
        run_side_by_side([c.stop for c in (oracle, ours) if c is not None])


def _target(name: str, url: str, datadir: Path, logs: Callable[[], str]) -> Iterator[Target]:
    datadir.mkdir(parents=True, exist_ok=True)
    with httpx.Client(base_url=url, timeout=60) as client:
        yield Target(name, url, datadir, client, logs)


@pytest.fixture(scope="session")
def oracle_target(
    clusters: tuple[OracleCluster | None, Cluster | None], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target | None]:
    oracle = clusters[0]
    if oracle is None:
        yield None
        return
    yield from _target(ORACLE, oracle.follower().url, tmp_path_factory.mktemp("oracle-data"), oracle.logs)


@pytest.fixture(scope="session")
def ours_target(
    clusters: tuple[OracleCluster | None, Cluster | None], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target | None]:
    ours = clusters[1]
    if ours is None:
        yield None
        return
    # the longest-running worker leads our group: Cluster starts worker 0 first
    yield from _target(OURS, ours.workers[1].url, tmp_path_factory.mktemp("ours-data"), ours.logs)
