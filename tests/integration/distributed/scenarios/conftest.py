"""The section-4 scenarios against a cluster of three distributed workers (one cluster per module).

The scenario modules here reuse the standalone suite's tests (`tests/integration/scenarios`) with these
fixtures in place of a standalone worker. Every request goes through `RoutingApi`, which sends it to a
worker that runs no part of the connector under test, a follower when one qualifies: leader-only
operations are then forwarded (contract 1.9), restarts reach the owners through the config topic, and
reads come from a worker that learned everything from the internal topics.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.scenarios.conftest import kafka, name, out_file  # noqa: F401  (fixtures)
from tests.integration.scenarios.helpers import Api
from tests.support.cluster import Cluster, running_cluster

pytestmark = pytest.mark.integration

LEADER = 0  # the longest-running live worker leads the group; the cluster starts worker 0 first
_CONNECTOR_PATH = re.compile(r"^/connectors/([^/?]+)")


class RoutingApi(Api):
    """The scenarios' REST client for a cluster: each request goes to a worker owning nothing of the
    connector it names (preferring followers), so the cluster, not the receiving worker, does the work."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster.workers[LEADER].url)
        self.cluster = cluster
        self.http.close()
        self.clients = [httpx.Client(base_url=w.url, timeout=30.0) for w in cluster.workers]
        self.sent_to: list[tuple[str, str, int]] = []  # (method, path, worker index), for debugging
        self.chosen: dict[str, int] = {}  # connector -> the worker its requests go to

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def owners(self, connector: str) -> set[int]:
        response = self.clients[LEADER].get(f"/connectors/{connector}/status")
        if response.status_code != 200:
            return set()
        body = response.json()
        worker_ids = [body["connector"].get("worker_id"), *(t.get("worker_id") for t in body["tasks"])]
        return {i for i in range(len(self.cluster.workers)) if self.cluster.worker_id(i) in worker_ids}

    def target(self, path: str, body: Any = None, method: str = "GET") -> int:
        followers = [i for i in range(len(self.cluster.workers)) if i != LEADER]
        match = _CONNECTOR_PATH.match(path)
        connector = (
            match.group(1) if match else body.get("name") if path == "/connectors" and isinstance(body, dict) else None
        )
        if method == "GET" and isinstance(connector, str) and connector in self.chosen:
            # a read goes where the last change went, even if that worker has since been given part of the
            # connector: another worker's status view may be a status-topic fetch behind (eventual, as in
            # the reference), and the scenarios read back what they just changed
            return self.chosen[connector]
        if not isinstance(connector, str) or match is None:
            index = followers[-1]
        else:
            owners = self.owners(connector)
            if self.chosen.get(connector) is not None and self.chosen[connector] not in owners:
                return self.chosen[connector]
            idle = [i for i in followers if i not in owners] or ([LEADER] if LEADER not in owners else [])
            index = (idle or followers)[0]
        if isinstance(connector, str):
            # stay on one worker per connector while it owns none of it: what a request changed is then
            # read back from the worker that answered it
            self.chosen[connector] = index
        return index

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        index = self.target(path, kwargs.get("json"), method.upper())
        self.sent_to.append((method, path, index))
        return self.clients[index].request(method, path, **kwargs)


class ClusterLogs:
    """Stands in for the standalone suite's `worker` fixture where tests read the log."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(w.log_tail(lines) for w in self.cluster.workers)


@pytest.fixture(scope="module")
def cluster(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), bootstrap_servers, 3) as group:
        yield group


@pytest.fixture(scope="module")
def worker(cluster: Cluster) -> ClusterLogs:
    return ClusterLogs(cluster)


@pytest.fixture(scope="module")
def api(cluster: Cluster) -> Iterator[RoutingApi]:
    client = RoutingApi(cluster)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def mode() -> str:
    return "distributed"


@pytest.fixture(autouse=True)
def _show_routing_on_failure(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[None]:
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(cluster.logs())
