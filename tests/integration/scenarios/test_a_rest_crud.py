"""Section 4 group A (root, plugins, CRUD, validation) and section 8's client needs, against a real worker."""

from __future__ import annotations

import re

import pytest

from tests.support.broker import unique
from tests.support.worker import wait_for

from .helpers import (
    FILE_SINK,
    FILE_SOURCE,
    INFO_KEYS,
    SINK,
    SOURCE,
    STATUS_KEYS,
    assert_error,
    source_config,
)

pytestmark = pytest.mark.integration

SOURCE_FRAMEWORK_KEYS = {
    "name",
    "connector.class",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
    "config.action.reload",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
    "topic.creation.groups",
    "exactly.once.support",
    "transaction.boundary",
    "transaction.boundary.interval.ms",
    "offsets.storage.topic",
}
SINK_FRAMEWORK_KEYS = {
    "name",
    "connector.class",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
    "config.action.reload",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
    "topics",
    "topics.regex",
    "errors.deadletterqueue.topic.name",
    "errors.deadletterqueue.topic.replication.factor",
    "errors.deadletterqueue.context.headers.enable",
}
HOST_PORT = re.compile(r"^[^\s:]+:\d+$")


# --- 1-3: root and plugins -----------------------------------------------------------------------------
def test_root_reports_version_commit_and_cluster_id(api) -> None:
    response = api.get("/")
    assert response.status_code == 200
    body = response.json()
    assert {"version", "commit", "kafka_cluster_id"} <= set(body)
    # clients gate features on a Kafka-like version (offsets >= 3.6)
    major, minor = (int(x) for x in body["version"].split(".")[:2])
    assert (major, minor) >= (3, 6), body
    assert body["kafka_cluster_id"], body


def test_fresh_worker_lists_no_connectors(bootstrap_servers, tmp_path) -> None:
    from tests.support.worker import WorkerProcess

    from .helpers import Api

    with WorkerProcess(tmp_path / "fresh", bootstrap_servers) as proc:
        client = Api(proc.url)
        response = client.get("/connectors")
        assert response.status_code == 200
        assert response.json() == []
        client.close()


def test_plugins_list_file_connectors_with_class_and_type(api) -> None:
    response = api.get("/connector-plugins")
    assert response.status_code == 200
    plugins = response.json()
    assert all({"class", "type"} <= set(p) for p in plugins), plugins
    by_class = {p["class"]: p["type"] for p in plugins}
    # the file connectors may be listed under this project's or the reference's class name
    assert [t for c, t in by_class.items() if c.endswith(".FileStreamSourceConnector")] == ["source"], by_class
    assert [t for c, t in by_class.items() if c.endswith(".FileStreamSinkConnector")] == ["sink"], by_class
    assert by_class.get(SOURCE) == "source" and by_class.get(SINK) == "sink", by_class
    # connectorsOnly defaults to true: only connectors listed
    assert set(by_class.values()) <= {"source", "sink"}
    everything = api.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    assert {p["type"] for p in everything} >= {"source", "sink", "converter"}


# --- 4-5: validate ---------------------------------------------------------------------------------------
def test_validate_source_lists_framework_and_connector_keys(api, tmp_path) -> None:
    config = {
        "connector.class": FILE_SOURCE,
        "name": "v",
        "topic": "t",
        "file": str(tmp_path / "in.txt"),
        "tasks.max": "1",
    }
    response = api.put("/connector-plugins/FileStreamSourceConnector/config/validate", config)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["name"] == FILE_SOURCE
    assert body["error_count"] == 0, body
    names = {c["definition"]["name"] for c in body["configs"] if c["definition"]}
    assert names == SOURCE_FRAMEWORK_KEYS | {"file", "topic", "batch.size"}, names ^ (
        SOURCE_FRAMEWORK_KEYS | {"file", "topic", "batch.size"}
    )
    assert isinstance(body["groups"], list) and body["groups"]


def test_validate_sink_lists_framework_and_connector_keys(api, tmp_path) -> None:
    config = {"connector.class": FILE_SINK, "name": "v", "topics": "t", "file": str(tmp_path / "out.txt")}
    response = api.put("/connector-plugins/FileStreamSinkConnector/config/validate", config)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["error_count"] == 0, body
    names = {c["definition"]["name"] for c in body["configs"] if c["definition"]}
    assert names == SINK_FRAMEWORK_KEYS | {"file"}, names ^ (SINK_FRAMEWORK_KEYS | {"file"})


def test_validate_rejects_mismatched_or_missing_class(api) -> None:
    mismatch = api.put(
        "/connector-plugins/FileStreamSinkConnector/config/validate", {"connector.class": FILE_SOURCE, "topic": "t"}
    )
    assert_error(
        mismatch, 400, f"Included connector type {FILE_SOURCE} does not match request type FileStreamSinkConnector"
    )
    missing = api.put("/connector-plugins/FileStreamSourceConnector/config/validate", {"topic": "t"})
    body = assert_error(missing, 400, "contains no connector type")
    assert not body["message"].startswith("org."), body  # section 0: no class-name prefix


def test_validate_with_post_is_405(api) -> None:
    response = api.post(
        "/connector-plugins/FileStreamSourceConnector/config/validate", {"connector.class": FILE_SOURCE}
    )
    assert_error(response, 405)


def test_plugin_config_lists_own_keys_and_unknown_plugin_is_404(api) -> None:
    response = api.get("/connector-plugins/FileStreamSourceConnector/config")
    assert response.status_code == 200
    keys = response.json()
    assert [k["name"] for k in keys][:3] and {"file", "topic", "batch.size"} <= {k["name"] for k in keys}
    assert {
        "name",
        "type",
        "required",
        "default_value",
        "importance",
        "documentation",
        "group",
        "order",
        "width",
        "display_name",
        "dependents",
    } <= set(keys[0])
    assert_error(api.get("/connector-plugins/NoSuchPlugin/config"), 404, "Unknown plugin NoSuchPlugin.")


# --- 6-9: create, conflict, info, tasks ---------------------------------------------------------------------
def test_create_then_get_info_config_tasks(api, name, mode) -> None:
    config = source_config(unique("topic"), tasks=1, messages_per_task=0)
    response = api.post("/connectors", {"name": name, "config": config})
    assert response.status_code == 201, response.text
    assert response.headers["location"].endswith(f"/connectors/{name}")
    created = response.json()
    assert set(created) == INFO_KEYS
    assert created["name"] == name and created["type"] == "source"
    assert created["config"] == {**config, "name": name}
    # contract 1.3: standalone answers once the tasks exist; distributed from its snapshot, before them
    assert created["tasks"] == ([{"connector": name, "task": 0}] if mode == "standalone" else [])

    assert name in api.get("/connectors").json()
    info = wait_for(lambda: (body := api.get(f"/connectors/{name}").json())["tasks"] and body, 30, what="task configs")
    assert info == {
        "name": name,
        "config": {**config, "name": name},
        "tasks": [{"connector": name, "task": 0}],
        "type": "source",
    }
    assert api.get(f"/connectors/{name}/config").json() == {**config, "name": name}

    tasks = api.get(f"/connectors/{name}/tasks").json()
    assert len(tasks) == 1 and tasks[0]["id"] == {"connector": name, "task": 0}
    assert "task.class" in tasks[0]["config"]

    again = api.post("/connectors", {"name": name, "config": config})
    assert_error(again, 409, f"Connector {name} already exists")


def test_config_provider_references_stay_unresolved(api, name) -> None:
    config = source_config(unique("topic"), messages_per_task=0, **{"extra.secret": "${env:HOME}"})
    api.create(name, config)
    assert api.get(f"/connectors/{name}/config").json()["extra.secret"] == "${env:HOME}"
    api.wait_state(name, "RUNNING", 1)
    tasks = api.get(f"/connectors/{name}/tasks").json()
    # the task config may or may not carry unknown keys; where it does they must be unresolved
    assert tasks[0]["config"].get("extra.secret", "${env:HOME}") == "${env:HOME}"


# --- 10-15: PUT/POST names and validation -------------------------------------------------------------------
def test_put_config_updates_existing_and_creates_new(api, name, kafka) -> None:
    topic = unique("topic")
    api.create(name, source_config(topic, tasks=1, messages_per_task=0))
    updated = api.put(f"/connectors/{name}/config", source_config(topic, tasks=2, messages_per_task=0))
    assert updated.status_code == 200, updated.text
    assert updated.json()["config"]["tasks.max"] == "2"
    api.wait_state(name, "RUNNING", 2)

    other = unique("put-created")
    created = api.put(f"/connectors/{other}/config", source_config(topic, messages_per_task=0))
    assert created.status_code == 201, created.text
    assert created.headers["location"].endswith(f"/connectors/{other}")
    assert created.json()["config"]["name"] == other  # URL name injected into the config


def test_name_mismatch_is_400(api, name) -> None:
    put = api.put(f"/connectors/{name}/config", {**source_config("t"), "name": "other"})
    assert_error(put, 400, f"Connector name configuration (other) doesn't match connector name in the URL ({name})")
    post = api.post("/connectors", {"name": name, "config": {**source_config("t"), "name": "other"}})
    assert_error(post, 400, f"Connector name configuration (other) doesn't match connector name in the URL ({name})")
    assert api.get(f"/connectors/{name}").status_code == 404


def test_post_trims_the_name(api, name) -> None:
    response = api.post("/connectors", {"name": f"  {name}  ", "config": source_config("t", messages_per_task=0)})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == name
    assert api.get(f"/connectors/{name}").status_code == 200


@pytest.mark.parametrize("body_name", [None, "", "   "])
def test_post_missing_or_blank_name_is_400(api, body_name) -> None:
    body = {"config": source_config("t")}
    if body_name is not None:
        body["name"] = body_name
    response = api.post("/connectors", body)
    assert_error(response, 400, "Connector configuration is invalid and contains the following 1 error(s):")
    assert "String may not be empty" in response.json()["message"]
    assert "" not in api.get("/connectors").json()


def test_post_without_connector_class_is_400(api, name) -> None:
    response = api.post("/connectors", {"name": name, "config": {"topic": "t"}})
    assert_error(response, 400, "contains no connector type")
    assert api.get(f"/connectors/{name}").status_code == 404


def test_unknown_connector_class_is_400_naming_class_and_available(api, name) -> None:
    response = api.post("/connectors", {"name": name, "config": {"connector.class": "com.example.Nope"}})
    body = assert_error(response, 400, "com.example.Nope")
    assert "FileStreamSourceConnector" in body["message"], body  # lists available connectors
    assert api.get(f"/connectors/{name}").status_code == 404
    api.create(name, source_config("t", messages_per_task=0))
    update = api.put(f"/connectors/{name}/config", {"connector.class": "com.example.Nope"})
    assert_error(update, 400, "com.example.Nope")
    assert api.get(f"/connectors/{name}/config").json()["connector.class"] == SOURCE


def test_null_config_value_is_400_and_creates_nothing(api, name) -> None:
    response = api.post("/connectors", {"name": name, "config": {**source_config("t"), "batch.size": None}})
    assert_error(response, 400, "Null value can not be supplied as the configuration value.")
    assert api.get(f"/connectors/{name}").status_code == 404
    put = api.put(f"/connectors/{name}/config", {**source_config("t"), "batch.size": None})
    assert_error(put, 400, "Null value can not be supplied as the configuration value.")
    assert name not in api.get("/connectors").json()


@pytest.mark.parametrize(
    "content, field",
    [
        ('{"name": "x", "config": {"connector.class": "a"}, "bogus": 1}', "bogus"),
        ('{"name": "x", "config": "not-a-map"}', "config"),
        ('{"name": "x", "config": {}, "initial_state": "SLEEPING"}', "initial_state"),
        ('{"name": "x", "config": {', None),
    ],
    ids=["unknown-field", "wrong-type", "bad-enum", "invalid-json"],
)
def test_malformed_bodies_are_400_not_500(api, content, field) -> None:
    response = api.post("/connectors", content=content, headers={"Content-Type": "application/json"})
    body = assert_error(response, 400)
    if field:
        # the field may be named as written or in words ("initial state")
        assert field in body["message"] or field.replace("_", " ") in body["message"], body


# --- 16-19: PATCH, unknowns, DELETE, tasks.max changes ------------------------------------------------------
def test_patch_adds_changes_and_removes_keys(api, name) -> None:
    api.create(name, source_config(unique("topic"), tasks=2, messages_per_task=0, **{"to-be-deleted-key": "x"}))
    api.wait_state(name, "RUNNING", 2)
    response = api.patch(
        f"/connectors/{name}/config", {"tasks.max": "3", "to-be-added-key": "value", "to-be-deleted-key": None}
    )
    assert response.status_code == 200, response.text
    assert response.json()["config"]["tasks.max"] == "3"
    api.wait_state(name, "RUNNING", 3)
    config = api.get(f"/connectors/{name}/config").json()
    assert config["tasks.max"] == "3" and config["to-be-added-key"] == "value"
    assert "to-be-deleted-key" not in config and config["name"] == name


def test_unknown_connector_is_404_everywhere(api) -> None:
    c = unique("missing")
    assert_error(api.get(f"/connectors/{c}"), 404, f"Connector {c} not found")
    assert_error(api.get(f"/connectors/{c}/config"), 404, f"Connector {c} not found")
    assert_error(api.get(f"/connectors/{c}/tasks"), 404, f"Connector {c} not found")
    assert_error(api.patch(f"/connectors/{c}/config", {"a": "b"}), 404, f"Connector {c} not found")
    assert_error(api.delete(f"/connectors/{c}"), 404, f"Connector {c} not found")
    assert_error(api.get(f"/connectors/{c}/status"), 404, f"No status found for connector {c}")
    assert_error(api.get(f"/connectors/{c}/tasks/0/status"), 404, f"No status found for task {c}-0")
    assert_error(api.get("/no/such/url"), 404)


def test_delete_removes_connector_at_once(api, name) -> None:
    api.create(name, source_config(unique("topic"), messages_per_task=0))
    response = api.delete(f"/connectors/{name}")
    assert response.status_code == 204 and response.content == b""
    # standalone deletes synchronously: gone as soon as the request returns
    assert_error(api.get(f"/connectors/{name}/status"), 404)
    assert name not in api.get("/connectors").json()


def test_tasks_max_changes_show_exact_task_counts(api, name) -> None:
    topic = unique("topic")
    api.create(name, source_config(topic, tasks=1, throughput=10))
    api.wait_state(name, "RUNNING", 1)
    for count in (5, 3):
        response = api.put(f"/connectors/{name}/config", source_config(topic, tasks=count, throughput=10))
        assert response.status_code == 200, response.text
        status = api.wait_state(name, "RUNNING", count)
        assert [t["id"] for t in status["tasks"]] == list(range(count))


# --- 20-22: expand, task restart, tasks-config --------------------------------------------------------------
def test_expand_status_info_and_bogus(api, name) -> None:
    api.create(name, source_config(unique("topic"), messages_per_task=0))
    api.wait_state(name, "RUNNING", 1)
    status_only = api.get("/connectors", params={"expand": "status"}).json()
    assert set(status_only[name]) == {"status"}
    assert status_only[name]["status"]["connector"]["state"] == "RUNNING"
    info_only = api.get("/connectors", params={"expand": "info"}).json()
    assert set(info_only[name]) == {"info"} and info_only[name]["info"]["name"] == name
    both = api.get("/connectors?expand=status&expand=info").json()
    assert set(both[name]) == {"status", "info"}
    assert set(both[name]["status"]) == STATUS_KEYS and set(both[name]["info"]) == INFO_KEYS
    bogus = api.get("/connectors", params={"expand": "bogus"}).json()
    assert bogus[name] == {}


def test_failed_task_fixed_then_task_restart(api, name) -> None:
    topic = unique("topic")
    api.create(name, source_config(topic, messages_per_task=0, **{"task.start.fail": "all"}))
    status = api.wait_state(name, "RUNNING", 1, "FAILED")
    task = status["tasks"][0]
    assert task["trace"] and "task.start.fail" in task["trace"]  # section 8: FAILED carries trace
    assert HOST_PORT.match(task["worker_id"])
    task_status = api.get(f"/connectors/{name}/tasks/0/status").json()
    assert task_status["state"] == "FAILED" and task_status["id"] == 0 and task_status["trace"]

    assert api.put(f"/connectors/{name}/config", source_config(topic, messages_per_task=0)).status_code == 200
    response = api.post(f"/connectors/{name}/tasks/0/restart")
    assert response.status_code == 204, response.text
    api.wait_state(name, "RUNNING", 1, "RUNNING")


def test_task_restart_unknown_connector_or_task_is_404(api, name) -> None:
    c = unique("missing")
    assert_error(api.post(f"/connectors/{c}/tasks/0/restart"), 404, f"Unknown connector: {c}")
    api.create(name, source_config(unique("topic"), messages_per_task=0))
    api.wait_state(name, "RUNNING", 1)
    assert_error(api.post(f"/connectors/{name}/tasks/7/restart"), 404, f"Unknown task: {name}-7")
    # and no phantom task appears
    assert [t["id"] for t in api.status(name)["tasks"]] == [0]


def test_tasks_config_endpoint(api, worker, name) -> None:
    api.create(name, source_config(unique("topic"), tasks=2, messages_per_task=0))
    api.wait_state(name, "RUNNING", 2)
    response = api.get(f"/connectors/{name}/tasks-config")
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {f"{name}-0", f"{name}-1"}
    assert "task.class" in body[f"{name}-0"]
    assert_error(api.get(f"/connectors/{unique('missing')}/tasks-config"), 404)
    # each call logs a deprecation warning
    wait_for(
        lambda: any(
            "tasks-config" in line and "WARN" in line.upper() and "deprecat" in line.lower()
            for line in worker.log_tail(400).splitlines()
        ),
        5,
        what="a deprecation WARN in the worker log",
    )


# --- 23-24: validation counts ---------------------------------------------------------------------------------
SINK_BASE = {"connector.class": FILE_SINK, "name": "val-sink"}
VALIDATION_CASES = [
    ("no-topics", {}, 2),
    ("both-topics", {"topics": "a", "topics.regex": "a.*"}, 2),
    ("dlq-in-topics", {"topics": "a,dlq", "errors.deadletterqueue.topic.name": "dlq"}, 1),
    ("dlq-matches-regex", {"topics.regex": "d.*", "errors.deadletterqueue.topic.name": "dlq"}, 1),
    (
        "duplicate-transform-alias",
        {
            "topics": "a",
            "transforms": "t,t",
            "transforms.t.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        },
        1,
    ),
    ("missing-transform-type", {"topics": "a", "transforms": "t"}, 1),
    (
        "invalid-transform-type",
        {"topics": "a", "transforms": "t", "transforms.t.type": "com.example.NoSuchTransform"},
        1,
    ),
    ("missing-predicate-type", {"topics": "a", "predicates": "p"}, 1),
    ("invalid-key-converter", {"topics": "a", "key.converter": "com.example.NoSuchConverter"}, 1),
    ("invalid-header-converter", {"topics": "a", "header.converter": "com.example.NoSuchConverter"}, 1),
    (
        "converter-property-wrong-type",
        {
            "topics": "a",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "notaboolean",
        },
        1,
    ),
]


@pytest.mark.parametrize("config, errors", [c[1:] for c in VALIDATION_CASES], ids=[c[0] for c in VALIDATION_CASES])
def test_validation_error_counts_and_create_rejects(api, tmp_path, config, errors) -> None:
    config = {**config, "file": str(tmp_path / "out.txt")}
    response = api.put("/connector-plugins/FileStreamSinkConnector/config/validate", {**SINK_BASE, **config})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["error_count"] == errors, [c["value"] for c in body["configs"] if c["value"] and c["value"]["errors"]]
    assert body["error_count"] == sum(len(c["value"]["errors"]) for c in body["configs"] if c["value"])

    name = unique("invalid")
    created = api.post("/connectors", {"name": name, "config": {**SINK_BASE, **config, "name": name}})
    message = assert_error(
        created, 400, f"Connector configuration is invalid and contains the following {errors} error(s):"
    )["message"]
    assert "You can also find the above list of errors at the endpoint `/connector-plugins/" in message
    assert api.get(f"/connectors/{name}").status_code == 404


# --- section 8: what third-party clients need ------------------------------------------------------------------
def test_status_body_has_exact_keys_and_host_port_worker_ids(api, name) -> None:
    api.create(name, source_config(unique("topic"), tasks=2, messages_per_task=0))
    status = api.wait_state(name, "RUNNING", 2)
    assert set(status) == STATUS_KEYS
    assert set(status["connector"]) == {"state", "worker_id"}  # no trace when not failed
    assert HOST_PORT.match(status["connector"]["worker_id"])
    for task in status["tasks"]:
        assert set(task) == {"id", "state", "worker_id"} and HOST_PORT.match(task["worker_id"])
    assert status["type"] == "source"
    assert set(api.get(f"/connectors/{name}").json()) == INFO_KEYS


def test_trailing_slashes_are_accepted(api, name) -> None:
    api.create(name, source_config(unique("topic"), messages_per_task=0))
    assert api.get("/connectors/").status_code == 200
    assert api.get(f"/connectors/{name}/").status_code == 200
    assert api.get(f"/connectors/{name}/status/").status_code == 200
    assert api.put(f"/connectors/{name}/pause/").status_code == 202
    assert api.status(name)["connector"]["state"] == "PAUSED"


def test_numbers_and_booleans_in_config_are_coerced_to_strings(api, name) -> None:
    config = {
        "connector.class": SOURCE,
        "topic": unique("topic"),
        "tasks.max": 2,
        "messages.per.task": 0,
        "connector.start.fail": False,
    }
    response = api.post("/connectors", {"name": name, "config": config})
    assert response.status_code == 201, response.text
    stored = api.get(f"/connectors/{name}/config").json()
    assert stored["tasks.max"] == "2" and stored["messages.per.task"] == "0"
    assert stored["connector.start.fail"] == "false"
    api.wait_state(name, "RUNNING", 2)


def test_authorization_header_is_ignored(api) -> None:
    response = api.get("/connectors", headers={"Authorization": "Basic Og=="})
    assert response.status_code == 200


def test_unknown_url_error_is_json(api) -> None:
    response = api.get("/definitely/not/here")
    assert_error(response, 404)
