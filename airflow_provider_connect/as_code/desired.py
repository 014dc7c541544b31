"""The desired state of a cluster's connectors: read from a folder of JSON/YAML files or from Python data.

One connector is the body `POST /connectors` takes, plus its target state and optional offsets:

    name: orders-source                 # default: the file's name without its extension
    config: {connector.class: ..., tasks.max: 2, ...}
    state: RUNNING                      # RUNNING (default), PAUSED or STOPPED; `initial_state` is accepted too
    offsets:                            # optional (or initial_offsets); the elements of PATCH /connectors/{c}/offsets
      - {partition: {filename: /data/in.txt}, offset: {position: 0}}

A file holds one connector, a list of them, or (YAML) several documents. Offsets are where a connector
starts: they are written when the connector is created and never again, so a running connector is never
rewound by a later apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from airflow_provider_connect.hooks.base import normalise_config
from airflow_provider_connect.status import ConnectState

SUFFIXES = (".json", ".yaml", ".yml")
TARGET_STATES = (ConnectState.RUNNING, ConnectState.PAUSED, ConnectState.STOPPED)


class DesiredStateError(ValueError):
    """The desired state cannot be read: names the file (or entry) and what is wrong with it."""


class OffsetEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    partition: dict[str, Any]
    offset: dict[str, Any] | None


class DesiredConnector(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = Field(min_length=1)
    config: dict[str, Any]
    state: ConnectState = Field(default=ConnectState.RUNNING, alias="initial_state")
    # `initial_offsets` too: KIP-995's name in the body of POST /connectors
    offsets: tuple[OffsetEntry, ...] = Field(default=(), validation_alias=AliasChoices("offsets", "initial_offsets"))

    @field_validator("state", mode="before")
    @classmethod
    def _target_state(cls, value: Any) -> ConnectState:
        state = ConnectState.parse(value)
        if state not in TARGET_STATES:
            raise ValueError(f"state must be one of {[s.value for s in TARGET_STATES]}, not {state.value}")
        return state

    @field_validator("config")
    @classmethod
    def _config_names_the_connector(cls, config: dict[str, Any], info: Any) -> dict[str, Any]:
        named = config.get("name")
        if named is not None and "name" in info.data and str(named) != info.data["name"]:
            raise ValueError(f"config's name {named!r} is not the connector's name {info.data['name']!r}")
        return config

    @field_validator("offsets", mode="before")
    @classmethod
    def _offsets_list(cls, value: Any) -> Any:
        # Accept GET /connectors/{c}/offsets' body ({"offsets": [...]}) as well as its list.
        return value.get("offsets", value) if isinstance(value, Mapping) else value

    @property
    def normalised_config(self) -> dict[str, str]:
        """The config as the server stores and returns it (string values, plus `name`)."""
        return normalise_config(self.name, self.config)

    def offsets_payload(self) -> list[dict[str, Any]]:
        return [entry.model_dump() for entry in self.offsets]


def load_desired_state(source: Any) -> dict[str, DesiredConnector]:
    """Connectors by name from a folder or file path, a mapping name -> spec, or a list of specs."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            return _merge(
                entry for file in sorted(path.rglob("*")) if file.suffix in SUFFIXES for entry in _read_file(file)
            )
        if path.is_file():
            return _merge(_read_file(path))
        raise DesiredStateError(f"desired state {str(path)!r} is neither a folder nor a file")
    if isinstance(source, Mapping):
        specs = [(f"entry {name!r}", {"name": name, **_as_mapping(spec, name)}) for name, spec in source.items()]
        return _merge((where, _parse(spec, where)) for where, spec in specs)
    if isinstance(source, Iterable):
        return _merge((f"entry {i}", _parse(spec, f"entry {i}")) for i, spec in enumerate(source))
    raise DesiredStateError(f"desired state must be a path, a mapping or a list, not {type(source).__name__}")


def _read_file(path: Path) -> list[tuple[str, DesiredConnector]]:
    try:
        text = path.read_text(encoding="utf-8")
        documents = [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise DesiredStateError(f"{path}: cannot read it: {exc}") from None
    specs: list[Any] = []
    for document in documents:
        if document is None:  # an empty YAML document
            continue
        specs.extend(document if isinstance(document, list) else [document])
    connectors = []
    for i, spec in enumerate(specs):
        spec = dict(_as_mapping(spec, f"{path} entry {i}"))
        if len(specs) == 1:
            spec.setdefault("name", path.stem)
        where = str(path) if len(specs) == 1 else f"{path} entry {i}"
        connectors.append((where, _parse(spec, where)))
    return connectors


def _as_mapping(spec: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(spec, Mapping):
        raise DesiredStateError(f"{where}: a connector must be an object, not {type(spec).__name__}")
    return spec


def _parse(spec: Any, where: str) -> DesiredConnector:
    try:
        connector = DesiredConnector.model_validate(_as_mapping(spec, where))
        connector.normalised_config  # noqa: B018 - rejects null, list and object config values here
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'connector'}: {e['msg']}" for e in exc.errors())
        raise DesiredStateError(f"{where}: {problems}") from None
    except ValueError as exc:
        raise DesiredStateError(f"{where}: {exc}") from None
    return connector


def _merge(entries: Iterable[tuple[str, DesiredConnector]]) -> dict[str, DesiredConnector]:
    out: dict[str, DesiredConnector] = {}
    seen: dict[str, str] = {}
    for where, connector in entries:
        if connector.name in out:
            raise DesiredStateError(
                f"connector {connector.name!r} is declared twice: in {seen[connector.name]} and {where}"
            )
        out[connector.name], seen[connector.name] = connector, where
    return out
