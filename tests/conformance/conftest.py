"""Session fixtures for the conformance suite: one oracle and one of our workers on one broker.

CONFORMANCE_TARGETS selects who answers: `both` (default; live comparison), `oracle` (the reference
alone, compared with the golden recording), `ours` (our runtime alone, compared with the golden
recording; needs no Java). CONFORMANCE_RECORD=1 (with `oracle` or `both`) rewrites the golden file
from the oracle's answers instead of comparing with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle
from tests.support.worker import WorkerProcess

from .harness import ORACLE, OURS, Conformance, Golden, Target

GOLDEN_PATH = Path(__file__).parent / "golden" / "oracle-3.9.json"
MODE = os.environ.get("CONFORMANCE_TARGETS", "both").strip().lower()
RECORDING = os.environ.get("CONFORMANCE_RECORD", "").lower() in ("1", "true", "yes")

# Worker properties both sides get, beyond the defaults of OracleProcess/WorkerProcess.
WORKER_PROPS = {"offset.flush.interval.ms": 500}


def _wanted(name: str) -> bool:
    if MODE not in ("both", ORACLE, OURS):
        raise pytest.UsageError(f"CONFORMANCE_TARGETS must be both, oracle or ours; got {MODE!r}")
    return MODE in ("both", name)


@pytest.fixture
def mode() -> str:
    """Which kind of worker answers; distributed/conftest.py runs the same tests with "distributed"."""
    return "standalone"


@pytest.fixture(scope="session")
def golden() -> Iterator[Golden]:
    store = Golden(GOLDEN_PATH)
    yield store
    if RECORDING:
        store.save()


@pytest.fixture(scope="session")
def oracle_target(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target | None]:
    if not _wanted(ORACLE):
        yield None
        return
    tool = require_oracle()
    workdir = tmp_path_factory.mktemp("oracle")
    oracle = OracleProcess(
        workdir, bootstrap_servers, props=WORKER_PROPS, tool=tool, java_options=FAST_START_JAVA
    ).start()
    datadir = workdir / "data"
    datadir.mkdir()
    try:
        with httpx.Client(base_url=oracle.url, timeout=60) as client:
            yield Target(ORACLE, oracle.url, datadir, client, lambda: oracle.log_tail(40))
    finally:
        oracle.stop()


@pytest.fixture(scope="session")
def ours_target(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target | None]:
    if not _wanted(OURS):
        yield None
        return
    workdir = tmp_path_factory.mktemp("ours")
    worker = WorkerProcess(workdir, bootstrap_servers, props=WORKER_PROPS).start()
    datadir = workdir / "data"
    datadir.mkdir()
    try:
        with httpx.Client(base_url=worker.url, timeout=60) as client:
            yield Target(OURS, worker.url, datadir, client, lambda: worker.log_tail(40))
    finally:
        worker.stop()


@pytest.fixture
def cf(
    request: pytest.FixtureRequest,
    oracle_target: Target | None,
    ours_target: Target | None,
    golden: Golden | None,
    bootstrap_servers: str,
    mode: str,
) -> Iterator[Conformance]:
    """A Conformance session for one test; fails the test (at teardown) with every difference seen."""
    targets = [t for t in (oracle_target, ours_target) if t is not None]
    conformance = Conformance(
        request.node.name,
        targets,
        golden,
        recording=RECORDING,
        bootstrap_servers=bootstrap_servers,
        settle=mode == "distributed",
    )
    yield conformance
    if RECORDING and oracle_target is not None and golden is not None:
        golden.record(request.node.name, conformance.transcript(ORACLE))
    if conformance.diffs:
        pytest.fail(conformance.report(), pytrace=False)
