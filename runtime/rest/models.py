"""Request bodies, validated with pydantic; every problem becomes a 400 naming the field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

ConfigScalar = StrictStr | StrictBool | StrictInt | StrictFloat | None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConnectorOffset(_Strict):
    partition: dict[str, Any] | None = None
    offset: dict[str, Any] | None = None


class CreateConnectorRequest(_Strict):
    name: StrictStr | None = None
    config: dict[str, ConfigScalar] | None = None
    initial_state: StrictStr | None = None
    # KIP-995: the entries of PATCH /connectors/{c}/offsets' `offsets`, written before any task starts
    initial_offsets: list[ConnectorOffset] | None = None


class ConnectorOffsets(_Strict):
    offsets: list[ConnectorOffset] | None = None


class LoggerLevel(BaseModel):
    model_config = ConfigDict(extra="ignore")
    level: StrictStr | None = None


def stringify(value: Any) -> str | None:
    """Jackson's coercion of JSON scalars into config strings."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def config_map(raw: dict[str, Any]) -> dict[str, str | None]:
    return {k: stringify(v) for k, v in raw.items()}


_UNION_TAGS = {"str", "bool", "int", "float", "none", "function-plain[none_validator()]"}


def describe(error: ValidationError) -> str:
    """One readable line per problem, naming the field as a JSON path."""
    parts: list[str] = []
    seen: set[str] = set()
    for item in error.errors():
        loc = [str(p) for p in item.get("loc", ()) if p != "__root__"]
        union = bool(loc) and loc[-1] in _UNION_TAGS
        if union:
            loc = loc[:-1]
        location = ".".join(loc) or "body"
        if location in seen:
            continue
        seen.add(location)
        kind = item.get("type", "")
        if kind == "extra_forbidden":
            parts.append(f'Unrecognized field "{location.split(".")[-1]}" at {location}')
        elif union:
            parts.append(f"Invalid value at {location}: must be a string, number, boolean or null")
        elif kind in ("model_type", "dict_type", "list_type"):
            parts.append(f"Cannot deserialize value at {location}: {item.get('msg')}")
        else:
            parts.append(f"Invalid value at {location}: {item.get('msg')}")
    return "; ".join(parts)


CONFIG_MAP_SCHEMA = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "null"]}}
