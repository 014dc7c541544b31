"""Property-based fuzzing of a real standalone worker from its own /openapi.json (schemathesis): no
request may get a 5xx answer, none may break the connection, and the worker must still be healthy and
consistent afterwards.

Two bounded runs: one where schemathesis invents everything (names included, so mostly 404s and 400s),
and one pinned to connectors and plugins that exist, so generated bodies reach the herder's real logic.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.support.env import require
from tests.support.worker import WorkerProcess

from .conftest import SINK, SOURCE, create_connector

pytestmark = pytest.mark.integration

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
# Each run: schemathesis's coverage phase over every operation (30), then MAX_EXAMPLES generated cases per
# operation (about 700 requests in all, 20 s here). Bounded by the count, not by --max-time: under a time
# budget the fuzzing phase keeps drawing cases until the budget is spent, so each run took the whole budget
# and what it covered depended on the machine's speed.
MAX_EXAMPLES = 12
RUN_TIMEOUT_S = 135


def _schemathesis_available() -> bool:
    try:
        import schemathesis  # noqa: F401
    except ImportError:
        return False
    return SCHEMATHESIS.exists() or shutil.which("schemathesis") is not None


def run_schemathesis(
    url: str, workdir: Path, parameters: dict[str, str] | None = None, seed: int = 1
) -> subprocess.CompletedProcess[str]:
    """One `schemathesis run` with only the not_a_server_error check; returns the finished process."""
    args = [str(SCHEMATHESIS if SCHEMATHESIS.exists() else shutil.which("schemathesis"))]
    if parameters:
        config = workdir / f"schemathesis-{seed}.toml"
        config.write_text(
            "[parameters]\n" + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in parameters.items())
        )
        args += ["--config-file", str(config)]
    args += [
        "run",
        f"{url}/openapi.json",
        "--checks",
        "not_a_server_error",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--workers",
        "1",  # schemathesis 4.32 can crash internally (a linecache KeyError) with 2
        "--request-timeout",
        "30",
        "--seed",
        str(seed),
        "--no-shrink",
        "--no-color",
        "--warnings",
        "off",
    ]
    return subprocess.run(args, cwd=workdir, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)


def _failures(output: str) -> str:
    start = output.find("FAILURES")
    return output[start : start + 6000] if start >= 0 else output[-6000:]


def _assert_worker_fine(worker: WorkerProcess) -> None:
    assert worker.process is not None and worker.process.poll() is None, f"worker died:\n{worker.log_tail()}"
    with worker.client as client:
        assert client.get("/").status_code == 200
        assert client.get("/health").status_code == 200, worker.log_tail()
        names = client.get("/connectors").json()
        expanded = client.get("/connectors", params={"expand": "status"}).json()
        # every listed connector has a status, and no status exists for an unlisted one
        assert set(expanded) <= set(names)
        for name in names:  # whatever the fuzzer managed to create is reachable by its (encoded) name
            path = "/connectors/" + quote(name, safe="")
            assert client.get(path).status_code == 200, name
    log = worker.log_path.read_text(errors="replace")
    assert "Unexpected error answering a request" not in log, "an unexpected exception reached the REST layer"


def test_fuzzing_invented_requests_gets_no_server_error(bootstrap_servers: str, tmp_path: Path) -> None:
    require(_schemathesis_available(), "schemathesis (pip install schemathesis)")
    worker = WorkerProcess(tmp_path / "worker", bootstrap_servers).start()
    try:
        result = run_schemathesis(worker.url, tmp_path, seed=1)
        assert result.returncode == 0, f"schemathesis found failures:\n{_failures(result.stdout + result.stderr)}"
        assert "generated" in result.stdout  # it did run test cases
        _assert_worker_fine(worker)
    finally:
        worker.stop()


def test_fuzzing_existing_connectors_gets_no_server_error(bootstrap_servers: str, tmp_path: Path) -> None:
    require(_schemathesis_available(), "schemathesis (pip install schemathesis)")
    worker = WorkerProcess(tmp_path / "worker", bootstrap_servers).start()
    try:
        with worker.client as client:
            create_connector(
                client,
                "fuzz-source",
                {"connector.class": SOURCE, "topic": "fuzz-topic", "tasks.max": "2", "throughput": "10"},
            )
            create_connector(
                client, "fuzz-stopped", {"connector.class": SOURCE, "topic": "fuzz-topic"}, initial_state="STOPPED"
            )
            create_connector(
                client,
                "fuzz-sink",
                {"connector.class": SINK, "topics": "fuzz-topic", "output.file": str(tmp_path / "out.jsonl")},
            )
        pinned = {"path.connector": "fuzz-source", "path.plugin": "SequenceSourceConnector", "path.logger": "root"}
        first = run_schemathesis(worker.url, tmp_path, pinned, seed=2)
        assert first.returncode == 0, f"schemathesis found failures:\n{_failures(first.stdout + first.stderr)}"
        second = run_schemathesis(
            worker.url,
            tmp_path,
            {**pinned, "path.connector": "fuzz-stopped", "path.plugin": "RecordingSinkConnector"},
            seed=3,
        )
        assert second.returncode == 0, f"schemathesis found failures:\n{_failures(second.stdout + second.stderr)}"
        _assert_worker_fine(worker)
        # the untouched sink is still there and running: fuzzing one name did not disturb another
        with httpx.Client(base_url=worker.url, timeout=30) as client:
            status = client.get("/connectors/fuzz-sink/status")
            assert status.status_code == 200 and status.json()["connector"]["state"] == "RUNNING"
    finally:
        worker.stop()
