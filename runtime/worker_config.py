"""Worker properties, with Kafka Connect's names and defaults."""

from __future__ import annotations

import logging
import socket
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .api.config import (
    AbstractConfig,
    ConfigDef,
    ConfigKey,
    Importance,
    NonEmptyString,
    Password,
    Range,
    Type,
    ValidString,
)
from .api.errors import ConfigError

log = logging.getLogger(__name__)

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

# Settings that only mean something to the Java worker: accepted so that existing worker files load
# unchanged, and logged once so nobody believes they took effect.
JAVA_ONLY_PROPERTIES = (
    "plugin.discovery",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.recording.level",
    "metrics.sample.window.ms",
    "auto.include.jmx.reporter",
    "response.http.headers.config",
    "access.control.allow.origin",
    "access.control.allow.methods",
    "client.dns.lookup",
    "ssl.engine.factory.class",
    "sasl.login.class",
    "sasl.client.callback.handler.class",
    "connector.client.config.override.policy",
)

# Families of settings read under a prefix. `listeners.https.<ssl setting>` overrides the `ssl.*` setting
# of the same name for the https REST listener (typed and validated as that setting); each provider named in
# `config.providers` takes `config.providers.<name>.class` and `.param.*`; the worker's Kafka clients take
# `producer.*`, `consumer.*` and `admin.*` as written (their clients validate them, as the reference's do).
LISTENER_HTTPS_PREFIX = "listeners.https."
CONFIG_PROVIDERS_PREFIX = "config.providers."
CLIENT_PREFIXES = ("producer.", "consumer.", "admin.")
# the SSL settings the https REST listener reads (Kafka's SslConfigs names); unset by default, so that
# runtime/rest/security.py applies its own defaults
REST_SSL_SETTINGS: dict[str, Type] = {
    "ssl.enabled.protocols": Type.LIST,
    "ssl.cipher.suites": Type.LIST,
    "ssl.keystore.type": Type.STRING,
    "ssl.keystore.location": Type.STRING,
    "ssl.keystore.password": Type.PASSWORD,
    "ssl.key.password": Type.PASSWORD,
    "ssl.keystore.certificate.chain": Type.PASSWORD,
    "ssl.keystore.key": Type.PASSWORD,
    "ssl.truststore.type": Type.STRING,
    "ssl.truststore.location": Type.STRING,
    "ssl.truststore.password": Type.PASSWORD,
    "ssl.truststore.certificates": Type.PASSWORD,
    "ssl.client.auth": Type.STRING,
    "ssl.endpoint.identification.algorithm": Type.STRING,
}


class BlankOr:
    """A validator that also accepts a blank value (an SSL setting left blank counts as unset)."""

    def __init__(self, validator: ValidString) -> None:
        self.validator = validator

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and str(value).strip() != "":
            self.validator(name, value)

    def __str__(self) -> str:
        return f"{self.validator}, or blank"


class PositiveOrMinusOne:
    """Partitions and replication factors of the internal topics: at least 1, or -1 for the broker's default
    (the reference's TopicCreationConfig validators)."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None or (value != -1 and value < 1):
            raise ConfigError(name, value, "Value must be -1 (the broker's default) or at least 1")

    def __str__(self) -> str:
        return "-1, or [1,...]"


WORKER_CONFIG_DEF = (
    ConfigDef()
    .define(
        "bootstrap.servers",
        Type.LIST,
        None,
        importance=Importance.HIGH,
        documentation="Kafka brokers; when unset the worker starts its embedded broker on loopback.",
    )
    .define(
        "listeners",
        Type.LIST,
        "http://:8083",
        importance=Importance.LOW,
        documentation="REST listeners, e.g. http://127.0.0.1:8083",
    )
    .define("rest.advertised.host.name", Type.STRING, None, importance=Importance.LOW)
    .define("rest.advertised.port", Type.INT, None, importance=Importance.LOW)
    .define("rest.advertised.listener", Type.STRING, None, importance=Importance.LOW)
    .define("admin.listeners", Type.LIST, None, importance=Importance.LOW)
    .define(
        "metrics.listeners",
        Type.LIST,
        None,
        importance=Importance.LOW,
        documentation="Extra http listeners serving only GET /metrics, without authentication (like the "
        "JMX exporter's port 9404 that Strimzi scrapes); the REST listeners serve it too",
    )
    .define("key.converter", Type.CLASS, JSON_CONVERTER, importance=Importance.HIGH)
    .define("value.converter", Type.CLASS, JSON_CONVERTER, importance=Importance.HIGH)
    .define("header.converter", Type.CLASS, SIMPLE_HEADER_CONVERTER, importance=Importance.LOW)
    .define(
        "offset.storage.file.filename",
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="File in which source offsets are stored (standalone).",
    )
    .define(
        "config.storage.file.filename",
        Type.STRING,
        None,
        importance=Importance.MEDIUM,
        documentation="File in which connector configs and target states are stored (standalone); "
        "defaults to the offsets file's path with the suffix .configs",
    )
    .define("offset.flush.interval.ms", Type.LONG, 60000, Range.at_least(0), Importance.LOW)
    .define("offset.flush.timeout.ms", Type.LONG, 5000, Range.at_least(0), Importance.LOW)
    .define("task.shutdown.graceful.timeout.ms", Type.LONG, 5000, Range.at_least(0), Importance.LOW)
    .define(
        "task.processes",
        Type.INT,
        0,
        Range.at_least(0),
        Importance.MEDIUM,
        documentation="Child processes that run this worker's tasks, each task in one of them (0: tasks run "
        "as threads of the worker process). Python threads share one interpreter lock, so a "
        "worker uses more than about one core for task work only through task processes. "
        "Statuses, offsets, metrics and the REST API are the same either way. Not a Kafka "
        "Connect setting.",
    )
    .define("topic.tracking.enable", Type.BOOLEAN, True, importance=Importance.LOW)
    .define("topic.tracking.allow.reset", Type.BOOLEAN, True, importance=Importance.LOW)
    .define(
        "plugin.path",
        Type.LIST,
        None,
        importance=Importance.LOW,
        documentation="Folders added to the Python path so that plugins in them can be imported.",
    )
    .define(
        "rest.request.timeout.ms",
        Type.LONG,
        90000,
        Range.at_least(1),
        Importance.LOW,
        documentation="How long a REST request waits for the herder (the reference's fixed 90 s).",
    )
    .define(
        "rest.basic.auth.credentials.file",
        Type.STRING,
        None,
        importance=Importance.LOW,
        documentation="Java properties file of `user: password` lines; turns on HTTP basic auth for the REST API.",
    )
    .define(
        "rest.basic.auth.jaas.config",
        Type.STRING,
        None,
        importance=Importance.LOW,
        documentation='JAAS file (or text) whose KafkaConnect entry\'s file="..." names the credentials file.',
    )
    .define(
        "rest.extension.classes",
        Type.LIST,
        "",
        importance=Importance.LOW,
        documentation="REST extensions; only Kafka's BasicAuthSecurityRestExtension is supported (see "
        "rest.basic.auth.*), others are ignored with a warning.",
    )
    .define(
        "config.providers",
        Type.LIST,
        "",
        importance=Importance.LOW,
        documentation="Names of the config providers that resolve ${provider:path:key} references; each "
        "takes config.providers.<name>.class and config.providers.<name>.param.* settings.",
    )
    .define(
        "exactly.once.source.support",
        Type.STRING,
        "disabled",
        ValidString.of("disabled", "preparing", "enabled", case_insensitive=True),
        Importance.HIGH,
        documentation="Whether to enable exactly-once support for source connectors in the cluster by using "
        "transactions to write source records and their source offsets, and by proactively fencing out old task "
        "generations before bringing up new ones. To enable exactly-once source support on a new cluster, set "
        "this property to 'enabled'. To enable support on an existing cluster, first set to 'preparing' on every "
        "worker in the cluster, then set to 'enabled'. A rolling upgrade may be used for both changes. "
        "Distributed mode only (a standalone worker ignores it, as the reference does).",
    )
    .define(
        "log.level",
        Type.STRING,
        "INFO",
        ValidString.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", case_insensitive=True),
        Importance.LOW,
    )
    .define(
        "log.format",
        Type.STRING,
        "text",
        ValidString.of("text", "json", case_insensitive=True),
        Importance.LOW,
        documentation="text: the reference's layout with its connector context ([name|task-0]); json: one "
        "JSON object per line",
    )
    .define(
        "admin.default.api.timeout.ms",
        Type.INT,
        30000,
        Range.at_least(0),
        Importance.LOW,
        documentation="How long the worker waits at startup for Kafka to answer (its admin client's timeout).",
    )
    # distributed mode (Kafka Connect's DistributedConfig); unset or unused in standalone mode
    .define(
        "group.id",
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="A unique string that identifies the Connect cluster group this worker belongs to "
        "(required in distributed mode).",
    )
    .define(
        "session.timeout.ms",
        Type.INT,
        10000,
        importance=Importance.HIGH,
        documentation="The timeout used to detect worker failures: a worker whose heartbeats the group "
        "coordinator does not receive for this long is removed from the group, and the others "
        "rebalance. Must be within the broker's group.min/max.session.timeout.ms.",
    )
    .define(
        "heartbeat.interval.ms",
        Type.INT,
        3000,
        importance=Importance.HIGH,
        documentation="The expected time between heartbeats to the group coordinator; lower than "
        "session.timeout.ms, typically no higher than a third of it.",
    )
    .define(
        "rebalance.timeout.ms",
        Type.INT,
        60000,
        importance=Importance.HIGH,
        documentation="The maximum allowed time for each worker to join the group once a rebalance has begun "
        "(time for its tasks to stop and commit); a worker whose tick thread stalls longer "
        "leaves the group.",
    )
    .define(
        "scheduled.rebalance.max.delay.ms",
        Type.INT,
        300000,
        Range.between(0, 2**31 - 1),
        Importance.LOW,
        documentation="The maximum delay that is scheduled in order to wait for the return of one or more "
        "departed workers before rebalancing and reassigning their connectors and tasks to the "
        "group (KIP-415). During this period their connectors and tasks remain unassigned.",
    )
    .define(
        "config.storage.topic",
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="The name of the Kafka topic where connector configurations are stored "
        "(required in distributed mode).",
    )
    .define(
        "config.storage.replication.factor",
        Type.SHORT,
        3,
        PositiveOrMinusOne(),
        Importance.LOW,
        documentation="Replication factor used when creating the configuration storage topic "
        "(-1: the broker's default).",
    )
    .define(
        "offset.storage.topic",
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="The name of the Kafka topic where source connector offsets are stored "
        "(required in distributed mode).",
    )
    .define(
        "offset.storage.partitions",
        Type.INT,
        25,
        PositiveOrMinusOne(),
        Importance.LOW,
        documentation="The number of partitions used when creating the offset storage topic "
        "(-1: the broker's default).",
    )
    .define(
        "offset.storage.replication.factor",
        Type.SHORT,
        3,
        PositiveOrMinusOne(),
        Importance.LOW,
        documentation="Replication factor used when creating the offset storage topic (-1: the broker's default).",
    )
    .define(
        "status.storage.topic",
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="The name of the Kafka topic where connector and task statuses are stored "
        "(required in distributed mode).",
    )
    .define(
        "status.storage.partitions",
        Type.INT,
        5,
        PositiveOrMinusOne(),
        Importance.LOW,
        documentation="The number of partitions used when creating the status storage topic "
        "(-1: the broker's default).",
    )
    .define(
        "status.storage.replication.factor",
        Type.SHORT,
        3,
        PositiveOrMinusOne(),
        Importance.LOW,
        documentation="Replication factor used when creating the status storage topic (-1: the broker's default).",
    )
    .define(
        "internal.log.read.strategy",
        Type.STRING,
        "watermark",
        ValidString.of("watermark", "sentinel"),
        Importance.LOW,
        documentation="This runtime's own: how the internal topics are read to their end, by the high "
        "watermark or by writing a sentinel record and reading up to it.",
    )
)
for _name, _type in REST_SSL_SETTINGS.items():
    WORKER_CONFIG_DEF.define(
        _name,
        _type,
        None,
        BlankOr(ValidString.of("required", "requested", "none", case_insensitive=True))
        if _name == "ssl.client.auth"
        else None,
        Importance.LOW,
        documentation=f"For the https REST listener (and, as {LISTENER_HTTPS_PREFIX}{_name}, for "
        "it alone); blank counts as unset.",
    )


def _blank(value: Any) -> bool:
    if isinstance(value, Password):
        value = value.value
    return value is None or value == [] or (isinstance(value, str) and value.strip() == "")


class WorkerConfig(AbstractConfig):
    """Parsed worker properties; `originals` keeps everything, including client and converter settings."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(WORKER_CONFIG_DEF, props)
        for name in JAVA_ONLY_PROPERTIES:
            if name in props:
                log.info("Ignoring worker property %s: it only applies to the Java worker", name)
        # `listeners.https.<ssl setting>`, parsed and validated as that setting (errors name the prefixed key)
        self.listener_ssl_values: dict[str, Any] = {}
        for name in REST_SSL_SETTINGS:
            prefixed = LISTENER_HTTPS_PREFIX + name
            if prefixed in self.originals:
                key = replace(self.definition.keys[name], name=prefixed)
                self.listener_ssl_values[name] = self.definition.parse_value(key, self.originals[prefixed], True)

    def rest_ssl(self, name: str) -> Any:
        """An SSL setting of the https REST listener: `listeners.https.<name>` unless blank, else `<name>`
        (Kafka's rule for listener-prefixed settings); None when both are blank. Passwords as plain text."""
        if name not in REST_SSL_SETTINGS:
            raise KeyError(f"{name} is not an SSL setting of the REST listener")
        for value in (self.listener_ssl_values.get(name), self.get(name)):
            if not _blank(value):
                return value.value if isinstance(value, Password) else value
        return None

    def rest_ssl_as_given(self, name: str) -> Any:
        """The first of `listeners.https.<name>` and `<name>` that is given at all, blank included (a blank
        `ssl.endpoint.identification.algorithm` turns the check off); None when neither is."""
        if name in self.listener_ssl_values:
            return self.listener_ssl_values[name]
        return self.get(name) if name in self.originals else None

    def config_providers(self) -> list[tuple[str, Any, dict[str, str]]]:
        """(name, class or class name, settings) of each provider named in `config.providers`: its
        required `config.providers.<name>.class` and its `config.providers.<name>.param.*` settings."""
        providers = []
        for name in self.get_list("config.providers"):
            key = ConfigKey(f"{CONFIG_PROVIDERS_PREFIX}{name}.class", Type.CLASS, validator=NonEmptyString())
            cls = self.definition.parse_value(key, self.originals.get(key.name), key.name in self.originals)
            params = self.originals_with_prefix(f"{CONFIG_PROVIDERS_PREFIX}{name}.param.")
            providers.append((name, cls, {k: str(v) for k, v in params.items()}))
        return providers

    @property
    def exactly_once_source_support(self) -> str:
        """`exactly.once.source.support`, lower-case: disabled, preparing or enabled (KIP-618)."""
        return str(self.get("exactly.once.source.support")).strip().lower()

    def exactly_once_source_enabled(self) -> bool:
        """Source tasks write transactionally (only `enabled`; `preparing` is the rolling upgrade's first step,
        when the leader fences and writes task count records but tasks still deliver at least once)."""
        return self.exactly_once_source_support == "enabled"

    def transactional_leader_enabled(self) -> bool:
        """The leader writes the config topic through its transactional producer (`preparing` and `enabled`)."""
        return self.exactly_once_source_support in ("preparing", "enabled")

    @property
    def bootstrap_servers(self) -> str | None:
        servers = self.get_list("bootstrap.servers")
        return ",".join(servers) if servers else None

    def set_bootstrap_servers(self, servers: str) -> None:
        self.originals["bootstrap.servers"] = servers
        self.values["bootstrap.servers"] = servers.split(",")

    def rest_bind(self) -> tuple[str, int]:
        """Host and port of the first http listener."""
        _, host, port = self.listener_addresses("listeners")[0]
        return host, port

    def listener_addresses(self, key: str) -> list[tuple[str, str, int]]:
        """(scheme, host, port) of every entry of `listeners` or `admin.listeners` (in order)."""
        entries = self.get_list(key)
        if key == "listeners" and not entries:
            entries = ["http://:8083"]
        addresses = []
        for entry in entries or []:
            parts = urlsplit(entry.strip())
            if parts.scheme not in ("http", "https"):
                raise ConfigError(key, entry, "Listener must start with http:// or https://")
            addresses.append((parts.scheme, parts.hostname or "0.0.0.0", parts.port or 8083))
        return addresses

    def worker_id(self, bound_port: int | None = None) -> str:
        """`host:port` others reach this worker at (rest.advertised.* first, then the listener)."""
        host, port = self.rest_bind()
        advertised_host = self.get("rest.advertised.host.name") or (
            host if host not in ("", "0.0.0.0", "::") else socket.gethostname()
        )
        advertised_port = self.get("rest.advertised.port") or bound_port or port
        return f"{advertised_host}:{advertised_port}"

    def offsets_file(self) -> Path | None:
        name = self.get("offset.storage.file.filename")
        return Path(name) if name else None

    def configs_file(self) -> Path | None:
        name = self.get("config.storage.file.filename")
        if name:
            return Path(name)
        offsets = self.offsets_file()
        return offsets.with_name(offsets.stem + ".configs") if offsets else None

    def client_configs(self, prefix: str) -> dict[str, str]:
        """Worker-level `producer.*`, `consumer.*` or `admin.*` settings, prefix stripped, as written."""
        if prefix not in CLIENT_PREFIXES:
            raise KeyError(f"{prefix} is not a client prefix ({', '.join(CLIENT_PREFIXES)})")
        return {k: str(v) for k, v in self.originals_with_prefix(prefix).items()}


def read_properties(path: Path, encoding: str = "iso-8859-1") -> dict[str, str]:
    """Java properties: `key=value` or `key: value`, `#`/`!` comments, `\\` line continuations, `\\uXXXX`.

    ISO-8859-1 by default, as Java's `Properties.load(InputStream)` reads worker and connector files (every
    byte is a character there, so no file is undecodable); readers that Java opens as UTF-8 pass it."""
    text = path.read_text(encoding=encoding)
    return parse_properties(text)


def parse_properties(text: str) -> dict[str, str]:
    props: dict[str, str] = {}
    logical: list[str] = []
    for raw_line in text.splitlines():
        line = raw_line.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        backslashes = len(line) - len(line.rstrip("\\"))
        if backslashes % 2 == 1:
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry = "".join(logical)
        logical = []
        key, value = _split_property(entry)
        props[_unescape(key)] = _unescape(value)
    if logical:
        key, value = _split_property("".join(logical))
        props[_unescape(key)] = _unescape(value)
    return props


def _split_property(entry: str) -> tuple[str, str]:
    """Java's rule: the key ends at the first unescaped `=`, `:` or blank; one separator may follow blanks."""
    i = 0
    while i < len(entry):
        c = entry[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:":
            return entry[:i], entry[i + 1 :].lstrip(" \t\f")
        if c in " \t\f":
            rest = entry[i:].lstrip(" \t\f")
            if rest and rest[0] in "=:":
                rest = rest[1:].lstrip(" \t\f")
            return entry[:i], rest
        i += 1
    return entry, ""


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "u" and i + 5 < len(text):
                try:
                    out.append(chr(int(text[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
