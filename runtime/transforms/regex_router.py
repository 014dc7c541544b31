"""RegexRouter: rename the topic with a regular expression and a replacement (Matcher.replaceFirst)."""

from __future__ import annotations

import logging
import re
from typing import Any

from ..api.config import ConfigDef, Importance, Type
from ..api.records import ConnectRecord
from ..api.transforms import Transformation
from ._util import RegexValidator, java_regex, java_replacement, parse_config

log = logging.getLogger(__name__)

OVERVIEW_DOC = (
    "Update the record topic using the configured regular expression and replacement string.<p/>Under the "
    "hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. If the pattern matches the "
    "input topic, <code>java.util.regex.Matcher#replaceFirst()</code> is used with the replacement string "
    "to obtain the new topic."
)


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            "regex",
            Type.STRING,
            validator=RegexValidator(),
            importance=Importance.HIGH,
            documentation="Regular expression to use for matching.",
        )
        .define("replacement", Type.STRING, importance=Importance.HIGH, documentation="Replacement string.")
    )


class RegexRouter(Transformation):
    __doc__ = OVERVIEW_DOC

    def configure(self, configs: dict[str, Any]) -> None:
        values = parse_config(config_def(), configs)
        self.regex = re.compile(java_regex(values["regex"]))
        self.replacement = java_replacement(values["replacement"])

    def config(self) -> ConfigDef:
        return config_def()

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        # matches() must cover the whole topic; replaceFirst then rewrites that (whole) first match
        match = self.regex.fullmatch(record.topic)
        if match is None:
            return record
        topic = record.topic[: match.start()] + self.replacement(match) + record.topic[match.end() :]
        log.debug("Rerouting from topic '%s' to new topic '%s'", record.topic, topic)
        return record.new_record(topic=topic)
