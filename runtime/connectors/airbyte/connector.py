"""AirbyteSourceConnector: checks the source at validation (its spec, then its check) and deals the selected
streams, as configured catalogs, out to tasks (task.py)."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...api import ConfigDef, ConfigError, ConfigValue, SourceConnector, Task
from ..state_offsets import check_offsets
from ..tap_process import redact
from .config import CURSOR_FIELDS, SOURCE, SOURCE_CONFIG, SOURCE_MANIFEST, STREAMS, TASK_CATALOG, config_def
from .protocol import config_errors, stream_key
from .settings import GLOBAL_PARTITION, STREAM_PARTITION, AirbyteSettings

log = logging.getLogger(__name__)


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
