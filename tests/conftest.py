"""The whole suite's hooks: the order files run in under `pytest -n 2 --dist loadfile` (scripts/test.sh), and
the tool virtualenvs made in the background while the first tests run."""

from __future__ import annotations

import compileall
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.broker import bootstrap_servers, fresh_broker  # noqa: F401  (fixtures)
from tests.support.tool_venvs import TOOLS, build_in_background, venvs_root

# The files that take longest on 2 cores, longest first (per file, from `--durations` of whole runs). xdist
# hands files to its workers in collection order, so these start first and the short ones fill in at the end
# (longest-processing-time-first): a long file collected last would leave one worker alone for minutes. The
# ones that run tools from their own virtualenvs come a little later, so that the background build (below)
# has a head start. Keep it short and roughly right (a SHARED_SESSION group is one entry); files not listed
# run after these, in collection order.
SLOW_FILES = (
    "tests/integration/airflow/test_deployment.py",
    "tests/integration/distributed/test_worker_group.py",
    "tests/integration/dlt_sink/test_dlt_worker.py",
    "tests/conformance/distributed/",
    "tests/integration/java/test_debezium.py",  # a task-process worker, a 3-worker cluster, PostgreSQL
    "tests/integration/taps/test_airbyte_faker.py",
    "tests/integration/taps/test_singer_postgres.py",
    "tests/integration/hardening/test_faults.py",
    "tests/integration/dlt_sink/test_dlt_task.py",
    "tests/integration/spark/test_spark_connectors.py",
    "tests/integration/test_kafka_stores_compat.py",
    "tests/integration/spark/test_spark_pipeline_dag.py",
    "tests/integration/airflow/test_as_code.py",
    "tests/integration/distributed/test_oracle_cluster_compat.py",
    "tests/integration/distributed/scenarios/test_cluster.py",
    "tests/integration/airflow/test_dags.py",  # ~1 min since one process runs its DAGs (airflow/conftest.py)
    "tests/integration/test_task_processes.py",
    "tests/conformance/test_",
    "tests/integration/airflow/test_provider_install.py",
    "tests/integration/distributed/test_exactly_once_failover.py",
    "tests/integration/airflow/test_exactly_once_offsets_operators.py",
    "tests/integration/distributed/test_exactly_once_oracle_handover.py",
    "tests/integration/distributed/faults/test_rolling_restart.py",
    "tests/integration/ops/test_strimzi_dashboard.py",
    "tests/integration/distributed/scenarios/test_d_offsets.py",
    "tests/integration/distributed/test_connector_offsets_topic.py",
    "tests/integration/java/test_java_",
    "tests/integration/scenarios/test_d_offsets.py",
    "tests/integration/hardening/test_schemathesis.py",
    "tests/integration/scenarios/test_g_health_blocking.py",
    "tests/integration/distributed/scenarios/test_c_restart.py",
    "tests/integration/airflow/test_postgres_to_duckdb_dag.py",
)


# Files that share a costly session fixture run in one xdist worker, as one unit of work: the conformance
# files' reference worker (a JVM) and the distributed ones' two clusters (two JVMs, two workers), the Java
# connector files' worker with its JVM host and their reference worker, the Spark connectors' unit tests'
# SparkSession. Split over both workers, each would start its own.
SHARED_SESSION = (
    "tests/conformance/distributed/",
    "tests/conformance/test_",
    "tests/integration/java/test_java_",
    "tests/unit/connectors/spark/",
)


def _unit(path: str) -> str:
    return next((group for group in SHARED_SESSION if path.startswith(group)), path)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """--dist loadfile, with SHARED_SESSION's groups of files as units of their own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedSessionScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(super()._split_scope(nodeid))

    return SharedSessionScheduling(config, log)


REPO = Path(__file__).resolve().parents[1]
# The project's own code, which every worker process, task process, JVM host and Airflow task imports
COMPILED = ("runtime", "airflow_provider_connect", "dags")


def pytest_configure(config: pytest.Config) -> None:
    # Compile the project's modules once, before any process imports them (about 1 s). With
    # PYTHONDONTWRITEBYTECODE set (as in CI) no process writes its bytecode, and each of the suite's hundreds
    # of worker processes otherwise compiled the whole runtime as it started: about 0.6 s of CPU every time.
    # Python checks a cached file against its source's size and time, so a changed module is compiled again.
    if "PYTEST_XDIST_WORKER" not in os.environ:  # once, in the process that starts xdist's workers
        for package in COMPILED:
            compileall.compile_dir(REPO / package, quiet=1)
    config.addinivalue_line(
        "markers", "tool_venvs(*names): the tests run tools from these virtualenvs (tests/support/tool_venvs.py)"
    )
    # xdist's loadfile otherwise queues files by their number of tests, most first: the long one-test files
    # (a cluster killed cycle after cycle, a fresh Airflow install) would start last
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: index for index, path in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(_unit(item.nodeid.split("::", 1)[0]), len(rank)))  # stable


_BUILDER = pytest.StashKey[subprocess.Popen[bytes]]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start making the tool virtualenvs the collected tests use (one process does, xdist's first worker)."""
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    # in the order the tests will want them
    names = list(
        dict.fromkeys(name for item in session.items for m in item.iter_markers("tool_venvs") for name in m.args)
    )
    unknown = set(names) - set(TOOLS)
    if unknown:
        raise pytest.UsageError(
            f"pytest.mark.tool_venvs: no such environment {sorted(unknown)} (known: {sorted(TOOLS)})"
        )
    if names:
        venvs_root().mkdir(parents=True, exist_ok=True)
        session.config.stash[_BUILDER] = build_in_background(names, venvs_root() / "background-build.log")


def pytest_sessionfinish(session: pytest.Session) -> None:
    builder = session.config.stash.get(_BUILDER, None)
    if builder is None:
        return
    if session.shouldstop or session.shouldfail:
        builder.terminate()  # an interrupted or failed-fast run: a half-made environment is made again next time
    builder.wait()  # done long before in a whole run; another worker may still need what it makes
