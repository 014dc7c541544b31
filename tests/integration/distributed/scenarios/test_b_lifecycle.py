"""Section 4 group B against three distributed workers: the standalone suite's tests, routed by `RoutingApi`."""

from tests.integration.scenarios.test_b_lifecycle import *

# Scenario 37 for a cluster (every worker restarted) is in test_cluster.py.
del test_target_states_survive_a_worker_restart  # noqa: F821
