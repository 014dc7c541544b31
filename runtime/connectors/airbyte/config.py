"""The Airbyte source connector's settings."""

from __future__ import annotations

from ...api import ConfigDef, Importance, NonEmptyString, Range, Type, ValidString

SOURCE = "source"
SOURCE_CONFIG = "source.config"
SOURCE_MANIFEST = "source.manifest"
STREAMS = "streams"
SYNC_MODE = "sync.mode"
CURSOR_FIELDS = "cursor.fields"
TOPIC_PREFIX = "topic.prefix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_SIZE = "batch.size"
COMMAND_TIMEOUT_MS = "command.timeout.ms"
STOP_TIMEOUT_MS = "source.stop.timeout.ms"
# set by the connector in each task's config: the configured catalog of the streams that task reads
TASK_CATALOG = "airbyte.task.catalog"

GROUP = "Airbyte"

# the key of the config holding a declarative manifest for airbyte-cdk's source-declarative-manifest
INJECTED_MANIFEST = "__injected_declarative_manifest"


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            SOURCE,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The source's executable: a command on the worker's PATH (source-faker) or a path "
            "(/opt/airbyte/source-faker/bin/source-faker), or source-declarative-manifest (airbyte-cdk) with "
            "source.manifest.",
            group=GROUP,
            order_in_group=1,
        )
        .define(
            SOURCE_CONFIG,
            Type.PASSWORD,
            "{}",
            importance=Importance.HIGH,
            documentation="The source's config, a JSON object checked against the source's spec and by its "
            "check at validation. Secrets belong in config provider references; never logged or shown.",
            group=GROUP,
            order_in_group=2,
        )
        .define(
            STREAMS,
            Type.LIST,
            "",
            importance=Importance.HIGH,
            documentation="The streams to read (names from the source's catalog, shown as recommended values "
            "by the validate endpoint); empty: every stream.",
            group=GROUP,
            order_in_group=3,
        )
        .define(
            SYNC_MODE,
            Type.STRING,
            "incremental",
            ValidString.of("incremental", "full_refresh"),
            Importance.MEDIUM,
            "incremental: streams that support it are read from their state (the others in full); full_refresh: "
            "every run reads every stream in full.",
            group=GROUP,
            order_in_group=4,
        )
        .define(
            CURSOR_FIELDS,
            Type.LIST,
            "",
            importance=Importance.LOW,
            documentation="stream=field entries: the cursor of incremental streams whose source lets the user "
            "choose it (otherwise the source's default cursor).",
            group=GROUP,
            order_in_group=5,
        )
        .define(
            TOPIC_PREFIX,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="Each stream's records go to the topic <topic.prefix><stream> (<namespace>.<stream> "
            "for streams with a namespace; characters Kafka does not allow in topic names become '_').",
            group=GROUP,
            order_in_group=6,
        )
        .define(
            POLL_INTERVAL_MS,
            Type.LONG,
            60_000,
            Range.at_least(0),
            Importance.MEDIUM,
            "How long to wait after a read has ended before the next read starts from the latest state.",
            group=GROUP,
            order_in_group=7,
        )
        .define(
            SOURCE_MANIFEST,
            Type.STRING,
            "",
            importance=Importance.LOW,
            documentation="A declarative manifest (a YAML or JSON file) for source-declarative-manifest: given to "
            f"the source in its config under {INJECTED_MANIFEST}.",
            group=GROUP,
            order_in_group=8,
        )
        .define(
            BATCH_SIZE,
            Type.INT,
            2000,
            Range.at_least(1),
            Importance.LOW,
            "The most records one poll returns.",
            group=GROUP,
            order_in_group=9,
        )
        .define(
            COMMAND_TIMEOUT_MS,
            Type.LONG,
            120_000,
            Range.at_least(1),
            Importance.LOW,
            "How long the source's spec, check and discover may each take.",
            group=GROUP,
            order_in_group=10,
        )
        .define(
            STOP_TIMEOUT_MS,
            Type.LONG,
            5_000,
            Range.at_least(0),
            Importance.LOW,
            "When a task stops, how long its source has to exit after SIGTERM before it is killed.",
            group=GROUP,
            order_in_group=11,
        )
        .define_internal(TASK_CATALOG, Type.STRING, "")
    )
