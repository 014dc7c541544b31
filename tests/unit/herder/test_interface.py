"""Both herders offer every method of the interface the REST layer is typed against, with compatible
parameters (what a type checker would say, checked without one)."""

from __future__ import annotations

import inspect

import pytest

from runtime.herder.distributed import DistributedHerder
from runtime.herder.interface import Herder
from runtime.herder.standalone import StandaloneHerder

METHODS = sorted(
    name for name, member in vars(Herder).items() if inspect.isfunction(member) and not name.startswith("_")
)


def test_interface_lists_what_rest_and_bootstrap_call():
    assert {"health", "put_connector_config", "settle_forwarded", "fence_zombies", "mark_ready"} <= set(METHODS)


@pytest.mark.parametrize("herder", [StandaloneHerder, DistributedHerder])
@pytest.mark.parametrize("name", METHODS)
def test_herder_offers_the_method(herder, name):
    wanted = list(inspect.signature(getattr(Herder, name)).parameters.values())
    offered = list(inspect.signature(getattr(herder, name)).parameters.values())
    assert [p.name for p in offered[: len(wanted)]] == [p.name for p in wanted]
    assert all(p.default is not inspect.Parameter.empty for p in offered[len(wanted) :])
