"""Conformance: root, health, empty listing, plugins, plugin config, validate, routing basics.

This module runs first (file order), while both workers have no connectors yet.
"""

from __future__ import annotations

from typing import Any

import pytest

from .harness import ORACLE, OURS, Conformance, Deliberate
from .scenario import SINK, SINK_OWN_KEYS, SOURCE, SOURCE_OWN_KEYS, source_config

pytestmark = pytest.mark.oracle

ERROR_400_NOT_500 = "every bad request is a 4xx with a clear message, never a 500"


def test_root_health_and_empty_listing(cf: Conformance) -> None:
    cf.call("GET", "/connectors", status=200, label="fresh worker lists no connectors")
    root = cf.call("GET", "/", status=200)
    cf.call("GET", "/health", status=200)
    # kafka_cluster_id is normalised away for the golden file; live, both must name the same broker.
    ids = {name: a.raw.get("kafka_cluster_id") for name, a in root.answers.items() if isinstance(a.raw, dict)}
    if ORACLE in ids and OURS in ids and ids[ORACLE] != ids[OURS]:
        cf.note(f"GET /: kafka_cluster_id differs on the same broker: oracle {ids[ORACLE]!r}, ours {ids[OURS]!r}")


FILE_SIMPLE_NAMES = (SINK.rsplit(".", 1)[1], SOURCE.rsplit(".", 1)[1])


def _file_plugins(body: Any) -> Any:
    """Our list may hold more plugins; the reference's FileStream entries must be there, identical.

    Entries are picked by simple class name so that a differing package shows up in the diff.
    """
    return [p for p in body if str(p.get("class", "")).rsplit(".", 1)[-1] in FILE_SIMPLE_NAMES]


def _errors_only(body: Any) -> Any:
    """A validate answer cut to what identifies the result: name, error_count, per-key errors."""
    errors = {
        c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c.get("value") and c["value"]["errors"]
    }
    return {"name": body["name"], "error_count": body["error_count"], "errors": errors}


def test_connector_plugins(cf: Conformance) -> None:
    cf.call("GET", "/connector-plugins", status=200, project=_file_plugins)
    cf.call("GET", "/connector-plugins", params={"connectorsOnly": "true"}, status=200, project=_file_plugins)
    cf.call("GET", "/connector-plugins/", status=200, project=_file_plugins, label="trailing slash")


def _own_keys(own: tuple[str, ...]):
    def project(body: Any) -> Any:
        keys = [k for k in body if k["name"] in own]
        return [{f: k[f] for f in ("name", "type", "required", "default_value", "importance")} for k in keys]

    return project


def _all_key_names(body: Any) -> Any:
    return sorted(k["name"] for k in body)


@pytest.mark.parametrize(
    "plugin,own",
    [
        (SOURCE, SOURCE_OWN_KEYS),
        ("FileStreamSource", SOURCE_OWN_KEYS),
        ("FileStreamSourceConnector", SOURCE_OWN_KEYS),
        (SINK, SINK_OWN_KEYS),
    ],
)
def test_plugin_config(cf: Conformance, plugin: str, own: tuple[str, ...]) -> None:
    cf.call(
        "GET",
        f"/connector-plugins/{plugin}/config",
        status=200,
        project=_own_keys(own),
        label="own keys: name/type/required/default/importance, in order",
    )
    cf.call(
        "GET",
        f"/connector-plugins/{plugin}/config",
        status=200,
        project=_all_key_names,
        label="every key name (own + framework)",
    )


def test_plugin_config_errors(cf: Conformance) -> None:
    cf.call("GET", "/connector-plugins/com.example.NoSuchConnector/config", status=404)
    cf.call(
        "GET",
        "/connector-plugins/org.apache.kafka.connect.transforms.Filter/config",
        status=200,
        project=_all_key_names,
        label="a transformation's config (no framework keys)",
    )


def test_validate(cf: Conformance) -> None:
    cfg = source_config(name="<<v>>")
    cf.call(
        "PUT",
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        cfg,
        status=200,
        label="valid source config: full ConfigInfos body",
    )
    cf.call(
        "PUT",
        f"/connector-plugins/{SOURCE}/config/validate",
        cfg,
        status=200,
        project=_errors_only,
        label="same, path by class name",
    )
    bad = source_config(name="<<v>>", **{"batch.size": "lots"})
    cf.call(
        "PUT",
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        bad,
        status=200,
        project=_errors_only,
        label="invalid value: 200 with error_count 1",
    )
    sink = {"connector.class": SINK, "name": "<<v>>", "tasks.max": "1", "file": "<<dir>>/x"}
    cf.call(
        "PUT",
        "/connector-plugins/FileStreamSinkConnector/config/validate",
        sink,
        status=200,
        label="sink without topics/topics.regex: 2 errors",
    )
    cf.call(
        "PUT",
        "/connector-plugins/FileStreamSinkConnector/config/validate",
        cfg,
        status=400,
        label="connector.class does not match the path plugin",
    )
    no_class = {"name": "<<v>>", "tasks.max": "1", "topic": "t"}
    cf.call(
        "PUT",
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        no_class,
        status=500,
        deliberate=Deliberate(
            "the validate endpoint uses 400 for a request it cannot interpret; no class-name prefix",
            400,
            ("connector type",),
        ),
        label="validate without connector.class",
    )
    unknown = {"connector.class": "com.example.NoSuchConnector", "name": "<<v>>"}
    cf.call(
        "PUT",
        "/connector-plugins/NoSuchConnector/config/validate",
        unknown,
        status=500,
        deliberate=Deliberate("unknown connector.class is 400 naming the class", 400, ("com.example.NoSuchConnector",)),
        label="validate with an unknown connector.class",
    )
    cf.call(
        "POST",
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        cfg,
        status=405,
        label="POST on validate is 405",
    )


def test_routing_basics(cf: Conformance) -> None:
    cf.call("GET", "/no/such/path", status=404, label="unknown URL")
    cf.call("GET", "/connectors/<<nope>>", status=404)
    cf.call("GET", "/connectors/<<nope>>/status", status=404)
    cf.call("GET", "/connectors/<<nope>>/tasks/notanint/status", status=404, label="non-integer task id")
    cf.call("DELETE", "/", status=405, label="DELETE on the root")
