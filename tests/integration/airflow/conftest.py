"""Real Airflow for the DAG files: a throwaway AIRFLOW_HOME with a sqlite metadata DB, `dag.test()` runs
in a child process that serves the session's runs one after another (so this pytest process's Airflow
config is never touched, and Airflow starts once), Connect workers as real processes
(tests/support/worker.py) on the Tansu broker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import require
from tests.support.worker import wait_for

REPO = Path(__file__).resolve().parents[3]
RUNNER = Path(__file__).with_name("run_dag.py")
WARM_UP_DAG = "warm_up_dag.py"  # the runner's first run


class AirflowHome:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dags = root / "dags"
        self.dags.mkdir(parents=True, exist_ok=True)
        for dag_file in ("connector_migration.py", "restart_failed_connectors.py"):
            (self.dags / dag_file).symlink_to(REPO / "dags" / dag_file)
        (self.dags / WARM_UP_DAG).symlink_to(RUNNER.with_name(WARM_UP_DAG))
        self.env = {
            **os.environ,
            "AIRFLOW_HOME": str(root),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{root / 'airflow.db'}",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        }
        self.runner_log = root / "run_dag.log"
        self.runner_log.touch()
        self._runner: subprocess.Popen[str] | None = None
        self._runner_env: dict[str, str] = {}

    def migrate_db(self) -> None:
        subprocess.run(
            [sys.executable, "-m", "airflow", "db", "migrate"],
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=300,
        )

    def run_dag(
        self, dag_file: str, conf: dict[str, Any], connections: dict[str, str], timeout: float = 300
    ) -> dict[str, Any]:
        """dag.test() the DAG with `conf`; `connections` maps conn_id -> REST URL of a worker."""
        conns = {name: value for name, value in self.env.items() if name.startswith("AIRFLOW_CONN_")}
        for conn_id, url in connections.items():
            conns[f"AIRFLOW_CONN_{conn_id.upper()}"] = json.dumps({"conn_type": "kafka_connect", "host": url})
        runner = self._runner_for(self._runner_env_wanted())
        started = time.monotonic()
        out = self.root / f"result-{dag_file}-{os.urandom(4).hex()}.json"
        log_from = self.runner_log.stat().st_size
        request = {"dag_file": str(self.dags / dag_file), "conf": conf, "out": str(out), "connections": conns}
        assert runner.stdin is not None
        runner.stdin.write(json.dumps(request) + "\n")
        runner.stdin.flush()
        try:
            wait_for(lambda: out.exists() or runner.poll() is not None, timeout, 0.2, f"the result of {dag_file}")
        except AssertionError:
            pass  # a hung runner: reported below with its log, as a dead one is
        log = self.runner_log.read_bytes()[log_from:].decode(errors="replace")
        if not out.exists():
            self.close()  # a hung or dead runner: the next run starts a new one
            raise AssertionError(f"dag.test() crashed or timed out (exit {runner.returncode}):\n{log[-12000:]}")
        result = json.loads(out.read_text())
        result["log"] = log[-40000:]
        result["seconds"] = round(time.monotonic() - started, 1)  # reported, never asserted
        print(f"dag.test({dag_file}) took {result['seconds']}s: {result['state']}")
        return result

    def start_runner(self) -> None:
        self._runner_for(self._runner_env_wanted())

    def _runner_env_wanted(self) -> dict[str, str]:
        """The runner's environment: `env` but the connections, which each request brings."""
        return {name: value for name, value in self.env.items() if not name.startswith("AIRFLOW_CONN_")}

    def _runner_for(self, env: dict[str, str]) -> subprocess.Popen[str]:
        """The process that runs the DAGs (run_dag.py), started with `env` (a new one when that changed)."""
        if self._runner is not None and (self._runner.poll() is not None or self._runner_env != env):
            self.close()
        if self._runner is None:
            with open(self.runner_log, "ab") as log:
                self._runner = subprocess.Popen(
                    [sys.executable, str(RUNNER), str(self.dags / WARM_UP_DAG)],
                    env=env,
                    cwd=REPO,
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            self._runner_env = env
        return self._runner

    def close(self) -> None:
        if self._runner is None:
            return
        if self._runner.poll() is None:
            self._runner.kill()
        self._runner.wait()
        assert self._runner.stdin is not None
        self._runner.stdin.close()
        self._runner = None


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory) -> Iterator[AirflowHome]:
    try:
        import airflow  # noqa: F401
    except ImportError:
        require(False, "Apache Airflow")
    home = AirflowHome(tmp_path_factory.mktemp("airflow_home"))
    home.migrate_db()
    home.start_runner()  # it warms up while the first test prepares its run
    try:
        yield home
    finally:
        home.close()
