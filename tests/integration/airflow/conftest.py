"""Real Airflow for the DAG files: a throwaway AIRFLOW_HOME with a sqlite metadata DB, `dag.test()` runs
in child processes (so this pytest process's Airflow config is never touched), Connect workers as real
processes (tests/support/worker.py) on the Tansu broker."""

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

REPO = Path(__file__).resolve().parents[3]
RUNNER = Path(__file__).with_name("run_dag.py")


class AirflowHome:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dags = root / "dags"
        self.dags.mkdir(parents=True, exist_ok=True)
        for dag_file in ("connector_migration.py", "restart_failed_connectors.py"):
            (self.dags / dag_file).symlink_to(REPO / "dags" / dag_file)
        self.env = {
            **os.environ,
            "AIRFLOW_HOME": str(root),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{root / 'airflow.db'}",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        }

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
        env = dict(self.env)
        for conn_id, url in connections.items():
            env[f"AIRFLOW_CONN_{conn_id.upper()}"] = json.dumps({"conn_type": "kafka_connect", "host": url})
        started = time.monotonic()
        out = self.root / f"result-{dag_file}-{os.urandom(4).hex()}.json"
        proc = subprocess.run(
            [sys.executable, str(RUNNER), str(self.dags / dag_file), json.dumps(conf), str(out)],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if not out.exists():
            raise AssertionError(
                f"dag.test() crashed (exit {proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
            )
        result = json.loads(out.read_text())
        result["log"] = proc.stdout[-20000:] + proc.stderr[-20000:]
        result["seconds"] = round(time.monotonic() - started, 1)  # reported, never asserted
        print(f"dag.test({dag_file}) took {result['seconds']}s: {result['state']}")
        return result


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory) -> Iterator[AirflowHome]:
    try:
        import airflow  # noqa: F401
    except ImportError:
        require(False, "Apache Airflow")
    home = AirflowHome(tmp_path_factory.mktemp("airflow_home"))
    home.migrate_db()
    yield home
