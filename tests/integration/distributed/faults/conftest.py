"""Three-worker clusters for the fault tests, built by the test (which broker, how they start); their
logs are printed when the test fails, and they are stopped afterwards."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.cluster import Cluster

pytestmark = pytest.mark.integration

WORKERS = 3


@pytest.fixture
def new_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Cluster]]:
    """`new_cluster(bootstrap, lowest_id_first=False)`: an unstarted cluster of three workers.

    With `lowest_id_first`, worker 0 (the first started, so the leader) also has the lowest worker id:
    the assignor hands a new unit to the least loaded worker with the lowest id, which lets a test
    place a connector on the leader."""
    made: list[Cluster] = []

    def make(bootstrap: str, lowest_id_first: bool = False) -> Cluster:
        cluster = Cluster(tmp_path / f"cluster{len(made)}", bootstrap, WORKERS, leader_first=lowest_id_first)
        if lowest_id_first:
            cluster.workers.sort(key=lambda w: f"127.0.0.1:{w.port}")
        made.append(cluster)
        return cluster

    yield make
    report = getattr(request.node, "rep_call", None)
    for cluster in made:
        if report is not None and report.failed:
            print(cluster.logs())
        cluster.stop()
