"""One SparkSession per worker process, shared by every Spark task, started on first use.

Starting a session costs 10-15 s and a JVM, so tasks never start their own: they call
`get_spark(config)`. The first caller's `spark.master` and `spark.*` settings build the session;
later callers' runtime-settable SQL options are applied, anything else that differs is logged
(a JVM's static configuration cannot change while it runs).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
LOG_LEVEL_KEY = "spark.log.level"
_DEFAULTS = {
    # Arrow makes pandas/pyarrow <-> Spark conversions ~3x faster than row-by-row pickling.
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
}

_lock = threading.Lock()
_session: SparkSession | None = None
_applied: dict[str, str] = {}


def spark_settings(config: Mapping[str, Any]) -> dict[str, str]:
    """The `spark.*` keys of a connector config (the connector's own keys excluded)."""
    return {k: str(v) for k, v in config.items() if k.startswith("spark.") and k != LOG_LEVEL_KEY}


def get_spark(config: Mapping[str, Any] | None = None) -> SparkSession:
    """The worker's shared session, created lazily and thread-safely from `config`'s spark.* keys."""
    global _session
    config = config or {}
    wanted = spark_settings(config)
    with _lock:
        if _session is None:
            _session = _build(wanted, str(config.get(LOG_LEVEL_KEY) or "WARN"))
            _applied.update(wanted)
        else:
            _reconcile(_session, wanted)
        return _session


def _build(settings: dict[str, str], log_level: str) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("kafka-connect-spark").master(settings.get("spark.master", DEFAULT_MASTER))
    for key, value in {**_DEFAULTS, **settings}.items():
        if key != "spark.master":
            builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level.upper())
    log.info("Started the shared SparkSession (master %s)", session.sparkContext.master)
    return session


def _reconcile(session: SparkSession, wanted: dict[str, str]) -> None:
    for key, value in wanted.items():
        if _applied.get(key) == value:
            continue
        if key.startswith("spark.sql.") and session.conf.isModifiable(key):
            session.conf.set(key, value)
            _applied[key] = value
        else:
            log.warning(
                "Spark setting %s=%s ignored: the shared SparkSession already runs with %s",
                key,
                value,
                _applied.get(key),
            )


def stop_spark() -> None:
    """Stop the shared session (tests, worker shutdown); the next `get_spark` starts a new one."""
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None
            _applied.clear()
