"""Section 4 group C against three distributed workers: the standalone suite's tests, routed by `RoutingApi`
(scenario 50, a restart sent to a worker running none of the connector, is what every test here does).
Self-healing's scenarios (the standalone suite's group I: restarts the owner makes by itself) share this
module's cluster: a cluster per module costs most of a module's time."""

from tests.integration.scenarios.test_c_restart import *
from tests.integration.scenarios.test_i_self_healing import *
