"""Virtualenvs of their own for the Singer taps and Airbyte sources the tests run.

A tap pins its own libraries (meltanolabs-tap-postgres pins SQLAlchemy; airbyte-source-faker an older
airbyte-cdk), which need not agree with the test environment's (Airflow, dlt, ...). Users run taps the same
way: a tap's own virtualenv, its executable named by path in the connector's config. Each environment is
made once per requirement set and kept under $CONNECT_TEST_VENVS (default ~/.cache/airflow-provider-connect/
venvs), so only the first run pays for the install; a lock keeps parallel test processes from racing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

TAP_POSTGRES = ["meltanolabs-tap-postgres==0.10.0"]
SOURCE_FAKER = ["airbyte-source-faker==7.2.1"]


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
