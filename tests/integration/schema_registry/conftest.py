"""One standalone worker per module and a Schema Registry: the fixture one on loopback, or the real one
CONNECT_TEST_SCHEMA_REGISTRY_URL names."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.scenarios.conftest import api, kafka, name, out_file, worker  # noqa: F401  (fixtures)
from tests.support.schema_registry import SchemaRegistryServer, registry_url_from_env

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    url = registry_url_from_env()
    if url is not None:
        yield url
        return
    with SchemaRegistryServer() as server:
        yield server.url


@pytest.fixture
def fixture_registry() -> Iterator[SchemaRegistryServer]:
    """A registry of this test's own, for faults a real registry cannot be told to have."""
    with SchemaRegistryServer() as server:
        yield server
