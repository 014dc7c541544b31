"""The internal-endpoint conformance tests of `tests/conformance/test_f_internal.py`, against two clusters."""

from tests.conformance.test_f_internal import *
