"""The bundled predicates: TopicNameMatches, HasHeaderKey, RecordIsTombstone."""

from __future__ import annotations

import re
from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.records import ConnectRecord
from ..api.transforms import Predicate
from ._util import Composite, NonEmptyString, RegexValidator, invalid, java_regex, parse_config


def topic_name_matches_config_def() -> ConfigDef:
    return ConfigDef().define(
        "pattern",
        Type.STRING,
        validator=Composite(NonEmptyString(), RegexValidator()),
        importance=Importance.MEDIUM,
        documentation="A Java regular expression for matching against the name of a record's topic.",
    )


class TopicNameMatches(Predicate):
    """A predicate which is true for records with a topic name that matches the configured regular expression."""

    def configure(self, configs: dict[str, Any]) -> None:
        value = parse_config(topic_name_matches_config_def(), configs)["pattern"]
        try:
            self.pattern = re.compile(java_regex(value))
        except re.error as exc:
            raise invalid("pattern", value, f"entry must be a Java-compatible regular expression: {exc}") from None

    def config(self) -> ConfigDef:
        return topic_name_matches_config_def()

    def test(self, record: ConnectRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self.pattern.pattern}}}"


def has_header_key_config_def() -> ConfigDef:
    return ConfigDef().define(
        "name", Type.STRING, validator=NonEmptyString(), importance=Importance.MEDIUM, documentation="The header name."
    )


class HasHeaderKey(Predicate):
    """A predicate which is true for records with at least one header with the configured name."""

    def configure(self, configs: dict[str, Any]) -> None:
        self.name = parse_config(has_header_key_config_def(), configs)["name"]

    def config(self) -> ConfigDef:
        return has_header_key_config_def()

    def test(self, record: ConnectRecord) -> bool:
        return any(h.key == self.name for h in record.headers or ())

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"


class RecordIsTombstone(Predicate):
    """A predicate which is true for records which are tombstones (i.e. have null value)."""

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
