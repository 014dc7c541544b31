"""Fixtures for the black-box scenarios of the contract's section 4: one real standalone worker per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess

from .helpers import Api, Kafka

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """A standalone worker shared by a module; tests isolate themselves with unique connector names."""
    proc = WorkerProcess(tmp_path_factory.mktemp("worker"), bootstrap_servers)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


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


@pytest.fixture
def mode() -> str:
    """Which worker the scenarios run against; the distributed suite reuses these tests with "distributed"."""
    return "standalone"
