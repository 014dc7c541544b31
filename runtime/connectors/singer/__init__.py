"""Singer taps as Kafka Connect source connectors: `SingerSourceConnector` runs any tap executable.

Settings (config.py): `tap` (a command or a path), `tap.config` (the tap's config as JSON; secrets through
config providers), `streams`, `replication.keys`, `topic.prefix`, `poll.interval.ms`. Records go to
`<topic.prefix><tap_stream_id>`, keyed by the stream's key properties; each stream's bookmark is the offset of
the source partition `{"stream": tap_stream_id}`, so `GET /connectors/{c}/offsets` lists the bookmarks and
PATCH/DELETE there resync one stream or all (with the connector STOPPED, as for any connector).
"""

from .connector import SingerSourceConnector

__all__ = ["SingerSourceConnector"]
