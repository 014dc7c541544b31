"""Settings shared by the Schema Registry converters, under the names Confluent's converters use.

Confluent's converters are configured with `schema.registry.url`, `basic.auth.*`, `auto.register.schemas`,
`use.latest.version`, `{key,value}.subject.name.strategy` and so on; worker and connector files written
for them work here unchanged. TLS is configured with PEM files, as the Python client reads them:
`schema.registry.ssl.ca.location` / `.certificate.location` / `.key.location` / `.key.password`, or the
Java names `schema.registry.ssl.truststore.location` / `.keystore.location` when their type is PEM (a JKS or
PKCS12 store is refused with a message saying so, since no Python TLS stack reads it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...api.config import ConfigDef, Importance, Password, Type, ValidString
from ...api.errors import ConfigError
from ..json import CONVERTER_TYPE_CONFIG, converter_config_def

SCHEMA_REGISTRY_URL = "schema.registry.url"
BASIC_AUTH_CREDENTIALS_SOURCE = "basic.auth.credentials.source"
BASIC_AUTH_USER_INFO = "basic.auth.user.info"
LEGACY_BASIC_AUTH_USER_INFO = "schema.registry.basic.auth.user.info"
AUTO_REGISTER_SCHEMAS = "auto.register.schemas"
USE_LATEST_VERSION = "use.latest.version"
LATEST_COMPATIBILITY_STRICT = "latest.compatibility.strict"
NORMALIZE_SCHEMAS = "normalize.schemas"
KEY_SUBJECT_NAME_STRATEGY = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY = "value.subject.name.strategy"
SCHEMAS_CACHE_SIZE = "schemas.cache.size"
CONNECT_META_DATA = "connect.meta.data"
REQUEST_TIMEOUT_MS = "schema.registry.request.timeout.ms"
SSL_PREFIX = "schema.registry.ssl."

TOPIC_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
RECORD_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
STRATEGIES = {
    name.rsplit(".", 1)[1]: name for name in (TOPIC_NAME_STRATEGY, RECORD_NAME_STRATEGY, TOPIC_RECORD_NAME_STRATEGY)
}


def _strategy(name: str, value: Any) -> None:
    if value is not None and str(value).strip().rsplit(".", 1)[-1] not in STRATEGIES:
        raise ConfigError(name, value, "must be one of " + ", ".join(STRATEGIES.values()))


def registry_converter_config_def() -> ConfigDef:
    """The keys every Schema Registry converter understands (shown by /connector-plugins/{c}/config)."""
    config = converter_config_def()
    config.define(
        SCHEMA_REGISTRY_URL,
        Type.LIST,
        importance=Importance.HIGH,
        documentation="Comma-separated list of URLs for Schema Registry instances that can be used to "
        "register or look up schemas. `mock://scope` keeps schemas in this process.",
    )
    config.define(
        BASIC_AUTH_CREDENTIALS_SOURCE,
        Type.STRING,
        "URL",
        validator=ValidString.of("URL", "USER_INFO", "SASL_INHERIT"),
        importance=Importance.MEDIUM,
        documentation="Where the HTTP basic credentials come from: URL (user info in the URL), "
        "USER_INFO (basic.auth.user.info) or SASL_INHERIT (not supported here).",
    )
    config.define(
        BASIC_AUTH_USER_INFO,
        Type.PASSWORD,
        None,
        importance=Importance.MEDIUM,
        documentation="The credentials as `user:password` when the source is USER_INFO.",
    )
    config.define(
        LEGACY_BASIC_AUTH_USER_INFO,
        Type.PASSWORD,
        None,
        importance=Importance.LOW,
        documentation="Deprecated name of basic.auth.user.info.",
    )
    config.define(
        AUTO_REGISTER_SCHEMAS,
        Type.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation="Register the schema of written data when the subject does not have it yet.",
    )
    config.define(
        USE_LATEST_VERSION,
        Type.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Write with the subject's latest schema (only with auto.register.schemas=false).",
    )
    config.define(
        LATEST_COMPATIBILITY_STRICT,
        Type.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="With use.latest.version, refuse data whose schema the registry finds "
        "incompatible with the latest version.",
    )
    config.define(
        NORMALIZE_SCHEMAS,
        Type.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Ask the registry to normalize schemas when registering or looking them up.",
    )
    for key in (KEY_SUBJECT_NAME_STRATEGY, VALUE_SUBJECT_NAME_STRATEGY):
        config.define(
            key,
            Type.STRING,
            TOPIC_NAME_STRATEGY,
            validator=_strategy,
            importance=Importance.MEDIUM,
            documentation="How subjects are named: TopicNameStrategy ({topic}-key|value), "
            "RecordNameStrategy ({record name}) or TopicRecordNameStrategy "
            "({topic}-{record name}).",
        )
    config.define(
        SCHEMAS_CACHE_SIZE,
        Type.INT,
        1000,
        importance=Importance.LOW,
        documentation="The maximum number of schemas that can be cached in this converter instance.",
    )
    config.define(
        CONNECT_META_DATA,
        Type.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Keep Connect's schema name, version, doc and parameters in written schemas.",
    )
    config.define(
        REQUEST_TIMEOUT_MS,
        Type.INT,
        30000,
        importance=Importance.LOW,
        documentation="How long one request to the registry may take before it fails (retriable).",
    )
    for suffix, type_ in (
        ("ca.location", Type.STRING),
        ("certificate.location", Type.STRING),
        ("key.location", Type.STRING),
        ("key.password", Type.PASSWORD),
        ("truststore.location", Type.STRING),
        ("truststore.type", Type.STRING),
        ("keystore.location", Type.STRING),
        ("keystore.type", Type.STRING),
    ):
        config.define(
            SSL_PREFIX + suffix,
            type_,
            None,
            importance=Importance.LOW,
            documentation=f"TLS setting for the registry connection ({suffix}).",
        )
    return config


@dataclass(frozen=True)
class RegistrySettings:
    """The parsed settings of one converter instance (one side of one task)."""

    # What confluent-kafka's SchemaRegistryClient takes; holds secrets, so never printed.
    client_conf: tuple[tuple[str, Any], ...] = field(repr=False)
    auto_register: bool
    use_latest_version: bool
    latest_compatibility_strict: bool
    normalize: bool
    subject_strategy: str  # simple name: TopicNameStrategy | RecordNameStrategy | TopicRecordNameStrategy
    cache_size: int
    connect_meta_data: bool
    is_key: bool

    @property
    def url(self) -> str:
        return dict(self.client_conf)["url"]


def parse_settings(configs: dict[str, Any], is_key: bool) -> RegistrySettings:
    """Validate a converter's settings (prefix already stripped); ConfigError names the bad key."""
    props = {k: v for k, v in configs.items() if v is not None}
    props[CONVERTER_TYPE_CONFIG] = "key" if is_key else "value"
    if SCHEMA_REGISTRY_URL not in props:
        raise ConfigError(f'Missing required configuration "{SCHEMA_REGISTRY_URL}" which has no default value.')
    values = registry_converter_config_def().parse(props)
    urls = [u.strip() for u in values[SCHEMA_REGISTRY_URL] if u.strip()]
    if not urls:
        raise ConfigError(SCHEMA_REGISTRY_URL, "", "at least one URL is required")
    for url in urls:
        if not url.startswith(("http://", "https://", "mock://")):
            shown = re.sub(r"//[^/@]*@", "//[hidden]@", url)  # user info in a URL is a secret
            raise ConfigError(SCHEMA_REGISTRY_URL, shown, "URLs must start with http://, https:// or mock://")
    client: dict[str, Any] = {
        "url": ",".join(urls),
        "timeout": values[REQUEST_TIMEOUT_MS] / 1000.0,
        # A registry that does not answer is a RetriableError for the task's
        # errors.retry.* policy (KIP-298) rather than retried inside the client.
        "max.retries": 0,
        "cache.capacity": values[SCHEMAS_CACHE_SIZE],
    }
    source = values[BASIC_AUTH_CREDENTIALS_SOURCE].upper()
    user_info = values[BASIC_AUTH_USER_INFO] or values[LEGACY_BASIC_AUTH_USER_INFO]
    if source == "USER_INFO":
        secret = user_info.value if isinstance(user_info, Password) else user_info
        if not secret or ":" not in secret:
            raise ConfigError(
                BASIC_AUTH_USER_INFO,
                "[hidden]",
                f"must be user:password when {BASIC_AUTH_CREDENTIALS_SOURCE}=USER_INFO",
            )
        client["basic.auth.user.info"] = secret
    elif source == "SASL_INHERIT":
        raise ConfigError(BASIC_AUTH_CREDENTIALS_SOURCE, source, "SASL_INHERIT is not supported; use USER_INFO")
    client.update(_tls(values))
    strategy_key = KEY_SUBJECT_NAME_STRATEGY if is_key else VALUE_SUBJECT_NAME_STRATEGY
    return RegistrySettings(
        client_conf=tuple(sorted(client.items())),
        auto_register=values[AUTO_REGISTER_SCHEMAS],
        use_latest_version=values[USE_LATEST_VERSION],
        latest_compatibility_strict=values[LATEST_COMPATIBILITY_STRICT],
        normalize=values[NORMALIZE_SCHEMAS],
        subject_strategy=str(values[strategy_key]).strip().rsplit(".", 1)[-1],
        cache_size=values[SCHEMAS_CACHE_SIZE],
        connect_meta_data=values[CONNECT_META_DATA],
        is_key=is_key,
    )


def _tls(values: dict[str, Any]) -> dict[str, Any]:
    tls: dict[str, Any] = {}
    for store, target in (("truststore", "ssl.ca.location"), ("keystore", "ssl.certificate.location")):
        location = values[f"{SSL_PREFIX}{store}.location"]
        if location:
            kind = (values[f"{SSL_PREFIX}{store}.type"] or "JKS").upper()
            if kind != "PEM":
                raise ConfigError(
                    f"{SSL_PREFIX}{store}.type",
                    kind,
                    f"only PEM files can be read here; set {SSL_PREFIX}{store}.type=PEM "
                    f"or use {SSL_PREFIX}{target.split('.', 1)[1]}",
                )
            tls[target] = location
    for suffix in ("ca.location", "certificate.location", "key.location"):
        if values[SSL_PREFIX + suffix]:
            tls["ssl." + suffix] = values[SSL_PREFIX + suffix]
    password = values[SSL_PREFIX + "key.password"]
    if password is not None:
        tls["ssl.key.password"] = password.value if isinstance(password, Password) else password
    return tls
