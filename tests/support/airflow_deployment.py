"""A real Airflow 3 deployment on loopback, for tests: `airflow api-server`, `scheduler`, `dag-processor` and
`triggerer` as separate processes, LocalExecutor, the metadata database on PostgreSQL (tests/support/
postgres.py), Airflow's simple auth manager with one admin user, driven through Airflow's REST API; the
OpenLineage provider writes the tasks' lineage events to a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any

import httpx
import psutil

from tests.support.worker import wait_for

REPO = Path(__file__).resolve().parents[2]
COMPONENTS = ("scheduler", "dag-processor", "triggerer")
# The line each component logs on SIGTERM once its work is over and only its exit is left: the api-server's
# took 6 s (finalizing its interpreter), the triggerer's up to 10 s (its trigger runner's escalation delay),
# the dag-processor's and the scheduler's 2-3 s (atexit joins). The deployment is thrown away with its
# database, so `stop()` kills a component's process tree at its line.
DONE_LINES = {
    "scheduler": "Exited execute loop",  # after the LocalExecutor's running tasks finished
    "dag-processor": "Exiting gracefully upon receiving signal",
    "triggerer": "Waiting for triggers to clean up",  # its main loop ended
    "api-server": "Finished server process",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AirflowDeployment:
    def __init__(
        self,
        root: Path,
        database_url: str,
        dag_files: list[str],
        env: dict[str, str],
        users: dict[str, str] | None = None,
    ) -> None:
        """`users`: more users of the simple auth manager than `admin`, name -> role (viewer, user, op, admin)."""
        self.root = root
        self.dags = root / "dags"
        self.dags.mkdir(parents=True, exist_ok=True)
        for dag_file in dag_files:
            (self.dags / dag_file).symlink_to(REPO / "dags" / dag_file)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.roles = {"admin": "admin", **(users or {})}
        self.passwords = {user: secrets.token_urlsafe(12) for user in self.roles}
        # OpenLineage events of every task, through the OpenLineage provider's file transport (one per line)
        self.lineage_file = root / "openlineage.jsonl"
        passwords = root / "passwords.json"
        passwords.write_text(json.dumps(self.passwords))
        self.env = {
            **os.environ,
            "AIRFLOW_HOME": str(root),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database_url,
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{u}:{r}" for u, r in self.roles.items()),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
            "AIRFLOW__API__BASE_URL": self.url,
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__WORKERS": "1",
            # the log servers of the scheduler's executor and of the triggerer (defaults 8793, 8794)
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(_free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(_free_port()),
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
            "AIRFLOW__OPERATORS__DEFAULT_DEFERRABLE": "True",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
            "AIRFLOW__TRIGGERER__JOB_HEARTBEAT_SEC": "1",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": str(self.lineage_file), "append": True}
            ),
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            **env,
        }
        self.processes: dict[str, subprocess.Popen] = {}
        self._tokens: dict[str, str] = {}
        # one client for every request (the waits poll): each httpx.get makes a client, and loading its TLS
        # trust store costs about 0.1 s of CPU. It keeps no cookies: each request is the given user's alone.
        self._http = httpx.Client(timeout=30, cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])))
        self._migrated = False
        self._stopping: dict[str, float] = {}  # component -> when it was sent SIGTERM

    # ---- lifecycle ------------------------------------------------------------------------------------

    def migrate_db(self) -> None:
        """Create the metadata database's schema (`start()` does it unless done): a caller may run it beside
        the other servers its tests need."""
        subprocess.run(
            [sys.executable, "-m", "airflow", "db", "migrate"],
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=600,
        )
        self._migrated = True

    def start(self) -> AirflowDeployment:
        if not self._migrated:
            self.migrate_db()
        for component in ("api-server", *COMPONENTS):
            log = open(self.log_path(component), "wb")
            args = [sys.executable, "-m", "airflow", component]
            if component == "api-server":
                args += ["--port", str(self.port), "--host", "127.0.0.1"]
            self.processes[component] = subprocess.Popen(
                args, env=self.env, cwd=self.root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for(self._healthy, 240, 0.5, "the Airflow deployment to report every component healthy")
        threading.Thread(target=self._warm_up_execution_api, name="warm-up-execution-api", daemon=True).start()
        return self

    def _warm_up_execution_api(self) -> None:
        """Make the api-server build its task execution API now, while the first test prepares. Airflow builds
        it (Cadwyn's versioned routes) on the first request to /execution/, in the event loop: 5-12 s of CPU
        during which the api-server answered nothing, so the first task of the first DAG run stood still."""
        try:
            httpx.get(f"{self.url}/execution/health", timeout=120)
        except httpx.HTTPError:
            pass  # a deployment stopped meanwhile; a real failure shows in the tests' own requests

    def log_path(self, component: str) -> Path:
        return self.root / f"{component}.log"

    def log(self, component: str) -> str:
        return self.log_path(component).read_text(errors="replace")

    def _healthy(self) -> bool:
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                raise AssertionError(f"airflow {name} exited with {proc.returncode}:\n{self.log(name)[-4000:]}")
        try:
            health = self._http.get(f"{self.url}/api/v2/monitor/health", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return False
        wanted = ("metadatabase", "scheduler", "triggerer", "dag_processor")
        return all((health.get(part) or {}).get("status") == "healthy" for part in wanted)

    def stop(self) -> None:
        """The scheduler, dag-processor and triggerer first, then the api-server once the scheduler is done:
        on SIGTERM the scheduler's LocalExecutor lets running tasks finish, and a task reports its end
        through the api-server's execution API (with the api-server gone first, a task the scheduler had just
        started retried until the scheduler was killed, 30 s later). Each component is killed once it logs
        that its work is over (DONE_LINES), or 30 s after its SIGTERM."""
        components = [name for name in self.processes if name != "api-server"]
        for name in components:
            self._terminate(name)
        if "scheduler" in self.processes:
            self._wait_done("scheduler")
        self._terminate("api-server")
        for name in [*components, "api-server"]:
            self._wait_done(name)
        self._http.close()

    def _terminate(self, name: str) -> None:
        proc = self.processes.get(name)
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            self._stopping[name] = time.monotonic()

    def _wait_done(self, name: str) -> None:
        """Until component `name` exits or logs its DONE_LINES line, then its process tree is killed (Airflow
        puts the processes it forks in process groups of their own); 30 s after its SIGTERM, anyway."""
        proc = self.processes.get(name)
        if proc is None:
            return
        left_s = self._stopping.get(name, time.monotonic()) + 30 - time.monotonic()
        with contextlib.suppress(AssertionError):  # not done in time: killed all the same
            wait_for(lambda: proc.poll() is not None or DONE_LINES[name] in self.log(name), max(0.0, left_s))
        if proc.poll() is None:  # not reaped yet: its pid is still its own
            tree: list[psutil.Process] = []
            with contextlib.suppress(psutil.Error):
                main = psutil.Process(proc.pid)
                tree = [main, *main.children(recursive=True)]
            for process in tree:
                with contextlib.suppress(psutil.Error):
                    process.kill()
            psutil.wait_procs(tree[1:], timeout=10)
        proc.wait(10)

    def __enter__(self) -> AirflowDeployment:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def fired_trigger_events(self) -> list[str]:
        """The "Trigger fired event" lines in the triggerer's own output: those of triggers that belong to no
        task (an AssetWatcher's), with the event's payload."""
        return [line for line in self.log("triggerer").splitlines() if "Trigger fired event" in line]

    # ---- REST API -------------------------------------------------------------------------------------

    def api(self, method: str, path: str, user: str = "admin", **kwargs: Any) -> httpx.Response:
        """A request to the API server as `user` (its JWT from `POST /auth/token`)."""
        if user not in self._tokens:
            response = self._http.post(
                f"{self.url}/auth/token", json={"username": user, "password": self.passwords[user]}
            )
            response.raise_for_status()
            self._tokens[user] = response.json()["access_token"]
        headers = {"Authorization": f"Bearer {self._tokens[user]}", **kwargs.pop("headers", {})}
        return self._http.request(method, f"{self.url}{path}", headers=headers, **kwargs)

    def wait_dag(self, dag_id: str, timeout_s: float = 120) -> None:
        """Until the dag-processor has parsed the DAG file and the DAG is active."""

        def parsed() -> bool:
            response = self.api("GET", f"/api/v2/dags/{dag_id}")
            return response.status_code == 200 and not response.json().get("is_paused")

        wait_for(parsed, timeout_s, 1, f"DAG {dag_id} to be parsed")

    def trigger(self, dag_id: str, conf: dict[str, Any]) -> str:
        response = self.api("POST", f"/api/v2/dags/{dag_id}/dagRuns", json={"logical_date": None, "conf": conf})
        assert response.status_code == 200, response.text
        return response.json()["dag_run_id"]

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        response = self.api("GET", f"/api/v2/dags/{dag_id}/dagRuns")
        response.raise_for_status()
        return response.json()["dag_runs"]

    def wait_run(self, dag_id: str, run_id: str, timeout_s: float = 300) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            run = self.api("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}").json()
            return run if run.get("state") in ("success", "failed") else None

        return wait_for(finished, timeout_s, 1, f"{dag_id} run {run_id} to finish")

    def task_states(self, dag_id: str, run_id: str) -> dict[str, str]:
        response = self.api("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        response.raise_for_status()
        return {ti["task_id"]: ti["state"] for ti in response.json()["task_instances"]}

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1) -> list[dict[str, Any]]:
        """The task instance's log events: the task's own lines and, after a deferral, its trigger's lines
        (the triggerer writes those to the task's log, not to its own output)."""
        response = self.api(
            "GET",
            f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/logs/{try_number}",
            params={"full_content": "true"},
        )
        response.raise_for_status()
        return [event if isinstance(event, dict) else {"event": str(event)} for event in response.json()["content"]]
