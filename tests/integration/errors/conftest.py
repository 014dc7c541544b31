"""One standalone worker per module, as the section-4 scenarios use."""

from tests.integration.scenarios.conftest import api, kafka, worker  # noqa: F401  (fixtures)
