"""Kafka's StringConverter: values as text in a configurable character set.

Reading always yields an optional string schema. Serializing a non-str value uses `str(value)`.
Like Java's `new String(bytes, charset)` and `String.getBytes(charset)`, undecodable input and
unencodable characters are replaced rather than rejected.
"""

from __future__ import annotations

import codecs
from typing import Any

from ..api.config import ConfigDef, Importance, Type, Width
from ..api.data import OPTIONAL_STRING_SCHEMA, Schema
from ..api.errors import ConfigError
from .base import Converter
from .json import CONVERTER_TYPE_CONFIG, converter_config_def

ENCODING_CONFIG = "converter.encoding"
ENCODING_DEFAULT = "UTF-8"


def string_converter_config_def() -> ConfigDef:
    return converter_config_def().define(
        ENCODING_CONFIG,
        Type.STRING,
        ENCODING_DEFAULT,
        importance=Importance.HIGH,
        documentation="The name of the Java character set to use for encoding strings as byte arrays.",
        width=Width.MEDIUM,
        display_name="Encoding",
    )


class StringConverter(Converter):
    """org.apache.kafka.connect.storage.StringConverter."""

    def __init__(self) -> None:
        self.encoding = "utf-8"
        self.is_key = False

    def config(self) -> ConfigDef:
        return string_converter_config_def()

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        props = dict(configs)
        props[CONVERTER_TYPE_CONFIG] = "key" if is_key else "value"
        values = string_converter_config_def().parse(props)
        try:
            self.encoding = codecs.lookup(values[ENCODING_CONFIG]).name
        except LookupError:
            raise ConfigError(ENCODING_CONFIG, values[ENCODING_CONFIG], "Unsupported character encoding") from None
        self.is_key = is_key

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        text = value if type(value) is str else str(value)
        return text.encode(self.encoding, "replace")

    def to_connect_data(self, topic: str, value: bytes | None) -> tuple[Schema | None, Any]:
        if value is None:
            return OPTIONAL_STRING_SCHEMA, None
        raw = value if type(value) is bytes else bytes(value)
        return OPTIONAL_STRING_SCHEMA, raw.decode(self.encoding, "replace")
