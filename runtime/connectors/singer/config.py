"""The Singer source connector's settings."""

from __future__ import annotations

from ...api import ConfigDef, Importance, NonEmptyString, Range, Type

TAP = "tap"
TAP_CONFIG = "tap.config"
TAP_CATALOG = "tap.catalog"
TAP_CATALOG_FLAG = "tap.catalog.flag"
STREAMS = "streams"
REPLICATION_KEYS = "replication.keys"
TOPIC_PREFIX = "topic.prefix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_SIZE = "batch.size"
DISCOVER_TIMEOUT_MS = "discover.timeout.ms"
STOP_TIMEOUT_MS = "tap.stop.timeout.ms"
# set by the connector in each task's config: the catalog of the streams that task syncs
TASK_CATALOG = "singer.task.catalog"

GROUP = "Singer"


def config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(
            TAP,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="The tap's executable: a command on the worker's PATH (tap-postgres) or a path "
            "(/opt/taps/tap-postgres/bin/tap-postgres, e.g. in the tap's own virtualenv).",
            group=GROUP,
            order_in_group=1,
        )
        .define(
            TAP_CONFIG,
            Type.PASSWORD,
            "{}",
            importance=Importance.HIGH,
            documentation="The tap's config, a JSON object (written to a file only this user can read and "
            "given with --config). Secrets belong in config provider references, e.g. "
            '{"password": "${file:/etc/secrets/pg.properties:password}"}; never logged or shown.',
            group=GROUP,
            order_in_group=2,
        )
        .define(
            STREAMS,
            Type.LIST,
            "",
            importance=Importance.HIGH,
            documentation="The tap_stream_ids to sync (from the tap's catalog, shown as recommended values by "
            "the validate endpoint); empty: every stream of the catalog.",
            group=GROUP,
            order_in_group=3,
        )
        .define(
            REPLICATION_KEYS,
            Type.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="Incremental replication: stream=column entries, e.g. public-orders=updated_at. Those "
            "streams are synced INCREMENTAL on that column; the others as the tap's catalog says (usually "
            "FULL_TABLE: every run reads the whole stream again).",
            group=GROUP,
            order_in_group=4,
        )
        .define(
            TOPIC_PREFIX,
            Type.STRING,
            validator=NonEmptyString(),
            importance=Importance.HIGH,
            documentation="Each stream's records go to the topic <topic.prefix><tap_stream_id> (characters "
            "Kafka does not allow in topic names become '_').",
            group=GROUP,
            order_in_group=5,
        )
        .define(
            POLL_INTERVAL_MS,
            Type.LONG,
            60_000,
            Range.at_least(0),
            Importance.MEDIUM,
            "How long to wait after a run of the tap has ended before the next run starts from the latest state.",
            group=GROUP,
            order_in_group=6,
        )
        .define(
            TAP_CATALOG,
            Type.STRING,
            "",
            importance=Importance.LOW,
            documentation="A catalog to use instead of the tap's --discover output: a path to a JSON file, or "
            "the JSON itself.",
            group=GROUP,
            order_in_group=7,
        )
        .define(
            TAP_CATALOG_FLAG,
            Type.STRING,
            "--catalog",
            importance=Importance.LOW,
            documentation="The option the tap reads its catalog from: --catalog, or --properties for older taps.",
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
            DISCOVER_TIMEOUT_MS,
            Type.LONG,
            120_000,
            Range.at_least(1),
            Importance.LOW,
            "How long the tap's --discover may take (at validation and when the connector starts).",
            group=GROUP,
            order_in_group=10,
        )
        .define(
            STOP_TIMEOUT_MS,
            Type.LONG,
            5_000,
            Range.at_least(0),
            Importance.LOW,
            "When a task stops, how long its tap has to exit after SIGTERM before it is killed.",
            group=GROUP,
            order_in_group=11,
        )
        .define_internal(TASK_CATALOG, Type.STRING, "")
    )
