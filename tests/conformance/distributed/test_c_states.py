"""The standalone conformance tests of `tests/conformance/test_c_states.py`, against two clusters (see conftest.py)."""

from tests.conformance.test_c_states import *
