"""The dlt sink's config keys, and their parsed form."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...api.config import AbstractConfig, ConfigDef, Importance, NonEmptyString, Range, Type, ValidString

DESTINATION = "destination"
CREDENTIALS = "destination.credentials"
DESTINATION_PREFIX = "destination."
DATASET = "dataset.name"
TABLE_FORMAT = "table.name.format"
WRITE_DISPOSITION = "write.disposition"
PK_MODE = "primary.key.mode"
PK_FIELDS = "primary.key.fields"
BATCH_SIZE = "batch.size"
FILE_FORMAT = "loader.file.format"
PIPELINES_DIR = "pipelines.dir"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"
# set by the connector in each task config: the task's dlt pipeline name
PIPELINE_NAME = "dlt.pipeline.name"

TOPIC_PLACEHOLDER = "${topic}"
# the column of a primitive record key when primary.key.fields does not name one
DEFAULT_KEY_COLUMN = "key"


def sink_config() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            DESTINATION,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The dlt destination: a name (duckdb, postgres, filesystem, snowflake, bigquery, ...) or "
            "the import path of a destination factory.",
            group="Destination",
            order_in_group=1,
        )
        .define(
            CREDENTIALS,
            Type.PASSWORD,
            None,
            importance=Importance.HIGH,
            documentation="The destination's credentials in dlt's form (a connection string, a DuckDB file path). "
            "Unset: dlt's own config (secrets.toml, DESTINATION__<NAME>__CREDENTIALS). Use a config provider "
            "(${file:...}) to keep secrets out of the connector config. Never logged.",
            group="Destination",
            order_in_group=2,
        )
        .define(
            DATASET,
            Type.STRING,
            None,
            importance=Importance.HIGH,
            documentation="The dataset (a schema in a database, a folder in a bucket). Default: the connector's name.",
            group="Destination",
            order_in_group=3,
        )
        .define(
            TABLE_FORMAT,
            Type.STRING,
            TOPIC_PLACEHOLDER,
            NonEmptyString(),
            Importance.MEDIUM,
            "The table of a record: ${topic} stands for the record's topic (names are normalized by dlt).",
            group="Tables",
            order_in_group=1,
        )
        .define(
            WRITE_DISPOSITION,
            Type.STRING,
            "append",
            ValidString.of("append", "merge"),
            Importance.HIGH,
            "append: every record adds a row. merge: a record replaces the row with its primary key, and a "
            "tombstone (null value) deletes it.",
            group="Tables",
            order_in_group=2,
        )
        .define(
            PK_MODE,
            Type.STRING,
            "record_key",
            ValidString.of("record_key", "record_value"),
            Importance.MEDIUM,
            "Where a merge takes the primary key from: record_key (the key's fields, or a primitive key as one "
            "column) or record_value (the value fields named in primary.key.fields).",
            group="Tables",
            order_in_group=3,
        )
        .define(
            PK_FIELDS,
            Type.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="record_key: the key fields to use (all when empty), or the column name of a primitive "
            f"key (default '{DEFAULT_KEY_COLUMN}'). record_value: the value fields forming the key (required).",
            group="Tables",
            order_in_group=4,
        )
        .define(
            BATCH_SIZE,
            Type.INT,
            50000,
            Range.at_least(1),
            Importance.MEDIUM,
            "Records buffered before a load; everything buffered is also loaded at each offset commit "
            "(offset.flush.interval.ms).",
            group="Loading",
            order_in_group=1,
        )
        .define(
            FILE_FORMAT,
            Type.STRING,
            None,
            importance=Importance.LOW,
            documentation="dlt's loader file format (parquet, jsonl, insert_values, csv). Default: the "
            "destination's preferred one.",
            group="Loading",
            order_in_group=2,
        )
        .define(
            PIPELINES_DIR,
            Type.STRING,
            None,
            importance=Importance.LOW,
            documentation="Where dlt keeps its working files. Default: a temporary directory per task (nothing "
            "in it is needed after a load: committed offsets live in the destination).",
            group="Loading",
            order_in_group=3,
        )
        .define(
            MAX_RETRIES,
            Type.INT,
            10,
            Range.at_least(0),
            Importance.MEDIUM,
            "Failed loads (or claims of partitions) tried again in a row before the task fails.",
            group="Loading",
            order_in_group=4,
        )
        .define(
            RETRY_BACKOFF_MS,
            Type.INT,
            3000,
            Range.at_least(0),
            Importance.LOW,
            "Wait before a failed load (or claim of partitions) is tried again: no load is tried meanwhile.",
            group="Loading",
            order_in_group=5,
        )
    )


@dataclass(frozen=True)
class SinkSettings:
    destination: str
    credentials: str | None
    destination_options: dict[str, str]
    dataset: str
    table_format: str
    merge: bool
    key_from_value: bool
    pk_fields: tuple[str, ...]
    batch_size: int
    file_format: str | None
    pipelines_dir: str | None
    max_retries: int
    retry_backoff_ms: int

    @classmethod
    def parse(cls, props: dict[str, Any]) -> SinkSettings:
        config = AbstractConfig(sink_config(), props)
        own = set(sink_config().names())
        options = {
            k[len(DESTINATION_PREFIX) :]: str(v)
            for k, v in props.items()
            if k.startswith(DESTINATION_PREFIX) and k not in own
        }
        return cls(
            destination=config.get(DESTINATION),
            credentials=config.get_password(CREDENTIALS),
            destination_options=options,
            dataset=config.get(DATASET) or props.get("name") or "kafka_connect",
            table_format=config.get(TABLE_FORMAT),
            merge=config.get(WRITE_DISPOSITION) == "merge",
            key_from_value=config.get(PK_MODE) == "record_value",
            pk_fields=tuple(config.get_list(PK_FIELDS)),
            batch_size=config.get_int(BATCH_SIZE),
            file_format=config.get(FILE_FORMAT) or None,
            pipelines_dir=config.get(PIPELINES_DIR) or None,
            max_retries=config.get_int(MAX_RETRIES),
            retry_backoff_ms=config.get_int(RETRY_BACKOFF_MS),
        )

    def table_for(self, topic: str) -> str:
        """The table name of `topic` before dlt normalizes it."""
        return self.table_format.replace(TOPIC_PLACEHOLDER, topic)


def safe_name(name: str) -> str:
    """A pipeline name dlt accepts (it becomes a directory name)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "connect"
