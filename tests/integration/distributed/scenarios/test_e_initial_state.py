"""Section 4 group E against three distributed workers: the standalone suite's tests, routed by `RoutingApi`."""

from tests.integration.scenarios.test_e_initial_state import *

# Connector files on the command line are a standalone feature (KIP-980's CLI part).
del test_cli_connector_file_honours_initial_state  # noqa: F821
