"""Virtualenvs of their own for the Singer taps and Airbyte sources the tests run.

A tap pins its own libraries (meltanolabs-tap-postgres pins SQLAlchemy; airbyte-source-faker an older
airbyte-cdk), which need not agree with the test environment's (Airflow, dlt, ...). Users run taps the same
way: a tap's own virtualenv, its executable named by path in the connector's config. Each environment is
made once per requirement set and kept under $CONNECT_TEST_VENVS (default ~/.cache/airflow-provider-connect/
venvs), so only the first run pays for the install; a lock keeps parallel test processes from racing.

A fresh machine (CI) pays for the installs in every run, a minute or two each, mostly waiting on pip: test
files that need an environment say so with `pytest.mark.tool_venvs("name", ...)`, and once the session has
collected them `build_in_background` starts making them in a process of its own, while the first tests run.
A test that gets there first waits on the lock for that build instead of starting its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

TAP_POSTGRES = ["meltanolabs-tap-postgres==0.10.0"]
SOURCE_FAKER = ["airbyte-source-faker==7.2.1"]
# Apache Airflow alone, the test environment's version: the provider's install test copies it and adds the
# provider to the copy (tests/integration/airflow/test_provider_install.py), never to this one
try:
    AIRFLOW_ALONE = [f"apache-airflow=={version('apache-airflow')}"]
except PackageNotFoundError:
    AIRFLOW_ALONE = []
# every environment by name, for `pytest.mark.tool_venvs` and the background build
TOOLS = {"tap-postgres": TAP_POSTGRES, "source-faker": SOURCE_FAKER, "airflow-alone": AIRFLOW_ALONE}


def venvs_root() -> Path:
    default = Path.home() / ".cache" / "airflow-provider-connect" / "venvs"
    return Path(os.environ.get("CONNECT_TEST_VENVS", default))


def tool_venv(name: str, requirements: list[str], timeout_s: float = 900) -> Path:
    """The root of a virtualenv with `requirements` installed (made now unless already there)."""
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:12]
    root = venvs_root()
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}-{key}"
    marker = path / ".complete"
    with open(root / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            return path
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
        result = subprocess.run(
            [str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if result.returncode != 0:
            raise RuntimeError(f"pip install {' '.join(requirements)} failed:\n{result.stderr[-3000:]}")
        marker.touch()
    return path


def build_in_background(names: list[str], log: Path) -> subprocess.Popen[bytes]:
    """Start making the named environments in a child process (`python -m tests.support.tool_venvs ...`);
    a failure there only shows in `log`: the test that needs the environment then makes it and fails."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.support.tool_venvs", *names],
            cwd=Path(__file__).resolve().parents[2],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


if __name__ == "__main__":
    for tool in sys.argv[1:]:
        if TOOLS[tool]:  # none: what it would hold is missing here, and its test says so
            print(tool_venv(tool, TOOLS[tool]), flush=True)
