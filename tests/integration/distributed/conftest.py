"""A three-worker distributed cluster on the test broker: its own group and internal topics per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import Cluster

pytestmark = pytest.mark.integration


@pytest.fixture
def cluster(bootstrap_servers: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    group = Cluster(tmp_path, bootstrap_servers, 3)
    try:
        group.start()
        yield group
    finally:
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            print(group.logs())
        group.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
