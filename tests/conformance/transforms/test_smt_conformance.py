"""Conformance of the bundled SMTs and predicates: every case through the reference's classes and through this
runtime, results compared byte for byte (compare.py says the one normalisation: Java HashMap entry order).

The reference side is SmtHarness.java, compiled with javac against `kafka-connect-oracle classpath` (cached by
source hash) and run once for all cases. This runtime's side is smt_runner.py (the worker's TransformationChain
and JsonConverter). Java missing: skipped locally, a failure under CI=true (tests/support/env.require).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from runtime.plugins import Plugins
from tests.support.env import require
from tests.support.oracle import require_oracle

from .cases import ALL_CASES
from .compare import differences, without_messages
from .known import KNOWN_DIFFERENCES, MESSAGE_NOT_COMPARED
from .smt_runner import run_case

pytestmark = pytest.mark.oracle

HERE = Path(__file__).parent
HARNESS_SOURCE = HERE / "SmtHarness.java"
CASES_BY_ID = {case["id"]: case for case in ALL_CASES}


def _classpath(tool: Path) -> str:
    done = subprocess.run([str(tool), "classpath"], capture_output=True, text=True, timeout=120)
    require(
        done.returncode == 0 and bool(done.stdout.strip()),
        f"kafka-connect-oracle classpath (exit {done.returncode}: {done.stderr[-1000:]})",
    )
    return done.stdout.strip()


def _compiled(classpath: str) -> Path:
    """The harness's class folder, compiled once per source and class path (a folder named by their hash)."""
    javac = shutil.which("javac")
    require(javac is not None, "javac (JDK 17, to compile the SMT harness)")
    digest = hashlib.sha256(HARNESS_SOURCE.read_bytes() + classpath.encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"smt-harness-{digest}"
    if (target / "SmtHarness.class").exists():
        return target
    staging = Path(tempfile.mkdtemp(prefix="smt-harness-build-"))
    done = subprocess.run(
        [str(javac), "-d", str(staging), "-cp", classpath, str(HARNESS_SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"javac failed:\n{done.stderr}"
    try:
        staging.rename(target)
    except OSError:  # another session compiled it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return target


@pytest.fixture(scope="session")
def reference_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every case through the reference in one JVM: case id -> result."""
    classpath = _classpath(require_oracle())
    classes = _compiled(classpath)
    lines = "".join(json.dumps(case) + "\n" for case in ALL_CASES)
    java = shutil.which("java") or "java"
    output = tmp_path_factory.mktemp("smt-reference") / "results.jsonl"
    # C1 only: the cases are many and short, a JIT warm-up would cost more than it saves. Locale en, as the
    # oracle runs and as runtime/data/java_date_format.py assumes (week fields depend on it).
    command = [
        java,
        "-XX:TieredStopAtLevel=1",
        "-Duser.language=en",
        "-Duser.country=US",
        "-cp",
        f"{classes}{os.pathsep}{classpath}",
        "SmtHarness",
        str(output),
    ]
    done = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"SmtHarness failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
    results = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [r["id"] for r in results] == [c["id"] for c in ALL_CASES], "the harness answered out of order"
    return {r["id"]: r for r in results}


@pytest.fixture(scope="session")
def plugins() -> Plugins:
    return Plugins()


def _params() -> list[Any]:
    params = []
    for case_id in CASES_BY_ID:
        reason = next((why for prefix, why in KNOWN_DIFFERENCES.items() if case_id.startswith(prefix)), None)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case_id, marks=marks, id=case_id))
    return params


@pytest.mark.parametrize("case_id", _params())
def test_transform_matches_reference(
    case_id: str, reference_results: dict[str, dict[str, Any]], plugins: Plugins
) -> None:
    case = CASES_BY_ID[case_id]
    reference, ours = reference_results[case_id], run_case(case, plugins)
    if case_id in MESSAGE_NOT_COMPARED:
        reference, ours = without_messages(reference), without_messages(ours)
    problem = differences(case, reference, ours)
    assert problem is None, problem
