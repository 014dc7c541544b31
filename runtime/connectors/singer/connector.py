"""SingerSourceConnector: validates the tap's setup (its executable, config and catalog) and deals the selected
streams out to tasks, each of which runs the tap on its share (task.py)."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...api import (
    ConfigDef,
    ConfigError,
    ConfigValue,
    SourceConnector,
    Task,
)
from ..state_offsets import check_offsets
from . import catalog as catalogs
from .config import (
    REPLICATION_KEYS,
    STREAMS,
    TAP,
    TAP_CATALOG,
    TAP_CONFIG,
    TASK_CATALOG,
    config_def,
)
from .settings import STREAM_PARTITION, SingerSettings

log = logging.getLogger(__name__)


class SingerSourceConnector(SourceConnector):
    """Runs a Singer tap: a topic per stream, the tap's STATE as source offsets (one partition per stream)."""

    def config(self) -> ConfigDef:
        return config_def()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        by_name = {v.name: v for v in values}
        if any(by_name[name].errors for name in (TAP, TAP_CONFIG, TAP_CATALOG, STREAMS, REPLICATION_KEYS)):
            return values
        try:
            settings = SingerSettings(connector_configs)
        except ConfigError as exc:
            # tap.config is not a JSON object (its value is never shown), or replication.keys is malformed
            name = REPLICATION_KEYS if "replication.keys" in str(exc) else TAP_CONFIG
            by_name[name].add_error(str(exc))
            return values
        try:
            executable = settings.executable()
        except ConfigError as exc:
            by_name[TAP].add_error(str(exc))
            return values
        try:
            catalog = settings.catalog(executable)
        except ConfigError as exc:
            by_name[TAP_CATALOG if settings.catalog_setting else TAP_CONFIG].add_error(str(exc))
            return values
        by_name[STREAMS].recommended_values = catalogs.stream_ids(catalog)
        for name, message in catalogs.selection_errors(catalog, settings.streams, settings.replication_keys).items():
            by_name[name].add_error(message)
        return values

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        settings = SingerSettings(props)
        catalog = settings.catalog(settings.executable())
        errors = catalogs.selection_errors(catalog, settings.streams, settings.replication_keys)
        if errors:
            raise ConfigError("; ".join(errors.values()))
        self._entries = catalogs.selected(catalog, settings.streams, settings.replication_keys)
        log.info(
            "Singer tap %s: syncing %d streams: %s",
            settings.tap,
            len(self._entries),
            ", ".join(e["tap_stream_id"] for e in self._entries),
        )

    def task_class(self) -> type[Task]:
        from .task import SingerSourceTask

        return SingerSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [
            {**self._props, TASK_CATALOG: orjson.dumps(catalog).decode()}
            for catalog in catalogs.split(self._entries, max_tasks)
        ]

    def stop(self) -> None:
        pass

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Bookmarks live only in the runtime's offsets (a task hands them to the tap as its state): any
        well-formed change is definite. `{"stream": id}` with null resyncs that stream from the start."""
        check_offsets(offsets, (STREAM_PARTITION,))
        return True
