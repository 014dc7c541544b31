"""The standalone conformance tests of `tests/conformance/test_d_offsets.py`, against two clusters (see conftest.py)."""

from tests.conformance.test_d_offsets import *
