"""OpenLineage datasets of a connector, for operators' `get_openlineage_facets_on_complete`.

Kafka topics follow OpenLineage's Kafka naming (namespace `kafka://<first bootstrap host:port>`, name = the
topic); the bootstrap servers come from the connector's own `producer.override.` / `consumer.override.`
settings, else from the Airflow connection's extra `kafka_bootstrap_servers` (the worker's cluster is not
visible through the REST API). Files (FileStream connectors' `file`) and the Spark connectors' `path` are
`file` datasets. A source reads its file or dataset and writes its topics; a sink the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SINK_TOPIC_KEYS = ("topics", "topics.regex")
LOCATION_KEYS = ("file", "path")  # FileStream connectors; the Spark connectors' dataset


def kafka_namespace(config: Mapping[str, str], default_bootstrap: str | None) -> str | None:
    servers = (
        config.get("producer.override.bootstrap.servers")
        or config.get("consumer.override.bootstrap.servers")
        or default_bootstrap
        or ""
    )
    first = servers.split(",")[0].strip()
    if not first:
        return None
    if "://" in first:  # a listener-style entry, e.g. SASL_SSL://host:9093
        first = first.split("://", 1)[1]
    return f"kafka://{first}"


def connector_datasets(
    config: Mapping[str, str], active_topics: list[str], default_bootstrap: str | None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(inputs, outputs) as (namespace, name) pairs."""
    is_sink = any(config.get(k) for k in SINK_TOPIC_KEYS)
    topics = set(active_topics)
    if is_sink:
        topics.update(t.strip() for t in (config.get("topics") or "").split(",") if t.strip())
    elif config.get("topic"):
        topics.add(config["topic"].strip())
    namespace = kafka_namespace(config, default_bootstrap)
    kafka = [(namespace, t) for t in sorted(topics)] if namespace else []
    files = []
    for key in LOCATION_KEYS:
        location = (config.get(key) or "").strip()
        if location:
            files.append(
                ("file", "/" + location[len("file:") :].lstrip("/") if location.startswith("file:") else location)
            )
    return (kafka, files) if is_sink else (files, kafka)


def operator_lineage(hook: Any, connector: str) -> Any:
    """OperatorLineage of a connector as it is now on the hook's cluster (empty when it is gone)."""
    from airflow.providers.common.compat.openlineage.facet import Dataset
    from airflow.providers.openlineage.extractors import OperatorLineage

    info = hook.get_connector_or_none(connector)
    if info is None:
        return OperatorLineage()
    try:
        active = hook.get_connector_topics(connector)
    except Exception:  # noqa: BLE001 - topic tracking may be disabled on the worker
        active = []
    inputs, outputs = connector_datasets(info.get("config") or {}, active, hook.settings.kafka_bootstrap_servers)
    return OperatorLineage(
        inputs=[Dataset(namespace=n, name=d) for n, d in inputs],
        outputs=[Dataset(namespace=n, name=d) for n, d in outputs],
    )


__all__ = ["connector_datasets", "kafka_namespace", "operator_lineage"]
