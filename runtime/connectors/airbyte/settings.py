"""The parsed settings of an Airbyte connector or task, and the partition keys of its offsets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ...api import AbstractConfig, ConfigError
from ..tap_process import parse_json_object, resolve_executable, secret_values
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
from .protocol import Source, secret_keys

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
