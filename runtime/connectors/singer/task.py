"""SingerSourceTask: runs the tap on its streams, again `poll.interval.ms` after each run, from the latest state.

Each run: `tap --config C --catalog K [--state S]`, S being the state built from this task's committed
offsets (one source partition `{"stream": tap_stream_id}` per stream, its bookmark as the offset) or, from
the second run on, the tap's latest STATE. SCHEMA messages give each stream's Connect schemas, RECORD
messages become records on the stream's topic, STATE messages become offsets carried by the records read
before them (state_offsets.py). Running the tap, reading it, failing on a non-zero exit with its stderr and
stopping it: tap_task.py.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...api import ConnectError, DataError, Schema, SourceRecord
from ..json_schema import ValueConverter, key_converter, record_converter
from ..state_offsets import StateCarrier, decode_bookmark, encode_bookmark
from ..tap_process import PrivateDir
from ..tap_task import ProgramSourceTask
from .catalog import topic_for
from .settings import STREAM_PARTITION, SingerSettings

log = logging.getLogger(__name__)


def _singerlib() -> Any:
    try:
        from singer_sdk import singerlib
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ConnectError(
            "The Singer connector needs singer-sdk: pip install 'airflow-provider-connect[singer]'"
        ) from exc
    return singerlib


class _Stream:
    """One stream of the catalog: its topic and, once its SCHEMA arrived, its schemas and converters."""

    __slots__ = ("convert", "convert_key", "key_schema", "stream_id", "topic", "value_schema")

    def __init__(self, stream_id: str, topic: str) -> None:
        self.stream_id = stream_id
        self.topic = topic
        self.value_schema: Schema | None = None
        self.key_schema: Schema | None = None
        self.convert: ValueConverter | None = None
        self.convert_key: ValueConverter | None = None

    def set_schema(self, schema: dict[str, Any], key_properties: list[str] | None) -> None:
        try:
            self.value_schema, self.convert = record_converter(schema)
            keyed = key_converter(schema, key_properties or [])
        except DataError as exc:
            raise DataError(f"The SCHEMA of stream {self.stream_id!r} cannot be mapped: {exc}") from None
        self.key_schema, self.convert_key = keyed if keyed else (None, None)


class SingerSourceTask(ProgramSourceTask):
    def start(self, props: dict[str, str]) -> None:
        self._singerlib = _singerlib()
        settings = self._settings = SingerSettings(props)
        self._executable = settings.executable()
        self.program = f"The tap {settings.tap}"
        self.batch_size = settings.batch_size
        self.poll_interval_s = settings.poll_interval_s
        self.stop_timeout_s = settings.stop_timeout_s
        self.secrets = settings.secrets
        catalog = orjson.loads(settings.task_catalog) if settings.task_catalog else {"streams": []}
        if not catalog["streams"]:
            raise ConnectError("This task has no streams to sync (the connector gave it an empty catalog)")
        # RECORD and SCHEMA messages name the stream (usually its tap_stream_id); bookmarks use the tap_stream_id
        self._streams: dict[str, _Stream] = {}
        ids = []
        for entry in catalog["streams"]:
            stream_id = entry["tap_stream_id"]
            ids.append(stream_id)
            stream = _Stream(stream_id, topic_for(settings.topic_prefix, stream_id))
            self._streams[stream_id] = stream
            self._streams.setdefault(entry.get("stream") or stream_id, stream)
        self._ids = ids
        committed = self.context.offset_storage_reader.offsets([{STREAM_PARTITION: i} for i in ids])
        self._bookmarks: dict[str, Any] = {
            partition[STREAM_PARTITION]: decode_bookmark(offset) for partition, offset in committed if offset
        }
        self._state: dict[str, Any] = {"bookmarks": dict(self._bookmarks)} if self._bookmarks else {}
        if self._bookmarks:
            log.info("Starting the tap from the committed bookmarks of %s", ", ".join(sorted(self._bookmarks)))
        self.carrier = StateCarrier(len(ids))
        self.private = PrivateDir("singer-task-")
        self._config_path = self.private.write_json("config.json", settings.tap_config)
        self._catalog_path = self.private.write_json("catalog.json", catalog)

    def command(self) -> list[str]:
        assert self.private is not None
        args = [self._executable, "--config", self._config_path, self._settings.catalog_flag, self._catalog_path]
        if self._state:
            args += ["--state", self.private.write_json("state.json", self._state)]
        return args

    def handle_line(self, line: bytes, out: list[SourceRecord]) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            if not line.strip():
                return
            message = None
        if type(message) is not dict:
            raise ConnectError(f"{self.program} wrote a line that is not a Singer message: {line[:300]!r}")
        kind = message.get("type")
        if kind == "RECORD":
            # RECORDs are read straight from the parsed line: a message object per record (and parsing its
            # time_extracted) would be most of the per-record cost, and nothing here needs them
            name = message.get("stream")
            stream = self._streams.get(name) if isinstance(name, str) else None
            if stream is None or stream.convert is None:
                raise DataError(
                    f"{self.program} sent a RECORD of stream {message.get('stream')!r} "
                    + ("which is not in this task's catalog" if stream is None else "before its SCHEMA")
                )
            record = message.get("record")
            try:
                value = stream.convert(record)
                key = stream.convert_key(record) if stream.convert_key is not None else None
            except DataError as exc:
                raise DataError(f"A RECORD of stream {stream.stream_id!r} does not match its SCHEMA: {exc}") from None
            self.carrier.add(
                SourceRecord(None, None, stream.topic, None, key, value, stream.key_schema, stream.value_schema), out
            )
        elif kind == "STATE":
            state = self._singerlib.StateMessage(value=message.get("value") or {})
            self.carrier.state(self._state_changes(dict(state.value)))
        elif kind == "SCHEMA":
            schema = self._singerlib.SchemaMessage(
                stream=message.get("stream"),
                schema=message.get("schema") or {},
                key_properties=message.get("key_properties"),
                bookmark_properties=message.get("bookmark_properties"),
            )
            stream = self._streams.get(schema.stream)
            if stream is None:
                log.debug("Ignoring the SCHEMA of stream %s, not synced by this task", schema.stream)
                return
            stream.set_schema(schema.schema, list(schema.key_properties or []))
        elif kind == "BATCH":
            raise ConnectError(
                f"{self.program} sent a BATCH message (files of records), which this connector does not read: "
                "turn off the tap's batch_config"
            )
        elif kind != "ACTIVATE_VERSION":
            log.debug("Ignoring a Singer message of type %r", kind)

    def _state_changes(self, state: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The bookmarks this STATE changed, as (partition, offset) pairs; the state itself is the next run's."""
        self._state = state
        bookmarks = state.get("bookmarks")
        if not isinstance(bookmarks, dict):
            return []
        changes: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for stream_id in self._ids:
            bookmark = bookmarks.get(stream_id)
            if bookmark != self._bookmarks.get(stream_id):
                if bookmark is None:
                    self._bookmarks.pop(stream_id, None)
                else:
                    self._bookmarks[stream_id] = bookmark
                offset = encode_bookmark(bookmark) if isinstance(bookmark, dict) else None
                changes.append(({STREAM_PARTITION: stream_id}, offset))
        return changes
