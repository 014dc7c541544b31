"""In-process standalone herders on the shared real broker: no REST, no subprocess.

Each herder is wired exactly as runtime.bootstrap.standalone.StandaloneRuntime wires one (Plugins, StatusStore,
File/Memory stores, Worker, OffsetsManager, StandaloneHerder); teardown stops every herder made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from runtime.config_providers import ConfigResolver
from runtime.herder.standalone import StandaloneHerder
from runtime.herder.topics import MemoryTopics
from runtime.plugins import Plugins
from runtime.storage.base import StatusStore
from runtime.storage.files import FileConfigStore, FileOffsetStore, MemoryConfigStore, MemoryOffsetStore
from runtime.worker.offsets import OffsetsManager
from runtime.worker.worker import Worker
from runtime.worker_config import WorkerConfig
from tests.support.broker import unique

WORKER_ID = "herder-test:8083"
SOURCE = "SequenceSource"
SINK = "RecordingSink"
PLUGIN_FOLDER = Path(__file__).parent / "plugins"
CUSTOM = "h8_custom_connectors"  # module in PLUGIN_FOLDER, reachable through plugin.path only


@dataclass
class Harness:
    herder: StandaloneHerder
    worker: Worker
    statuses: StatusStore
    folder: Path | None


def build_herder(bootstrap: str, folder: Path | None, extra: dict[str, str] | None = None) -> Harness:
    props = {
        "bootstrap.servers": bootstrap,
        "offset.flush.interval.ms": "200",
        "task.shutdown.graceful.timeout.ms": "3000",
        "rest.request.timeout.ms": "60000",
        "consumer.session.timeout.ms": "3000",  # as tests/support/worker.py: each join on Tansu waits half
        "consumer.heartbeat.interval.ms": "500",
        "plugin.path": str(PLUGIN_FOLDER),
        **(extra or {}),
    }
    if folder is not None:
        props["offset.storage.file.filename"] = str(folder / "connect.offsets")
    config = WorkerConfig(props)
    plugins = Plugins(config.get_list("plugin.path"))
    statuses = StatusStore()
    offset_store = FileOffsetStore(config.offsets_file()) if folder is not None else MemoryOffsetStore()
    config_store = FileConfigStore(config.configs_file()) if folder is not None else MemoryConfigStore()
    topics = MemoryTopics(config)
    resolver = ConfigResolver.from_worker_config(config)  # the worker's config providers, as the CLI builds them
    worker = Worker(config, plugins, offset_store, statuses, WORKER_ID, on_topic=topics.record, resolver=resolver)
    herder = StandaloneHerder(
        config,
        plugins,
        worker,
        config_store,
        statuses,
        OffsetsManager(config, offset_store),
        topics,
        WORKER_ID,
        "test-cluster",
    )
    herder.start()
    herder.mark_ready()
    assert herder.wait_until_ready(60), "stored connectors were not restored in time"
    return Harness(herder, worker, statuses, folder)


@pytest.fixture
def make_herder(bootstrap_servers: str, tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(persistent: bool = True, folder: Path | None = None, **extra: str) -> Harness:
        harness = build_herder(bootstrap_servers, (folder or tmp_path) if persistent else None, extra)
        made.append(harness)
        return harness

    yield make
    for harness in reversed(made):
        harness.herder.stop()


@pytest.fixture
def harness(make_herder: Callable[..., Harness]) -> Harness:
    return make_herder()


def source_config(name: str, tasks: int = 2, **extra: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": SOURCE,
        "tasks.max": str(tasks),
        "topic": f"{name}-topic",
        "messages.per.task": "0",
        **extra,
    }


def sink_config(name: str, output: Path, tasks: int = 2, **extra: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": SINK,
        "tasks.max": str(tasks),
        "topics": f"{name}-in",
        "output.file": str(output),
        **extra,
    }


def states(herder: StandaloneHerder, name: str) -> tuple[str, list[str]]:
    """(connector state, task states by id) from the status body, as a REST client sees it."""
    body = herder.connector_status(name)
    ids = [t["id"] for t in body["tasks"]]
    assert ids == sorted(ids)
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def settle(herder: StandaloneHerder, name: str, expected: tuple[str, list[str]], timeout: float = 10.0) -> None:
    """Wait until the status shows `expected`, for a change a connector's own thread makes after the call returned."""
    wait_for(lambda: states(herder, name) == expected, timeout, f"{name} to be {expected}")


def wait_for(check: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)  # the poll interval: what is waited on is `check`
    raise AssertionError(f"timed out waiting for {what}; last value {last!r}")


def new_name(prefix: str = "c") -> str:
    return unique(prefix)
