"""AirbyteSourceConnector: checks the source at validation (its spec, then its check) and deals the selected
streams, as configured catalogs, out to tasks (task.py)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson

from ...api import AbstractConfig, ConfigDef, ConfigError, ConfigValue, SourceConnector, Task
from ..state_offsets import check_offsets
from ..tap_process import parse_json_object, redact, resolve_executable, secret_values
from .config import (
    BATCH_SIZE,
    COMMAND_TIMEOUT_MS,
    CURSOR_FIELDS,
    INJECTED_MANIFEST,
    POLL_INTERVAL_MS,
    SOURCE,
    SOURCE_CONFIG,
    SOURCE_MANIFEST,
    STOP_TIMEOUT_MS,
    STREAMS,
    SYNC_MODE,
    TASK_CATALOG,
    TOPIC_PREFIX,
    config_def,
)
from .protocol import Source, config_errors, secret_keys, stream_key

log = logging.getLogger(__name__)

STREAM_PARTITION = "stream"
GLOBAL_PARTITION = "global"  # {"global": "state"} for GLOBAL states, {"global": "legacy"} for LEGACY ones


class AirbyteSettings:
    """The parsed settings of a connector or task (raises ConfigError naming the first bad one)."""

    def __init__(self, props: dict[str, str]) -> None:
        config = AbstractConfig(config_def(), props)
        self.source = config.get_str(SOURCE) or ""
        self.source_config = parse_json_object(config.get_password(SOURCE_CONFIG), SOURCE_CONFIG)
        manifest = config.get_str(SOURCE_MANIFEST) or ""
        if manifest:
            self.source_config[INJECTED_MANIFEST] = _load_manifest(manifest)
        self.streams = [s for s in config.get_list(STREAMS) if s]
        self.incremental = config.get_str(SYNC_MODE) == "incremental"
        self.cursor_fields: dict[str, str] = {}
        for entry in (e for e in config.get_list(CURSOR_FIELDS) if e):
            stream, sep, field = entry.partition("=")
            if not sep or not stream.strip() or not field.strip():
                raise ConfigError(f"cursor.fields entries are stream=field, got {entry!r}")
            self.cursor_fields[stream.strip()] = field.strip()
        self.topic_prefix = config.get_str(TOPIC_PREFIX) or ""
        self.poll_interval_s = config.get_int(POLL_INTERVAL_MS) / 1000
        self.batch_size = config.get_int(BATCH_SIZE)
        self.timeout_s = config.get_int(COMMAND_TIMEOUT_MS) / 1000
        self.stop_timeout_s = config.get_int(STOP_TIMEOUT_MS) / 1000
        self.task_catalog = config.get_str(TASK_CATALOG) or ""
        self.secrets = secret_values(self.source_config)

    def source_cli(self) -> Source:
        return Source(
            resolve_executable(self.source, "source", SOURCE), self.source_config, self.timeout_s, self.secrets
        )

    def add_spec_secrets(self, spec: dict[str, Any]) -> None:
        """Redact the values of the properties the spec marks `airbyte_secret` as well (in place: the Source
        from `source_cli` shares the list)."""
        self.secrets[:] = secret_values(self.source_config, secret_keys(spec))


def _load_manifest(path: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(SOURCE_MANIFEST, path, f"cannot read it: {exc.strerror or exc}") from None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml comes with the airbyte extra
        raise ConfigError(SOURCE_MANIFEST, path, "YAML manifests need pyyaml (or give the manifest as JSON)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(SOURCE_MANIFEST, path, f"not YAML: {exc}") from None


def configured_streams(
    catalog: dict[str, Any], settings: AirbyteSettings
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The ConfiguredAirbyteStreams to read, and the problems of the selection by setting name."""
    streams = {stream_key(s["name"], s.get("namespace")): s for s in catalog.get("streams") or []}
    errors: dict[str, str] = {}
    unknown = [s for s in settings.streams if s not in streams]
    if unknown:
        errors[STREAMS] = f"The source has no streams {unknown}; its streams: {sorted(streams)}"
    chosen = [k for k in streams if not settings.streams or k in settings.streams]
    configured = []
    for key in chosen:
        stream = streams[key]
        modes = stream.get("supported_sync_modes") or ["full_refresh"]
        incremental = settings.incremental and "incremental" in modes
        cursor: list[str] = []
        if incremental:
            if key in settings.cursor_fields:
                if stream.get("source_defined_cursor"):
                    errors[CURSOR_FIELDS] = f"{key} has a cursor the source defines; it cannot be chosen"
                cursor = [settings.cursor_fields[key]]
            else:
                cursor = list(stream.get("default_cursor_field") or [])
            if not cursor and not stream.get("source_defined_cursor"):
                log.info("Stream %s supports incremental reads but names no cursor: read in full", key)
                incremental = False
        primary_key = stream.get("source_defined_primary_key") or []
        configured.append(
            {
                "stream": stream,
                "sync_mode": "incremental" if incremental else "full_refresh",
                "destination_sync_mode": "append",
                "cursor_field": cursor,
                "primary_key": primary_key,
            }
        )
    for key in settings.cursor_fields:
        if key not in chosen:
            errors[CURSOR_FIELDS] = f"{key} is not a selected stream"
    return configured, errors


class AirbyteSourceConnector(SourceConnector):
    """Runs an Airbyte source: a topic per stream, its STATE messages as source offsets."""

    def config(self) -> ConfigDef:
        return config_def()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        by_name = {v.name: v for v in values}
        if any(by_name[name].errors for name in (SOURCE, SOURCE_CONFIG, SOURCE_MANIFEST, STREAMS, CURSOR_FIELDS)):
            return values
        try:
            settings = AirbyteSettings(connector_configs)
        except ConfigError as exc:
            text = str(exc)
            name = next((n for n in (CURSOR_FIELDS, SOURCE_MANIFEST) if n in text), SOURCE_CONFIG)
            by_name[name].add_error(text)
            return values
        try:
            source = settings.source_cli()
        except ConfigError as exc:
            by_name[SOURCE].add_error(str(exc))
            return values
        try:
            spec = source.spec()
            settings.add_spec_secrets(spec)
            problems = config_errors(spec, settings.source_config)
            if problems:
                for problem in problems:
                    by_name[SOURCE_CONFIG].add_error(
                        redact(f"The config does not match the source's spec: {problem}", settings.secrets)
                    )
                return values
            failed = source.check()
            if failed is not None:
                by_name[SOURCE_CONFIG].add_error(redact(f"The source's check failed: {failed}", settings.secrets))
                return values
            catalog = source.discover()
        except ConfigError as exc:
            by_name[SOURCE_CONFIG].add_error(redact(str(exc), settings.secrets))
            return values
        by_name[STREAMS].recommended_values = [
            stream_key(s["name"], s.get("namespace")) for s in catalog.get("streams") or []
        ]
        for name, message in configured_streams(catalog, settings)[1].items():
            by_name[name].add_error(message)
        return values

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        settings = AirbyteSettings(props)
        source = settings.source_cli()
        settings.add_spec_secrets(source.spec())
        configured, errors = configured_streams(source.discover(), settings)
        if errors:
            raise ConfigError("; ".join(errors.values()))
        self._configured = configured
        log.info(
            "Airbyte source %s: reading %s",
            settings.source,
            ", ".join(f"{c['stream']['name']} ({c['sync_mode']})" for c in configured),
        )

    def task_class(self) -> type[Task]:
        from .task import AirbyteSourceTask

        return AirbyteSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        count = max(1, min(max_tasks, len(self._configured)))
        shares: list[list[dict[str, Any]]] = [[] for _ in range(count)]
        for i, stream in enumerate(self._configured):
            shares[i % count].append(stream)
        return [{**self._props, TASK_CATALOG: orjson.dumps({"streams": share}).decode()} for share in shares]

    def stop(self) -> None:
        pass

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """States live only in the runtime's offsets (a task hands them to the source): any well-formed change
        is definite. `{"stream": name}` with null reads that stream again from the start."""
        check_offsets(offsets, (STREAM_PARTITION, GLOBAL_PARTITION))
        return True
