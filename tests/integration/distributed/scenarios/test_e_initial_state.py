"""Section 4 group E against three distributed workers: the standalone suite's tests, routed by `RoutingApi`.
KIP-995's offsets at create (the standalone suite's group F) share this module's cluster: a cluster per
module costs most of a module's time, and both are about what a create sets up."""

from tests.integration.scenarios.test_e_initial_state import *
from tests.integration.scenarios.test_f_initial_offsets import *

# Connector files on the command line are a standalone feature (KIP-980's CLI part).
del test_cli_connector_file_honours_initial_state  # noqa: F821
