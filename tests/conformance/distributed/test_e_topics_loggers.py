"""The standalone conformance tests of `tests/conformance/test_e_topics_loggers.py`, against two clusters (see conftest.py)."""

from tests.conformance.test_e_topics_loggers import *
