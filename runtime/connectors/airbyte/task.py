"""AirbyteSourceTask: `source read` on its streams, again `poll.interval.ms` after each read, from the latest state.

The state given with `--state` is built from the task's committed offsets: per-stream states (source partition
`{"stream": name}`), a GLOBAL state (`{"global": "state"}`) or a LEGACY one (`{"global": "legacy"}`), each
offset the state's object (state_offsets.py encodes nested values). RECORD messages become records on the
stream's topic, with the Connect schema of the stream's JSON schema from the catalog and the stream's primary
key as the record key; STATE messages become offsets carried by the records read before them. A TRACE error
is what a failed read reports (with the source's stderr). Running the source: tap_task.py.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...api import ConnectError, DataError, Schema, SourceRecord
from ..json_schema import ValueConverter, key_converter, record_converter
from ..state_offsets import StateCarrier, decode_bookmark, encode_bookmark
from ..tap_process import PrivateDir, failure
from ..tap_task import ProgramSourceTask
from .protocol import dump, parse, stream_key, topic_for
from .settings import GLOBAL_PARTITION, STREAM_PARTITION, AirbyteSettings

log = logging.getLogger(__name__)

GLOBAL = {GLOBAL_PARTITION: "state"}
LEGACY = {GLOBAL_PARTITION: "legacy"}
_LOG_LEVELS = {"FATAL": logging.ERROR, "ERROR": logging.ERROR, "WARN": logging.WARNING, "INFO": logging.DEBUG}


class _Stream:
    __slots__ = ("convert", "convert_key", "key", "key_schema", "name", "namespace", "topic", "value_schema")

    def __init__(self, configured: dict[str, Any], prefix: str) -> None:
        stream = configured["stream"]
        self.name: str = stream["name"]
        self.namespace: str | None = stream.get("namespace")
        self.key = stream_key(self.name, self.namespace)
        self.topic = topic_for(prefix, self.key)
        schema = stream.get("json_schema") or {}
        try:
            mapped: tuple[Schema, ValueConverter] = record_converter(schema)
            self.value_schema, self.convert = mapped
            # a primary key of top-level fields becomes the record key
            paths = configured.get("primary_key") or []
            fields = [p[0] for p in paths if len(p) == 1]
            keyed = key_converter(schema, fields) if fields and len(fields) == len(paths) else None
        except DataError as exc:
            raise DataError(f"The JSON schema of stream {self.key!r} cannot be mapped: {exc}") from None
        self.key_schema: Schema | None = keyed[0] if keyed else None
        self.convert_key: ValueConverter | None = keyed[1] if keyed else None


class AirbyteSourceTask(ProgramSourceTask):
    def start(self, props: dict[str, str]) -> None:
        settings = AirbyteSettings(props)
        self._executable = settings.source_cli().executable
        self.program = f"The source {settings.source}"
        self.batch_size = settings.batch_size
        self.poll_interval_s = settings.poll_interval_s
        self.stop_timeout_s = settings.stop_timeout_s
        self.secrets = settings.secrets
        catalog = orjson.loads(settings.task_catalog) if settings.task_catalog else {"streams": []}
        if not catalog["streams"]:
            raise ConnectError("This task has no streams to read (the connector gave it an empty catalog)")
        parse("ConfiguredAirbyteCatalog", catalog)
        self._streams: dict[str, _Stream] = {}
        for configured in catalog["streams"]:
            stream = _Stream(configured, settings.topic_prefix)
            self._streams[stream.key] = stream
        partitions = [{STREAM_PARTITION: key} for key in self._streams] + [GLOBAL, LEGACY]
        self._offsets: dict[str, dict[str, Any]] = {}  # partition's value -> the state object it holds
        for partition, offset in self.context.offset_storage_reader.offsets(partitions):
            if offset:
                self._offsets[next(iter(partition.values()))] = decode_bookmark(offset)
        if self._offsets:
            log.info("Starting the source from the committed states of %s", ", ".join(sorted(self._offsets)))
        self._error: str | None = None
        self.carrier = StateCarrier(len(self._streams))
        self.private = PrivateDir("airbyte-task-")
        self._config_path = self.private.write_json("config.json", settings.source_config)
        self._catalog_path = self.private.write_json("catalog.json", catalog)

    # ---- state in, state out --------------------------------------------------------------------

    def _state_input(self) -> list[dict[str, Any]]:
        """The state to read from, as Airbyte state messages."""
        states: list[dict[str, Any]] = []
        if "state" in self._offsets:
            states.append({"type": "GLOBAL", "global": self._offsets["state"]})
        if "legacy" in self._offsets:
            states.append({"type": "LEGACY", "data": self._offsets["legacy"]})
        for key, stream in self._streams.items():
            if key in self._offsets and key not in ("state", "legacy"):
                descriptor = {"name": stream.name, **({"namespace": stream.namespace} if stream.namespace else {})}
                states.append(
                    {"type": "STREAM", "stream": {"stream_descriptor": descriptor, "stream_state": self._offsets[key]}}
                )
        return states

    def _state_change(self, raw: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        message = parse("AirbyteStateMessage", raw)
        kind = getattr(message.type, "value", message.type)
        if kind == "STREAM" and message.stream is not None:
            descriptor = message.stream.stream_descriptor
            key = stream_key(descriptor.name, descriptor.namespace)
            state = dump("AirbyteStreamState", message.stream).get("stream_state") or {}
            partition: dict[str, Any] = {STREAM_PARTITION: key}
        elif kind == "GLOBAL" and message.global_ is not None:
            key, state, partition = "state", dump("AirbyteGlobalState", message.global_), GLOBAL
        elif message.data is not None:
            key, state, partition = "legacy", dump("AirbyteStateBlob", message.data), LEGACY
        else:
            return []
        if self._offsets.get(key) == state:
            return []
        self._offsets[key] = state
        return [(partition, encode_bookmark(state))]

    # ---- runs -----------------------------------------------------------------------------------

    def command(self) -> list[str]:
        assert self.private is not None
        self._error = None
        args = [self._executable, "read", "--config", self._config_path, "--catalog", self._catalog_path]
        state = self._state_input()
        if state:
            args += ["--state", self.private.write_json("state.json", state)]
        return args

    def run_failed(self, returncode: int, stderr: str) -> ConnectError:
        if self._error:
            stderr = f"{self._error}\n{stderr}" if stderr else self._error
        return failure(self.program, returncode, stderr)

    def handle_line(self, line: bytes, out: list[SourceRecord]) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            if line.strip():
                log.debug("Skipping a line that is not an Airbyte message: %.200r", line)
            return
        if type(message) is not dict:
            return
        kind = message.get("type")
        if kind == "RECORD":
            # RECORDs are read straight from the parsed line: a model object per record would be most of the
            # per-record cost, and nothing here needs one
            record = message.get("record") or {}
            stream = self._streams.get(stream_key(record.get("stream", ""), record.get("namespace")))
            if stream is None:
                raise DataError(f"{self.program} sent a RECORD of stream {record.get('stream')!r}, not in its catalog")
            data = record.get("data")
            try:
                value = stream.convert(data)
                key = stream.convert_key(data) if stream.convert_key is not None else None
            except DataError as exc:
                raise DataError(f"A RECORD of stream {stream.key!r} does not match its schema: {exc}") from None
            self.carrier.add(
                SourceRecord(None, None, stream.topic, None, key, value, stream.key_schema, stream.value_schema), out
            )
        elif kind == "STATE":
            self.carrier.state(self._state_change(message.get("state") or {}))
        elif kind == "TRACE":
            trace = message.get("trace") or {}
            if trace.get("type") == "ERROR":
                error = parse("AirbyteTraceMessage", trace).error
                self._error = error.message + (f" ({error.internal_message})" if error.internal_message else "")
        elif kind == "LOG":
            entry = message.get("log") or {}
            log.log(
                _LOG_LEVELS.get(str(entry.get("level")), logging.DEBUG), "%s: %s", self.program, entry.get("message")
            )
        elif kind == "CONTROL":
            log.warning(
                "%s sent a CONTROL message (a config update, e.g. a refreshed token): not kept; update %s yourself",
                self.program,
                "source.config",
            )
