"""Rules for real components in tests: skip locally when missing, fail in CI (CI=true)."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(condition: bool, what: str) -> None:
    """Skip (locally) or fail (in CI) when a real component the test needs is missing."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI (CI=true) but is missing")
    pytest.skip(f"{what} is not available here")


def have_java() -> bool:
    return shutil.which("java") is not None
