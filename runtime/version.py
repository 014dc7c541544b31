"""Versions reported by the worker."""

__version__ = "0.1.0"
# The Kafka Connect release whose REST API and records this runtime reproduces; clients gate features
# on `GET /` -> version, so it is reported there (our own version goes in `commit`).
KAFKA_COMPAT_VERSION = "3.9.0"
