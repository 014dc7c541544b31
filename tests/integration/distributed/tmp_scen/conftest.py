"""Fixtures for the black-box scenarios of the contract's section 4: one real standalone worker per module."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess

from .helpers import Api, Kafka

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """A standalone worker shared by a module; tests isolate themselves with unique connector names."""
    from tests.integration.distributed.conftest import Cluster
    cluster = Cluster(tmp_path_factory.mktemp("cluster"), bootstrap_servers, 2)
    cluster.start()
    try:
        yield cluster.workers[1]  # a follower: leader-only requests are forwarded
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def api(worker: WorkerProcess) -> Iterator[Api]:
    client = Api(worker.url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def kafka(bootstrap_servers: str) -> Kafka:
    return Kafka(bootstrap_servers)


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    """A connector name unique to this test (readable in worker logs)."""
    return unique(request.node.name.split("[")[0].replace("test_", "")[:24])


@pytest.fixture
def out_file(tmp_path: Path) -> Path:
    return tmp_path / "sink.jsonl"
