"""Config keys shared by the Spark sink and source connectors."""

from __future__ import annotations

from ...api.config import ConfigDef, Importance, NonEmptyString, Type, ValidString
from .dataset import FORMATS
from .session import DEFAULT_MASTER, LOG_LEVEL_KEY

PATH = "path"
FORMAT = "format"
MASTER = "spark.master"


def common_config() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            PATH,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The dataset directory (local or locally mounted; `file:` URIs accepted).",
        )
        .define(
            FORMAT,
            Type.STRING,
            "parquet",
            ValidString.of(*FORMATS, case_insensitive=True),
            Importance.HIGH,
            "File format of the dataset: parquet, orc, json or csv.",
        )
        .define(
            MASTER,
            Type.STRING,
            DEFAULT_MASTER,
            importance=Importance.MEDIUM,
            documentation="Spark master of the worker's shared SparkSession. Every other `spark.*` key "
            "of the connector config is passed to Spark too.",
        )
        .define(
            LOG_LEVEL_KEY,
            Type.STRING,
            "WARN",
            ValidString.of("ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF", case_insensitive=True),
            Importance.LOW,
            "Log level of Spark (kept quiet unless asked).",
        )
    )
