"""A Kafka Connect worker runtime in Python."""

from .version import __version__

__all__ = ["__version__"]
