"""KIP-821 field paths (`field.syntax.version`): V1 is one top-level name, V2 a dotted path with backticks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api.config import ConfigDef, Importance, Type, ValidString
from ..api.data import Field, Schema
from ..api.errors import ConfigError
from ._util import invalid, require_map, require_struct

FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
FIELD_SYNTAX_VERSION_DOC = (
    "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access "
    "the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested "
    "elements. To access nested elements, dotted notation is used. If dots are already included in the field name, "
    "then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a "
    'field named "foo.bar" in a struct/map the following format can be used to access its elements: '
    '"`foo.bar`.baz".'
)


def append_syntax_version(definition: ConfigDef) -> ConfigDef:
    return definition.define(
        FIELD_SYNTAX_VERSION_CONFIG,
        Type.STRING,
        "V1",
        ValidString.of("V1", "V2", case_insensitive=True),
        importance=Importance.HIGH,
        documentation=FIELD_SYNTAX_VERSION_DOC,
    )


def syntax_version(values: Mapping[str, Any]) -> str:
    version = str(values[FIELD_SYNTAX_VERSION_CONFIG]).upper()
    if version not in ("V1", "V2"):
        raise invalid(
            FIELD_SYNTAX_VERSION_CONFIG, values[FIELD_SYNTAX_VERSION_CONFIG], "Unrecognized field syntax version"
        )
    return version


def _incomplete(path: str, at: int) -> ConfigError:
    return ConfigError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at "
        f"position {at} to escape it"
    )


def parse_v2(path: str) -> list[str]:
    """Split a V2 path into steps: dots separate, `...` quotes a step, \\` escapes a backtick inside quotes."""
    steps: list[str] = []
    i = 0
    while 0 <= i < len(path):
        if path[i] != "`":
            dot = path.find(".", i)
            if dot >= 0:
                steps.append(path[i:dot])
                i = dot + 1
            else:
                steps.append(path[i:])
                i = len(path)
            continue
        opened = i
        i += 1
        start = i
        name: list[str] = []
        while True:
            i = path.find("`", i)
            if i == -1:
                raise _incomplete(path, opened)
            escaped = path[i - 1] == "\\"
            if i >= len(path) - 1:
                if escaped:
                    raise _incomplete(path, opened)
                name.append(path[start:i])
                steps.append("".join(name))
                i += 1
                break
            if path[i + 1] != ".":
                i += 1
                continue
            if escaped:
                name.append(path[start : i - 1] + "`")
                i += 1
                start = i
                continue
            name.append(path[start:i])
            steps.append("".join(name))
            i += 2
            break
    if path.endswith("."):
        steps.append("")
    return steps


class SingleFieldPath:
    def __init__(self, text: str, version: str) -> None:
        self.version = version
        self.steps = [text] if version == "V1" else parse_v2(text)

    def field_from(self, schema: Schema | None) -> Field | None:
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step) if current.type == "struct" else None
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1]) if current.type == "struct" else None

    def value_from_struct(self, struct: dict | None, schema: Schema, with_default: bool = True) -> Any:
        if struct is None:
            return None
        current, current_schema = struct, schema
        for step in self.steps[:-1]:
            field = current_schema.field(step)
            if field is None:
                return None
            sub = current.get(step)
            if sub is None:
                sub = field.schema.default
            if sub is None:
                return None
            current = require_struct(sub, field.schema, "nested field access")
            current_schema = field.schema
        field = current_schema.field(self.steps[-1])
        if field is None:
            return None
        value = current.get(field.name)
        return field.schema.default if value is None and with_default else value

    def value_from_map(self, mapping: dict | None) -> Any:
        if mapping is None:
            return None
        current = mapping
        for step in self.steps[:-1]:
            sub = current.get(step)
            if sub is None:
                return None
            current = require_map(sub, "nested field access")
        return current.get(self.steps[-1])

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version}, path={'.'.join(self.steps)}}}"
