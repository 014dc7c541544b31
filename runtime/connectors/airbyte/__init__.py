"""Airbyte sources as Kafka Connect source connectors: `AirbyteSourceConnector` runs a Python Airbyte source
(`airbyte-source-*` from PyPI, or airbyte-cdk's `source-declarative-manifest` with a manifest).

Settings (config.py): `source` (a command or a path), `source.config` (JSON, checked against the source's
spec and by its `check` at validation), `streams`, `sync.mode`, `topic.prefix`, `poll.interval.ms`. Records go
to `<topic.prefix><stream>`; per-stream states are the offsets of `{"stream": name}`, a GLOBAL state those of
`{"global": "state"}`, so the offsets endpoints show, alter and reset them.
"""

from .connector import AirbyteSourceConnector

__all__ = ["AirbyteSourceConnector"]
