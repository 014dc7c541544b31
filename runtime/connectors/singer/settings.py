"""The parsed settings of a Singer connector or task, and the partition key of its offsets (one per stream)."""

from __future__ import annotations

from typing import Any

from ...api import AbstractConfig
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
