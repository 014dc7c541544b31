"""Worker properties: Java properties syntax (java.util.Properties.load) and WorkerConfig's derived settings."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from runtime.api.errors import ConfigError
from runtime.worker_config import WorkerConfig, parse_properties, read_properties


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a=b", {"a": "b"}),
        ("a:b", {"a": "b"}),
        ("a b", {"a": "b"}),
        ("a   =   b", {"a": "b"}),
        ("  a\t:\tb", {"a": "b"}),
        ("a", {"a": ""}),
        ("a=", {"a": ""}),
        ("a=b  ", {"a": "b  "}),  # trailing blanks of a value are kept
        ("a=b=c:d", {"a": "b=c:d"}),
        ("a:b=c", {"a": "b=c"}),
        ("a==b", {"a": "=b"}),
        ("a b c", {"a": "b c"}),
        ("my\\ key=v", {"my key": "v"}),
        ("k\\=x=1", {"k=x": "1"}),
        ("k\\:x:1", {"k:x": "1"}),
        ("t=\\t\\n\\r\\f", {"t": "\t\n\r\f"}),
        ("u=caf\\u00e9", {"u": "café"}),
        ('q=\\q\\"', {"q": 'q"'}),
        ("path=C:\\\\dir\\\\", {"path": "C:\\dir\\"}),  # even backslashes: no continuation
        ("# comment\n! other\n  # indented\nx=1", {"x": "1"}),
        ("x=1 # not a comment", {"x": "1 # not a comment"}),
        ("a=1\na=2", {"a": "2"}),
        ("", {}),
        ("\n\n  \n", {}),
    ],
)
def test_properties_syntax(text, expected):
    assert parse_properties(text) == expected


def test_line_continuations():
    text = "list=a,\\\n     b,\\\n\tc\nnext=1"
    assert parse_properties(text) == {"list": "a,b,c", "next": "1"}


def test_continuation_line_starting_with_hash_is_not_a_comment():
    assert parse_properties("a=x\\\n#y\nb=2") == {"a": "x#y", "b": "2"}


def test_blank_line_ends_a_continuation():
    assert parse_properties("a=b\\\n\nc=d") == {"a": "b", "c": "d"}


def test_continuation_at_end_of_file():
    assert parse_properties("a=b\\") == {"a": "b"}


def test_continued_key():
    assert parse_properties("ke\\\n  y=v") == {"key": "v"}


def test_crlf_line_endings():
    assert parse_properties("a=1\r\nb=2\\\r\n  3\r\n") == {"a": "1", "b": "23"}


def test_read_properties_file(tmp_path: Path):
    path = tmp_path / "worker.properties"
    path.write_text("bootstrap.servers=localhost:9092\nplugin.path=/opt/a,\\\n  /opt/b\n", encoding="utf-8")
    assert read_properties(path) == {"bootstrap.servers": "localhost:9092", "plugin.path": "/opt/a,/opt/b"}


def test_defaults_match_kafka_connect():
    config = WorkerConfig({})
    assert config.get("key.converter") == "org.apache.kafka.connect.json.JsonConverter"
    assert config.get("value.converter") == "org.apache.kafka.connect.json.JsonConverter"
    assert config.get("header.converter") == "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    assert config.get_int("offset.flush.interval.ms") == 60000
    assert config.get_int("offset.flush.timeout.ms") == 5000
    assert config.get_int("task.shutdown.graceful.timeout.ms") == 5000
    assert config.get_int("rest.request.timeout.ms") == 90000
    assert config.get_bool("topic.tracking.enable") is True
    assert config.bootstrap_servers is None
    assert config.rest_bind() == ("0.0.0.0", 8083)


def test_state_files():
    assert WorkerConfig({}).offsets_file() is None
    assert WorkerConfig({}).configs_file() is None
    config = WorkerConfig({"offset.storage.file.filename": "/var/lib/connect/connect.offsets"})
    assert config.offsets_file() == Path("/var/lib/connect/connect.offsets")
    assert config.configs_file() == Path("/var/lib/connect/connect.configs")
    config = WorkerConfig(
        {"offset.storage.file.filename": "/tmp/o.offsets", "config.storage.file.filename": "/data/c.json"}
    )
    assert config.configs_file() == Path("/data/c.json")
    assert WorkerConfig({"config.storage.file.filename": "/data/c.json"}).configs_file() == Path("/data/c.json")


def test_listeners_and_worker_id():
    config = WorkerConfig({"listeners": "http://127.0.0.1:8084"})
    assert config.rest_bind() == ("127.0.0.1", 8084)
    assert config.worker_id() == "127.0.0.1:8084"
    assert WorkerConfig({"listeners": "http://127.0.0.1:0"}).worker_id(bound_port=41234) == "127.0.0.1:41234"
    advertised = WorkerConfig(
        {"listeners": "http://0.0.0.0:8083", "rest.advertised.host.name": "connect-1", "rest.advertised.port": "18083"}
    )
    assert advertised.worker_id() == "connect-1:18083"
    with pytest.raises(ConfigError):
        WorkerConfig({"listeners": "ftp://x:1"}).rest_bind()


def test_bootstrap_servers_and_client_prefixes():
    config = WorkerConfig(
        {
            "bootstrap.servers": "a:1, b:2",
            "producer.linger.ms": "7",
            "consumer.session.timeout.ms": "6000",
            "admin.request.timeout.ms": 5,
            "producer.override.x": "ignored-prefix-collision",
        }
    )
    assert config.bootstrap_servers == "a:1,b:2"
    assert config.client_configs("producer.") == {"linger.ms": "7", "override.x": "ignored-prefix-collision"}
    assert config.client_configs("consumer.") == {"session.timeout.ms": "6000"}
    assert config.client_configs("admin.") == {"request.timeout.ms": "5"}
    config.set_bootstrap_servers("c:3")
    assert config.bootstrap_servers == "c:3"
    with pytest.raises(KeyError):
        config.client_configs("rest.")  # not a client prefix family


def test_prefix_families_are_typed_as_the_settings_they_override():
    config = WorkerConfig(
        {
            "ssl.enabled.protocols": "TLSv1.2, TLSv1.3",
            "ssl.keystore.password": "top",
            "listeners.https.ssl.keystore.password": "listener",
            "listeners.https.ssl.client.auth": " ",
            "ssl.client.auth": "REQUESTED",
            "rest.extension.classes": "a.B, c.D",
            "config.providers": "file, env",
            "config.providers.file.class": "FileConfigProvider",
            "config.providers.file.param.x": 1,
            "config.providers.env.class": "EnvVarConfigProvider",
        }
    )
    assert config.rest_ssl("ssl.enabled.protocols") == ["TLSv1.2", "TLSv1.3"]
    assert config.rest_ssl("ssl.keystore.password") == "listener"  # the listener's own wins
    assert config.rest_ssl("ssl.client.auth") == "REQUESTED"  # a blank listener setting counts as unset
    assert config.rest_ssl("ssl.truststore.location") is None
    assert config.get_list("rest.extension.classes") == ["a.B", "c.D"]
    assert config.config_providers() == [
        ("file", "FileConfigProvider", {"x": "1"}),
        ("env", "EnvVarConfigProvider", {}),
    ]
    with pytest.raises(ConfigError, match='Missing required configuration "config.providers.vault.class"'):
        WorkerConfig({"config.providers": "vault"}).config_providers()


@pytest.mark.parametrize(
    "props, key",
    [
        ({"listeners.https.ssl.client.auth": "always"}, "listeners.https.ssl.client.auth"),
        ({"ssl.client.auth": "always"}, "ssl.client.auth"),
        ({"listeners.https.ssl.keystore.location": 5}, "listeners.https.ssl.keystore.location"),
    ],
)
def test_bad_prefixed_values_are_rejected_as_worker_config_errors(props, key):
    with pytest.raises(ConfigError, match=f"configuration {key}"):
        WorkerConfig(props)


@pytest.mark.parametrize(
    "props",
    [
        {"offset.flush.interval.ms": "soon"},
        {"offset.flush.interval.ms": "-1"},
        {"log.level": "LOUD"},
        {"topic.tracking.enable": "maybe"},
    ],
)
def test_invalid_values_are_rejected(props):
    with pytest.raises(ConfigError):
        WorkerConfig(props)


def test_java_only_properties_are_accepted_with_a_log(caplog):
    with caplog.at_level(logging.INFO, logger="runtime.worker_config"):
        config = WorkerConfig({"metric.reporters": "x.Y", "plugin.discovery": "service_load"})
    assert config.originals["metric.reporters"] == "x.Y"
    assert "metric.reporters" in caplog.text and "plugin.discovery" in caplog.text


def test_properties_files_are_read_as_iso_8859_1_like_java(tmp_path):
    """Java's Properties.load(InputStream) reads ISO-8859-1: a Latin-1 byte is its character, UTF-8 bytes
    become two characters each, `\\uXXXX` escapes give any character, and no file is undecodable."""
    path = tmp_path / "worker.properties"
    path.write_bytes(b"latin=caf\xe9\nutf8=caf\xc3\xa9\nescaped=caf\\u00e9 \\u20ac\nbroken=\xff\xfe\n")
    props = read_properties(path)
    assert props == {"latin": "café", "utf8": "cafÃ©", "escaped": "café €", "broken": "ÿþ"}


def test_distributed_settings_are_typed_with_the_reference_defaults():
    config = WorkerConfig({})
    assert config.get("group.id") is None
    assert [
        config.get_int(k)
        for k in (
            "session.timeout.ms",
            "heartbeat.interval.ms",
            "rebalance.timeout.ms",
            "scheduled.rebalance.max.delay.ms",
        )
    ] == [10000, 3000, 60000, 300000]
    assert [config.get_int(k) for k in ("offset.storage.partitions", "status.storage.partitions")] == [25, 5]
    assert {config.get_int(f"{t}.storage.replication.factor") for t in ("config", "offset", "status")} == {3}
    assert config.get("internal.log.read.strategy") == "watermark"


@pytest.mark.parametrize(
    "key, value",
    [
        ("offset.storage.partitions", "0"),
        ("status.storage.replication.factor", "-2"),
        ("scheduled.rebalance.max.delay.ms", "-1"),
        ("session.timeout.ms", "ten"),
        ("internal.log.read.strategy", "other"),
    ],
)
def test_invalid_distributed_settings_are_refused(key, value):
    with pytest.raises(ConfigError, match=key):
        WorkerConfig({key: value})


def test_broker_default_partitions_and_replication():
    config = WorkerConfig({"offset.storage.partitions": "-1", "config.storage.replication.factor": "-1"})
    assert config.get_int("offset.storage.partitions") == -1
    assert config.get_int("config.storage.replication.factor") == -1


@pytest.mark.parametrize(
    "value, support, enabled, transactional_leader",
    [
        (None, "disabled", False, False),
        ("disabled", "disabled", False, False),
        ("Preparing", "preparing", False, True),  # the rolling upgrade's first step: the leader only
        ("ENABLED", "enabled", True, True),
    ],
)
def test_exactly_once_source_support(value, support, enabled, transactional_leader):
    config = WorkerConfig({} if value is None else {"exactly.once.source.support": value})
    assert config.exactly_once_source_support == support
    assert config.exactly_once_source_enabled() is enabled
    assert config.transactional_leader_enabled() is transactional_leader


def test_exactly_once_source_support_refuses_other_values():
    with pytest.raises(ConfigError) as raised:
        WorkerConfig({"exactly.once.source.support": "on"})
    assert (
        "Invalid value on for configuration exactly.once.source.support: String must be one of (case insensitive):"
        in str(raised.value)
    )


@pytest.mark.parametrize("support, read_committed", [("disabled", False), ("preparing", False), ("enabled", True)])
def test_the_worker_offsets_topic_is_read_read_committed_when_exactly_once_is_enabled(support, read_committed):
    from runtime.storage.kafka_stores import KafkaStoreSettings

    props = {
        "bootstrap.servers": "b:9092",
        "group.id": "g",
        "config.storage.topic": "c",
        "offset.storage.topic": "o",
        "status.storage.topic": "s",
        "exactly.once.source.support": support,
    }
    log = KafkaStoreSettings.from_worker(props).offset_store().log
    assert log.read_committed is read_committed
