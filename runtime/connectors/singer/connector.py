"""SingerSourceConnector: validates the tap's setup (its executable, config and catalog) and deals the selected
streams out to tasks, each of which runs the tap on its share (task.py)."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ...api import (
    AbstractConfig,
    ConfigDef,
    ConfigError,
    ConfigValue,
    SourceConnector,
    Task,
)
from ..state_offsets import check_offsets
from ..tap_process import parse_json_object, resolve_executable, secret_values
from . import catalog as catalogs
from .config import (
    BATCH_SIZE,
    DISCOVER_TIMEOUT_MS,
    POLL_INTERVAL_MS,
    REPLICATION_KEYS,
    STOP_TIMEOUT_MS,
    STREAMS,
    TAP,
    TAP_CATALOG,
    TAP_CATALOG_FLAG,
    TAP_CONFIG,
    TASK_CATALOG,
    TOPIC_PREFIX,
    config_def,
)

log = logging.getLogger(__name__)

STREAM_PARTITION = "stream"


class SingerSettings:
    """The parsed settings of a connector or task (raises ConfigError naming the first bad one)."""

    def __init__(self, props: dict[str, str]) -> None:
        config = AbstractConfig(config_def(), props)
        self.tap = config.get_str(TAP) or ""
        self.tap_config = parse_json_object(config.get_password(TAP_CONFIG), TAP_CONFIG)
        self.secrets = secret_values(self.tap_config)
        self.catalog_setting = config.get_str(TAP_CATALOG) or ""
        self.catalog_flag = config.get_str(TAP_CATALOG_FLAG) or "--catalog"
        self.streams = [s for s in config.get_list(STREAMS) if s]
        self.replication_keys = catalogs.parse_replication_keys([e for e in config.get_list(REPLICATION_KEYS) if e])
        self.topic_prefix = config.get_str(TOPIC_PREFIX) or ""
        self.poll_interval_s = config.get_int(POLL_INTERVAL_MS) / 1000
        self.batch_size = config.get_int(BATCH_SIZE)
        self.discover_timeout_s = config.get_int(DISCOVER_TIMEOUT_MS) / 1000
        self.stop_timeout_s = config.get_int(STOP_TIMEOUT_MS) / 1000
        self.task_catalog = config.get_str(TASK_CATALOG) or ""

    def executable(self) -> str:
        return resolve_executable(self.tap, "tap", TAP)

    def catalog(self, executable: str) -> dict[str, Any]:
        if self.catalog_setting:
            return catalogs.load_catalog(self.catalog_setting)
        return catalogs.discover(executable, self.tap_config, self.discover_timeout_s, self.secrets)


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
