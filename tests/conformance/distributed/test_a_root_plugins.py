"""The standalone conformance tests of `tests/conformance/test_a_root_plugins.py`, against two clusters (see conftest.py)."""

from tests.conformance.test_a_root_plugins import *
