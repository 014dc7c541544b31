"""Section 4 group C against three distributed workers: the standalone suite's tests, routed by `RoutingApi`
(scenario 50, a restart sent to a worker running none of the connector, is what every test here does)."""

from tests.integration.scenarios.test_c_restart import *
