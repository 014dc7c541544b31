"""KafkaConfigStore and KafkaStatusStore on a real broker (Tansu)."""

from __future__ import annotations

import threading

import orjson
import pytest
from confluent_kafka.admin import AdminClient

from runtime.storage.base import InstanceStatus
from runtime.storage.config_codec import ConnectorState
from runtime.storage.kafka_config_store import ConfigUpdateListener, KafkaConfigStore, RestartRequest, SessionKey
from runtime.storage.kafka_log import ensure_topic
from runtime.storage.kafka_status_store import KafkaStatusStore
from runtime.storage.states import State, TargetState
from runtime.storage.status_codec import TopicStatus
from tests.support.worker import wait_for

from .conftest import produce_raw, read_raw, spec

pytestmark = pytest.mark.integration

CONFIG = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t", "name": "my-conn"}
TASKS = [{"task.class": "X", "file": "/tmp/in.txt"}, {"task.class": "X", "file": "/tmp/in2.txt"}]


def test_config_records_are_written_in_reference_format_and_order(bootstrap_servers, client):
    topic = spec("config", 1)
    store = KafkaConfigStore(topic, client)
    store.start()
    try:
        store.save("my-conn", ConnectorState(CONFIG, TargetState.STOPPED, TASKS))
        assert store.load()["my-conn"] == ConnectorState(CONFIG, TargetState.STOPPED, TASKS)
        store.save("my-conn", None)
        assert store.load() == {}
    finally:
        store.stop()
    records = [(k.decode(), v) for _, k, v in read_raw(bootstrap_servers, topic.name, 1, expect_at_least=7)]
    assert records == [
        ("target-state-my-conn", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        ("connector-my-conn", orjson.dumps({"properties": CONFIG})),
        ("task-my-conn-0", orjson.dumps({"properties": TASKS[0]})),
        ("task-my-conn-1", orjson.dumps({"properties": TASKS[1]})),
        ("commit-my-conn", b'{"tasks":2}'),
        ("connector-my-conn", None),
        ("target-state-my-conn", None),
    ]


def test_stop_writes_empty_task_set_before_the_target_state_and_survives_reopening(bootstrap_servers, client):
    topic = spec("config", 1)
    store = KafkaConfigStore(topic, client)
    store.start()
    try:
        store.save("c1", ConnectorState(CONFIG, TargetState.STARTED, TASKS))
        store.save("c1", ConnectorState(CONFIG, TargetState.STOPPED, []))
        store.save("c2", ConnectorState({**CONFIG, "name": "c2"}, TargetState.PAUSED, []))
    finally:
        store.stop()
    keys = [k.decode() for _, k, _ in read_raw(bootstrap_servers, topic.name, 1, expect_at_least=8)]
    assert keys[:4] == ["connector-c1", "task-c1-0", "task-c1-1", "commit-c1"]  # STARTED: no target-state record
    assert keys[4:6] == ["commit-c1", "target-state-c1"]
    reopened = KafkaConfigStore(topic, client)
    reopened.start()
    try:
        assert reopened.load() == {
            "c1": ConnectorState(CONFIG, TargetState.STOPPED, []),
            "c2": ConnectorState({**CONFIG, "name": "c2"}, TargetState.PAUSED, []),
        }
    finally:
        reopened.stop()


class Recorder(ConfigUpdateListener):
    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.lock = threading.Lock()

    def _add(self, *event) -> None:
        with self.lock:
            self.events.append(event)

    def on_connector_config_update(self, connector):
        self._add("config", connector)

    def on_connector_config_remove(self, connector):
        self._add("remove", connector)

    def on_task_config_update(self, connector, task_ids):
        self._add("tasks", connector, tuple(task_ids))

    def on_target_state_change(self, connector, state):
        self._add("state", connector, state)

    def on_restart_request(self, request):
        self._add("restart", request)

    def on_session_key_update(self, key):
        self._add("session", key)

    def on_logger_level(self, namespace, level):
        self._add("logger", namespace, level)


def test_listener_hears_other_workers_writes_but_not_history(bootstrap_servers, client):
    topic = spec("config", 1)
    writer = KafkaConfigStore(topic, client)
    writer.start()
    writer.put_restart_request(RestartRequest("old", only_failed=True))  # history: not an event
    recorder = Recorder()
    reader = KafkaConfigStore(topic, client, listener=recorder)
    reader.start()
    try:
        key = SessionKey("c2VjcmV0", "HmacSHA256", 1700000000000)
        writer.put_connector_config("a", CONFIG, TargetState.PAUSED)
        writer.put_task_configs("a", TASKS)
        writer.put_target_state("a", TargetState.STARTED)
        writer.put_restart_request(RestartRequest("a", only_failed=False, include_tasks=True))
        writer.put_session_key(key)
        writer.put_logger_level("org.example", "DEBUG")
        writer.put_task_count_record("a", 2)
        writer.remove_connector_config("a")
        expected = [
            ("state", "a", TargetState.PAUSED),
            ("config", "a"),
            ("tasks", "a", (0, 1)),
            ("state", "a", TargetState.STARTED),
            ("restart", RestartRequest("a", False, True)),
            ("session", key),
            ("logger", "org.example", "DEBUG"),
            ("remove", "a"),
        ]
        wait_for(lambda: len(recorder.events) >= len(expected), 10, what=f"listener events {recorder.events}")
        assert recorder.events == expected
        snapshot = reader.snapshot()
        assert snapshot.session_key == key and snapshot.logger_levels == {"org.example": "DEBUG"}
        assert snapshot.connectors == {} and snapshot.task_count_records == {}
    finally:
        reader.stop()
        writer.stop()


def test_config_topic_from_a_future_version_loads(bootstrap_servers, client):
    topic = spec("config", 1)
    future = [
        (b"connector-a", b'{"properties":{"connector.class":"X","name":"a"},"version":3,"labels":["x"]}'),
        (b"target-state-a", b'{"state":"PAUSED","state.v2":"HIBERNATING","reason":"maintenance"}'),
        (b"connector-b", b'{"properties":{"connector.class":"X","name":"b"}}'),
        (b"task-b-0", b'{"properties":{"k":"v"},"checksum":"abc"}'),
        (b"commit-b", b'{"tasks":1,"generation":9}'),
        (b"target-state-b", b'{"state":"TELEPORTED","state.v2":"STOPPED"}'),
        (b"connector-c", b'{"properties":{"connector.class":"X","name":"c"}}'),
        (b"target-state-c", b'{"state.v3":{"mode":"STARTED"}}'),  # nothing readable: ignored
        (b"commit-c", b'{"tasks":"many"}'),
        (b"task-c-notanumber", b'{"properties":{}}'),
        (b"task-c-0", None),
        (b"quota-c", b'{"max":5}'),
        (b"placement-policy", b'{"rack":"r1"}'),
        (b"connector-d", b"\x00not json"),
        (b"restart-connector-a", b'{"include-tasks":"yes","only-failed":1,"priority":"high"}'),
        (b"tasks-fencing-b", b'{"task-count":1,"epoch":4}'),
        (b"session-key", b'{"key":"a2V5","algorithm":"HmacSHA512","creation-timestamp":1,"rotation":"weekly"}'),
        (b"logger-cluster-org.x", b'{"level":"TRACE","scope":"cluster"}'),
        (b"\xff\xfe", b"{}"),
    ]
    ensure_topic(AdminClient({"bootstrap.servers": bootstrap_servers}), topic)
    produce_raw(bootstrap_servers, topic.name, future, partition=0)
    store = KafkaConfigStore(topic, client)
    store.start()
    try:
        snapshot = store.snapshot()
        assert snapshot.connectors["a"] == ConnectorState({"connector.class": "X", "name": "a"}, TargetState.PAUSED, [])
        assert snapshot.connectors["b"] == ConnectorState(
            {"connector.class": "X", "name": "b"}, TargetState.STOPPED, [{"k": "v"}]
        )
        assert snapshot.connectors["c"].target_state is TargetState.STARTED
        assert "d" not in snapshot.connectors
        assert snapshot.task_count_records == {"b": 1}
        assert snapshot.session_key == SessionKey("a2V5", "HmacSHA512", 1)
        assert snapshot.logger_levels == {"org.x": "TRACE"}
        # and it keeps working: writes after the unknown records read back normally
        store.put_target_state("c", TargetState.PAUSED)
        assert store.load()["c"].target_state is TargetState.PAUSED
    finally:
        store.stop()


def test_status_round_trip_and_reader_rules(bootstrap_servers, client):
    topic = spec("status", 5)
    a = KafkaStatusStore(topic, client)
    b = KafkaStatusStore(topic, client)
    a.start()
    b.start()
    try:
        running = InstanceStatus(State.RUNNING, "w1:8083", None, 3)
        a.put_connector("my-conn", running)
        a.put_task("my-conn", 0, running)
        a.put_task("my-conn", 1, InstanceStatus(State.FAILED, "w1:8083", "Traceback: boom", 3))
        a.put_topic(TopicStatus("t1", "my-conn", 0, 1700000000000))
        assert a.connector("my-conn") == running  # visible to the writer at once
        a.flush()
        b.refresh()
        assert b.connector("my-conn") == running
        assert b.tasks("my-conn") == {0: running, 1: InstanceStatus(State.FAILED, "w1:8083", "Traceback: boom", 3)}
        assert b.topics("my-conn") == [TopicStatus("t1", "my-conn", 0, 1700000000000)]

        # a stale UNASSIGNED (older or same generation) does not replace RUNNING in a reader
        a.put_task("my-conn", 0, InstanceStatus(State.UNASSIGNED, "w2:8083", None, 2))
        a.flush()
        b.refresh()
        assert b.task("my-conn", 0) == running
        # a safe write loses against another worker's newer generation
        b.put_task("my-conn", 1, InstanceStatus(State.RUNNING, "w2:8083", None, 5))
        b.put_task_safe("my-conn", 1, InstanceStatus(State.FAILED, "w1:8083", "late", 4))
        assert b.task("my-conn", 1).state is State.RUNNING
        b.flush()
        a.refresh()
        assert a.task("my-conn", 1) == InstanceStatus(State.RUNNING, "w2:8083", None, 5)

        # connector tombstone removes its tasks everywhere; topic reset is a tombstone
        a.remove_connector("my-conn")
        a.delete_topic("my-conn", "t1")
        assert a.connector("my-conn") is None and a.tasks("my-conn") == {}
        a.flush()
        b.refresh()
        assert b.connector("my-conn") is None and b.tasks("my-conn") == {} and b.topics("my-conn") == []
    finally:
        a.stop()
        b.stop()
    raw = {(k.decode(), v) for _, k, v in read_raw(bootstrap_servers, topic.name, 5, expect_at_least=10)}
    assert ("status-connector-my-conn", b'{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3}') in raw
    assert ("status-topic-t1:connector-my-conn", None) in raw
    assert ("status-connector-my-conn", None) in raw


def test_status_reader_skips_foreign_and_unreadable_records(bootstrap_servers, client):
    topic = spec("status", 1)
    ensure_topic(AdminClient({"bootstrap.servers": bootstrap_servers}), topic)
    store = KafkaStatusStore(topic, client)
    store.start()
    try:
        produce_raw(
            bootstrap_servers,
            topic.name,
            [
                (
                    b"status-connector-x",
                    b'{"state":"RUNNING","trace":null,"worker_id":"w:1","generation":1,"version":"4.1"}',
                ),
                (b"status-connector-y", b'{"state":"DORMANT","worker_id":"w:1","generation":1}'),
                (b"status-task-x", b'{"state":"RUNNING","worker_id":"w:1","generation":1}'),
                (b"status-task-x-0", b"not json"),
                (b"status-rebalance-z", b"{}"),
                (b"status-topic-bad", b"{}"),
            ],
            partition=0,
        )
        store.refresh()
        assert store.connector("x") == InstanceStatus(State.RUNNING, "w:1", None, 1)
        assert store.connector("y") is None and store.tasks("x") == {}
    finally:
        store.stop()
