"""Spark connectors: a dataset sink with exactly-once commits, and a dataset source."""

from .commit_log import CommitLog, committed_files
from .session import get_spark

__all__ = ["CommitLog", "committed_files", "get_spark"]
