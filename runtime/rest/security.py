"""REST listener security: HTTP basic auth (as Kafka's BasicAuthSecurityRestExtension) and TLS.

Basic auth. Kafka enables it with `rest.extension.classes=...BasicAuthSecurityRestExtension` and a JAAS
file named by the JVM option `-Djava.security.auth.login.config`, whose `KafkaConnect` entry uses
`PropertyFileLoginModule` with `file="<credentials file>"`. The credentials file is a Java properties file
of `user: password` (or `user=password`) lines. We read, in order:
  1. `rest.basic.auth.credentials.file` (our own worker property: the credentials file itself),
  2. `rest.basic.auth.jaas.config` (our own: a JAAS file path, or JAAS text, whose `file="..."` option
     names the credentials file),
  3. with the extension class listed in `rest.extension.classes`: the JAAS file given by
     `-Djava.security.auth.login.config=...` in $KAFKA_OPTS, as a Kafka deployment sets it.
Listing the extension with none of these is a configuration error (we fail closed, never open).
As in Kafka, an empty credentials file lets every request through (with a warning). Unlike Kafka, no path
is exempt: this project has no signed internal endpoints, and forwarded requests carry the caller's
`Authorization` header. The 401 answer is JSON (`{"error_code": 401, "message": "User cannot access the
resource."}`, Kafka's message) and carries `WWW-Authenticate: Basic realm="Kafka Connect"`.

TLS. `listeners=https://host:port` with `listeners.https.ssl.*` settings, each falling back to `ssl.*`
(Kafka's rule for listener-prefixed SSL settings). Key stores of type PEM (a file holding key and
certificate chain, or inline `ssl.keystore.certificate.chain` + `ssl.keystore.key`) and PKCS12 (read
with `cryptography`); JKS cannot be read in Python and is refused with a message saying how to convert.
Trust stores: PEM (file or inline `ssl.truststore.certificates`) and PKCS12. `ssl.client.auth`
(none|requested|required), `ssl.enabled.protocols`, `ssl.cipher.suites` and
`ssl.endpoint.identification.algorithm` (client side) are honoured.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
import os
import re
import shlex
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ..worker_config import WorkerConfig

log = logging.getLogger(__name__)

BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
CREDENTIALS_FILE_CONFIG = "rest.basic.auth.credentials.file"
JAAS_CONFIG = "rest.basic.auth.jaas.config"
JAAS_LOGIN_MODULE_ENTRY = "KafkaConnect"
UNAUTHORIZED_MESSAGE = "User cannot access the resource."
REALM = "Kafka Connect"


class SecurityConfigError(ValueError):
    """A security setting of the worker file is missing, unreadable or invalid (the CLI exits with code 2)."""


# ---- basic auth -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    """Users and passwords of a PropertyFileLoginModule file. `repr` never shows a password."""

    source: str
    users: Mapping[str, str] = field(repr=False)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Credentials:
        from ..worker_config import parse_properties

        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise SecurityConfigError(
                f"Error loading the basic auth credentials file '{path}': {exc.strerror or exc}"
            ) from None
        users = parse_properties(text)
        if not users:
            log.warning("Basic auth credentials file '%s' is empty; all requests will be permitted", path)
        return cls(str(path), users)

    def check(self, username: str | None, password: str | None) -> bool:
        if not self.users:
            return True  # Kafka's PropertyFileLoginModule: an empty file authenticates everyone
        if username is None or password is None:
            return False
        expected = self.users.get(username)
        # compare against a dummy for unknown users too, so timing tells nothing about who exists
        ok = hmac.compare_digest(password.encode("utf-8"), (expected if expected is not None else "\0").encode("utf-8"))
        return ok and expected is not None


def parse_basic_authorization(header: str | None) -> tuple[str | None, str | None]:
    """(user, password) from `Authorization: Basic <base64(user:password)>`; (None, None) when absent or
    malformed. As Kafka: the scheme is case-insensitive and the user is everything before the first colon,
    which must not be the first character."""
    if not header:
        return None, None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        return None, None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None, None
    colon = decoded.find(":")
    if colon <= 0:
        return None, None
    return decoded[:colon], decoded[colon + 1 :]


def credentials_file_from_jaas(jaas: str) -> str:
    """The `file="..."` option of the `KafkaConnect` entry of a JAAS configuration (file path or text)."""
    text = jaas
    if "{" not in jaas:
        try:
            text = Path(jaas).read_text(encoding="utf-8")
        except OSError as exc:
            raise SecurityConfigError(
                f"Cannot read the JAAS configuration file '{jaas}': {exc.strerror or exc}"
            ) from None
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    entries = {m.group(1): m.group(2) for m in re.finditer(r"([\w.\-]+)\s*\{(.*?)\}\s*;", text, flags=re.S)}
    body = entries.get(JAAS_LOGIN_MODULE_ENTRY)
    if body is None:
        raise SecurityConfigError(
            f"The JAAS configuration has no '{JAAS_LOGIN_MODULE_ENTRY}' entry "
            f"(entries found: {', '.join(entries) or 'none'})"
        )
    match = re.search(r"""\bfile\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+?))\s*[;\s]""", body + " ")
    if match is None:
        raise SecurityConfigError(
            f"The JAAS '{JAAS_LOGIN_MODULE_ENTRY}' entry has no file=\"...\" option naming the credentials file"
        )
    value = match.group(1) if match.group(1) is not None else match.group(2)
    return re.sub(r"\\(.)", r"\1", value)


def _jaas_from_kafka_opts(environ: Mapping[str, str]) -> str | None:
    for name in ("KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "JAVA_TOOL_OPTIONS"):
        try:
            words = shlex.split(environ.get(name, ""))
        except ValueError:
            continue
        for word in words:
            if word.startswith("-Djava.security.auth.login.config="):
                return word.split("=", 1)[1]
    return None


def basic_auth_from_worker_config(config: WorkerConfig, environ: Mapping[str, str] | None = None) -> Credentials | None:
    """The credentials the REST listener checks, or None when basic auth is off. Raises
    SecurityConfigError when it is asked for but cannot be set up (never silently open)."""
    environ = os.environ if environ is None else environ
    extensions = [c for c in config.get_list("rest.extension.classes") if c]
    unknown = [c for c in extensions if c != BASIC_AUTH_EXTENSION]
    if unknown:
        log.warning(
            "Ignoring REST extension classes %s: only %s is supported", ", ".join(unknown), BASIC_AUTH_EXTENSION
        )
    path = config.get_str(CREDENTIALS_FILE_CONFIG)
    if path:
        return Credentials.from_file(str(path))
    jaas = config.get_str(JAAS_CONFIG)
    if jaas:
        return Credentials.from_file(credentials_file_from_jaas(str(jaas)))
    if BASIC_AUTH_EXTENSION in extensions:
        jaas = _jaas_from_kafka_opts(environ)
        if jaas:
            return Credentials.from_file(credentials_file_from_jaas(jaas))
        raise SecurityConfigError(
            f"{BASIC_AUTH_EXTENSION} is listed in rest.extension.classes but no credentials are configured: set "
            f"{CREDENTIALS_FILE_CONFIG} (a file of 'user: password' lines) or {JAAS_CONFIG} (a JAAS file whose "
            f'{JAAS_LOGIN_MODULE_ENTRY} entry has file="..."), or -Djava.security.auth.login.config in KAFKA_OPTS'
        )
    return None


class BasicAuthMiddleware:
    """ASGI middleware: every HTTP request needs valid basic credentials, else 401 (nothing exempt)."""

    def __init__(self, app: ASGIApp, credentials: Credentials) -> None:
        self.app = app
        self.credentials = credentials

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                header = value.decode("latin-1")
                break
        user, password = parse_basic_authorization(header)
        if self.credentials.check(user, password):
            await self.app(scope, receive, send)
            return
        # debug only, and never the password: a mistyped password must not flood the log
        log.debug("Request %s %s failed authentication (user %r)", scope.get("method"), scope.get("path"), user)
        body = f'{{"error_code":401,"message":"{UNAUTHORIZED_MESSAGE}"}}'.encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", f'Basic realm="{REALM}", charset="UTF-8"'.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def basic_authorization_header(user: str, password: str) -> str:
    """`Authorization` header value for a client (the Airflow hook, tests)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


# ---- TLS --------------------------------------------------------------------------------------------


_PROTOCOLS = {
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1": ssl.TLSVersion.TLSv1,
}


class _SslSettings:
    """The https listener's SSL settings, from the typed worker config (WorkerConfig.rest_ssl)."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config

    def get(self, name: str) -> str | None:
        value = self.config.rest_ssl(name)
        return None if value is None else str(value).strip()

    def get_list(self, name: str) -> list[str]:
        return [v for v in self.config.rest_ssl(name) or [] if v]


def first_listener(config: WorkerConfig) -> str:
    """The listener the worker binds (the first of `listeners`, as WorkerConfig.rest_bind)."""
    listeners = config.get_list("listeners")
    return listeners[0] if listeners else "http://:8083"


def listener_is_https(config: WorkerConfig) -> bool:
    return first_listener(config).lower().startswith("https://")


def _pem_of_pkcs12(path: str, password: str | None, what: str) -> tuple[bytes | None, bytes]:
    """(private key PEM or None, certificates PEM) from a PKCS12 store."""
    try:
        from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12
    except ImportError:
        raise SecurityConfigError(
            f"{what} is a PKCS12 store, which needs the 'cryptography' package "
            "(pip install cryptography), or convert it to PEM"
        ) from None
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SecurityConfigError(f"Cannot read {what} '{path}': {exc.strerror or exc}") from None
    try:
        store = pkcs12.load_pkcs12(data, password.encode("utf-8") if password else None)
    except ValueError as exc:
        raise SecurityConfigError(
            f"Cannot read {what} '{path}' as PKCS12 (wrong password or not PKCS12?): {exc}"
        ) from None
    key = None
    if store.key is not None:
        key = store.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    certs = [store.cert.certificate] if store.cert is not None else []
    certs += [c.certificate for c in store.additional_certs]
    return key, b"".join(c.public_bytes(Encoding.PEM) for c in certs)


def _store_type(declared: str | None, path: str | None, what: str) -> str:
    """The store type; when unset, sniffed from the file (Kafka's JKS default cannot be read here)."""
    if declared:
        kind = declared.upper()
    elif path:
        try:
            head = Path(path).read_bytes()[:64]
        except OSError as exc:
            raise SecurityConfigError(f"Cannot read {what} '{path}': {exc.strerror or exc}") from None
        kind = "PEM" if b"-----BEGIN" in head else ("JKS" if head[:4] == b"\xfe\xed\xfe\xed" else "PKCS12")
    else:
        kind = "PEM"
    if kind in ("PKCS12", "PFX", "P12"):
        return "PKCS12"
    if kind == "PEM":
        return "PEM"
    raise SecurityConfigError(
        f"{what} type {kind} is not supported: use PEM or PKCS12 (convert a JKS store with "
        "'keytool -importkeystore -srckeystore X.jks -destkeystore X.p12 -deststoretype PKCS12')"
    )


def _load_key_store(context: ssl.SSLContext, settings: _SslSettings, required: bool) -> bool:
    """Load the key and certificate chain into `context`; False when none is configured."""
    location = settings.get("ssl.keystore.location")
    chain = settings.get("ssl.keystore.certificate.chain")
    inline_key = settings.get("ssl.keystore.key")
    key_password = settings.get("ssl.key.password")
    store_password = settings.get("ssl.keystore.password")
    if location is None:
        if chain is None:
            if required:
                raise SecurityConfigError(
                    "An https listener needs a key store: set listeners.https.ssl.keystore.location "
                    "(or ssl.keystore.location), or ssl.keystore.certificate.chain and ssl.keystore.key"
                )
            return False
        if not inline_key:
            raise SecurityConfigError("ssl.keystore.certificate.chain is set but ssl.keystore.key is not")
        _load_chain_from_memory(context, chain.encode(), inline_key.encode(), key_password)
        return True
    kind = _store_type(settings.get("ssl.keystore.type"), location, "the key store")
    if kind == "PKCS12":
        key, certs = _pem_of_pkcs12(location, store_password, "the key store")
        if key is None:
            raise SecurityConfigError(f"The key store '{location}' holds no private key")
        _load_chain_from_memory(context, certs, key, None)
        return True
    try:
        context.load_cert_chain(location, password=key_password or store_password)
    except (ssl.SSLError, OSError) as exc:
        raise SecurityConfigError(
            f"Cannot load the PEM key store '{location}' (it must hold the private key and "
            f"the certificate chain; ssl.key.password for an encrypted key): {exc}"
        ) from None
    return True


def _load_chain_from_memory(context: ssl.SSLContext, chain: bytes, key: bytes, password: str | None) -> None:
    # the ssl module only loads chains from files: write them to a private temporary folder, briefly
    with tempfile.TemporaryDirectory(prefix="connect-ssl-") as folder:
        os.chmod(folder, 0o700)
        cert_path, key_path = Path(folder, "chain.pem"), Path(folder, "key.pem")
        for path, data in ((cert_path, chain), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data if data.endswith(b"\n") else data + b"\n")
        try:
            context.load_cert_chain(str(cert_path), str(key_path), password=password)
        except ssl.SSLError as exc:
            raise SecurityConfigError(f"Cannot load the key store's key and certificate chain: {exc}") from None


def _load_trust_store(context: ssl.SSLContext, settings: _SslSettings) -> bool:
    """Load trusted certificates into `context`; False when none is configured."""
    inline = settings.get("ssl.truststore.certificates")
    location = settings.get("ssl.truststore.location")
    if inline:
        pem = inline
    elif location:
        kind = _store_type(settings.get("ssl.truststore.type"), location, "the trust store")
        if kind == "PKCS12":
            pem = _pem_of_pkcs12(location, settings.get("ssl.truststore.password"), "the trust store")[1].decode()
        else:
            try:
                pem = Path(location).read_text(encoding="ascii")
            except (OSError, UnicodeDecodeError) as exc:
                raise SecurityConfigError(f"Cannot read the trust store '{location}': {exc}") from None
    else:
        return False
    if "-----BEGIN CERTIFICATE-----" not in pem:
        raise SecurityConfigError("The trust store holds no certificate")
    try:
        context.load_verify_locations(cadata=pem)
    except ssl.SSLError as exc:
        raise SecurityConfigError(f"Cannot load the trust store's certificates: {exc}") from None
    return True


def _apply_protocols(context: ssl.SSLContext, settings: _SslSettings) -> None:
    enabled = settings.get_list("ssl.enabled.protocols") or ["TLSv1.2", "TLSv1.3"]
    unknown = [p for p in enabled if p not in _PROTOCOLS]
    if unknown:
        raise SecurityConfigError(f"Unsupported ssl.enabled.protocols {', '.join(unknown)}: use TLSv1.2 and/or TLSv1.3")
    versions = sorted(_PROTOCOLS[p] for p in enabled)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    ciphers = settings.get_list("ssl.cipher.suites")
    if ciphers:
        try:
            context.set_ciphers(":".join(ciphers))  # OpenSSL names; applies to TLS 1.2 and below
        except ssl.SSLError as exc:
            raise SecurityConfigError(f"No usable cipher in ssl.cipher.suites: {exc}") from None


def ssl_context_from_worker_config(config: WorkerConfig) -> ssl.SSLContext | None:
    """The server-side context of an `https://` listener, or None for `http://`."""
    if not listener_is_https(config):
        return None
    settings = _SslSettings(config)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _apply_protocols(context, settings)
    _load_key_store(context, settings, required=True)
    client_auth = (settings.get("ssl.client.auth") or "none").lower()
    if client_auth not in ("none", "requested", "required"):
        raise SecurityConfigError(f"Invalid ssl.client.auth {client_auth!r}: use required, requested or none")
    if client_auth != "none":
        if not _load_trust_store(context, settings):
            context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        context.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
    return context


def client_ssl_context(config: WorkerConfig) -> ssl.SSLContext:
    """Client-side context for worker-to-worker requests (and tests): the same trust store, the key store
    as client certificate (for `ssl.client.auth=required` peers), hostname checks unless
    `ssl.endpoint.identification.algorithm` is blank (Kafka's default is `https`: checked)."""
    settings = _SslSettings(config)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _apply_protocols(context, settings)
    if not _load_trust_store(context, settings):
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    _load_key_store(context, settings, required=False)
    algorithm = config.rest_ssl_as_given("ssl.endpoint.identification.algorithm")
    context.check_hostname = algorithm is None or str(algorithm).strip().lower() == "https"
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def forwarding_client_kwargs(config: WorkerConfig) -> dict[str, Any]:
    """Keyword arguments for `httpx.AsyncClient`/`httpx.Client` that talk to other workers: TLS trust
    as configured when this worker's listener is https (peers of one cluster share the scheme)."""
    if not listener_is_https(config):
        return {}
    return {"verify": client_ssl_context(config)}


def uvicorn_ssl_kwargs(context: ssl.SSLContext | None) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.Config` serving `context` (none for plain http)."""
    if context is None:
        return {}
    return {"ssl_context_factory": lambda _config, _default: context}
