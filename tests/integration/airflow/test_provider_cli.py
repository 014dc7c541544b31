"""`airflow providers ...` in a fresh Airflow home lists this provider and its connection type."""

from __future__ import annotations

import json
import subprocess
import sys


def _airflow(home, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "airflow", *args], env=home.env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def test_airflow_lists_the_provider_and_its_connection_type(airflow_home) -> None:
    providers = json.loads(_airflow(airflow_home, "providers", "list", "--output", "json"))
    ours = [p for p in providers if p.get("package_name") == "airflow-provider-connect"]
    assert ours, [p.get("package_name") for p in providers]
    hooks = json.loads(_airflow(airflow_home, "providers", "hooks", "--output", "json"))
    kinds = {h.get("connection_type"): h for h in hooks}
    assert "kafka_connect" in kinds, sorted(k for k in kinds if k)
    assert kinds["kafka_connect"].get("package_name") == "airflow-provider-connect"
