"""Section 4 group D against three distributed workers: the standalone suite's tests, routed by `RoutingApi`."""

from tests.integration.scenarios.test_d_offsets import *
