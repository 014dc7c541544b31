"""Connector files given on the command line: a flat JSON config, a `{name, config, initial_state,
initial_offsets}` JSON object (KIP-980, KIP-995), or Java properties; tried in that order, as the reference's
standalone CLI does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .worker_config import parse_properties


class ConnectorFileError(Exception):
    """A connector file cannot be used; the CLI stops with exit code 3."""


@dataclass(frozen=True)
class ConnectorRequest:
    name: str
    config: dict[str, str]
    initial_state: str | None
    path: Path
    # KIP-995: PATCH offsets' entries, written when the file creates the connector (never over a running one)
    initial_offsets: list[dict[str, Any]] | None = None


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _missing_name(path: Path) -> ConnectorFileError:
    return ConnectorFileError(f"Connector configuration at '{path}' is missing the mandatory 'name' configuration")


def parse_connector_file(path: Path) -> ConnectorRequest:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConnectorFileError(f"Cannot read connector file '{path}': {exc.strerror or exc}") from None
    try:
        document = json.loads(raw.decode("utf-8"))  # JSON files are UTF-8, as Jackson reads them
    except ValueError:  # UnicodeDecodeError included
        document = None
    if isinstance(document, dict):
        if all(_scalar(v) for v in document.values()):
            config = {k: _text(v) for k, v in document.items() if v is not None}
            name = config.get("name", "").strip()
            if not name:
                raise _missing_name(path)
            return ConnectorRequest(name, config, None, path)
        if isinstance(document.get("config"), dict):
            raw_config = document["config"]
            bad = [k for k, v in raw_config.items() if not _scalar(v)]
            if bad:
                raise ConnectorFileError(f"Connector configuration at '{path}' has a non-scalar value for '{bad[0]}'")
            config = {k: _text(v) for k, v in raw_config.items() if v is not None}
            given = document.get("name")
            name = given.strip() if isinstance(given, str) else ""
            if not name:
                raise _missing_name(path)
            if "name" in config and config["name"] != name:
                raise ConnectorFileError(
                    f"Connector name configuration in 'config' doesn't match the one specified in 'name' at '{path}'"
                )
            config["name"] = name
            initial_state = document.get("initial_state")
            if initial_state is not None and not isinstance(initial_state, str):
                raise ConnectorFileError(f"'initial_state' at '{path}' must be one of RUNNING, PAUSED, STOPPED")
            initial_offsets = document.get("initial_offsets")
            if initial_offsets is not None and not (
                isinstance(initial_offsets, list) and all(isinstance(e, dict) for e in initial_offsets)
            ):
                raise ConnectorFileError(
                    f"'initial_offsets' at '{path}' must be a list of {{\"partition\", \"offset\"}} objects"
                )
            return ConnectorRequest(name, config, initial_state, path, initial_offsets)
    if document is not None:
        raise ConnectorFileError(
            f"Connector file '{path}' holds JSON that is neither a flat config object nor {{name, config, initial_state}}"
        )
    props = parse_properties(raw.decode("iso-8859-1"))  # as Java's Properties.load(InputStream)
    name = props.get("name", "").strip()
    if not name:
        raise _missing_name(path)
    return ConnectorRequest(name, props, None, path)
