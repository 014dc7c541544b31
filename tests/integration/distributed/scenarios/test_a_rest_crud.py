"""Section 4 group A against three distributed workers: the standalone suite's tests, routed by `RoutingApi`."""

from tests.integration.scenarios.test_a_rest_crud import *

# A fresh standalone worker process is a standalone matter; a fresh cluster is checked in test_cluster.py.
del test_fresh_worker_lists_no_connectors  # noqa: F821
