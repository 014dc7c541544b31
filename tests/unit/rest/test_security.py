"""REST security: basic auth (Kafka's PropertyFileLoginModule format) and TLS listeners, over real sockets."""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from runtime.api.errors import ConfigError
from runtime.rest.security import (
    BASIC_AUTH_EXTENSION,
    BasicAuthMiddleware,
    Credentials,
    SecurityConfigError,
    basic_auth_from_worker_config,
    basic_authorization_header,
    client_ssl_context,
    credentials_file_from_jaas,
    forwarding_client_kwargs,
    parse_basic_authorization,
    ssl_context_from_worker_config,
    uvicorn_ssl_kwargs,
)
from runtime.worker_config import WorkerConfig
from tests.support.pki import Pki, certificate
from tests.support.worker import wait_for


# the security functions read the typed worker config: these build one from plain properties
def _server_context(props: dict[str, str]) -> ssl.SSLContext | None:
    return ssl_context_from_worker_config(WorkerConfig(props))


def _client_context(props: dict[str, str]) -> ssl.SSLContext:
    return client_ssl_context(WorkerConfig(props))


def _forwarding(props: dict[str, str]) -> dict[str, Any]:
    return forwarding_client_kwargs(WorkerConfig(props))


def _basic_auth(props: dict[str, str], environ: dict[str, str]) -> Credentials | None:
    return basic_auth_from_worker_config(WorkerConfig(props), environ=environ)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


# ---- a real server ----------------------------------------------------------------------------------


def _app(credentials: Credentials | None = None):
    async def hello(request):
        return JSONResponse({"path": request.url.path, "scheme": request.url.scheme})

    app = Starlette(routes=[Route("/{rest:path}", hello, methods=["GET", "POST", "PUT", "DELETE"])])
    if credentials is not None:
        app.add_middleware(BasicAuthMiddleware, credentials=credentials)
    return app


class Server:
    def __init__(self, app, context: ssl.SSLContext | None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", **uvicorn_ssl_kwargs(context))
        self.server = uvicorn.Server(config)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        wait_for(lambda: self.server.started, timeout_s=10, interval_s=0.02, what="the server to start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def serve() -> Iterator:
    servers: list[Server] = []

    def start(app, context: ssl.SSLContext | None = None) -> Server:
        server = Server(app, context).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__()


# ---- basic auth -------------------------------------------------------------------------------------


def test_authorization_header_parsing_follows_kafka() -> None:
    assert parse_basic_authorization(basic_authorization_header("alice", "s:e:cret")) == ("alice", "s:e:cret")
    assert parse_basic_authorization("bAsIc " + basic_authorization_header("bob", "")[6:]) == ("bob", "")
    assert parse_basic_authorization(None) == (None, None)
    assert parse_basic_authorization("Bearer abc") == (None, None)
    assert parse_basic_authorization("Basic !!!notbase64") == (None, None)
    assert parse_basic_authorization(basic_authorization_header("", "x")) == (None, None)  # colon first
    assert parse_basic_authorization("Basic " + "bm9jb2xvbg==") == (None, None)  # "nocolon"


def test_credentials_file_in_property_file_login_module_format(tmp_path: Path) -> None:
    path = tmp_path / "credentials.properties"
    path.write_text("# users\nalice: alice-secret\nbob=bob secret\ncarol : p\\:w\n")
    credentials = Credentials.from_file(path)
    assert credentials.check("alice", "alice-secret")
    assert credentials.check("bob", "bob secret")
    assert credentials.check("carol", "p:w")
    assert not credentials.check("alice", "bob secret")
    assert not credentials.check("mallory", "alice-secret")
    assert not credentials.check(None, None)
    assert "alice-secret" not in repr(credentials)


def test_empty_credentials_file_permits_everyone_as_kafka_does(tmp_path: Path, caplog) -> None:
    path = tmp_path / "empty.properties"
    path.write_text("# nobody\n")
    with caplog.at_level(logging.WARNING):
        credentials = Credentials.from_file(path)
    assert credentials.check(None, None)
    assert "all requests will be permitted" in caplog.text


def test_jaas_file_option_is_followed(tmp_path: Path) -> None:
    credentials = tmp_path / "users.properties"
    credentials.write_text("admin: admin-secret\n")
    jaas = tmp_path / "connect.jaas"
    jaas.write_text(
        '// comment\nOther { x.Y required file="/nope"; };\n'
        "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
        f'required\n  file="{credentials}";\n}};\n'
    )
    assert credentials_file_from_jaas(str(jaas)) == str(credentials)
    auth = _basic_auth({"rest.basic.auth.jaas.config": str(jaas)}, environ={})
    assert auth is not None and auth.check("admin", "admin-secret")
    inline = f"KafkaConnect {{ x.PropertyFileLoginModule required file={credentials}; }};"
    assert credentials_file_from_jaas(inline) == str(credentials)
    with pytest.raises(SecurityConfigError, match="no 'KafkaConnect' entry"):
        credentials_file_from_jaas('Other { a.B required file="x"; };')
    with pytest.raises(SecurityConfigError, match="no file="):
        credentials_file_from_jaas("KafkaConnect { a.B required debug=true; };")


def test_worker_config_sources_of_credentials(tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("u: p\n")
    jaas = tmp_path / "connect.jaas"
    jaas.write_text(f'KafkaConnect {{ a.PropertyFileLoginModule required file="{users}"; }};')
    assert _basic_auth({}, environ={}) is None
    assert _basic_auth({"rest.basic.auth.credentials.file": str(users)}, environ={}).check("u", "p")
    kafka_way = {"rest.extension.classes": BASIC_AUTH_EXTENSION}
    env = {"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={jaas}"}
    assert _basic_auth(kafka_way, environ=env).check("u", "p")
    # asked for but impossible: fail closed with a message saying what to set
    with pytest.raises(SecurityConfigError, match="rest.basic.auth.credentials.file"):
        _basic_auth(kafka_way, environ={})
    with pytest.raises(SecurityConfigError, match="Error loading the basic auth credentials file"):
        _basic_auth({"rest.basic.auth.credentials.file": str(tmp_path / "missing")}, environ={})


def test_basic_auth_middleware_over_http(tmp_path: Path, serve, caplog) -> None:
    users = tmp_path / "users.properties"
    users.write_text("alice: wonderland-42\n")
    server = serve(_app(Credentials.from_file(users)))
    url = f"http://127.0.0.1:{server.port}"
    with caplog.at_level(logging.DEBUG, logger="runtime.rest.security"):
        for path in ("/", "/connectors", "/connectors/x/tasks", "/health", "/openapi.json"):
            denied = httpx.get(url + path)
            assert denied.status_code == 401, path
            assert denied.json() == {"error_code": 401, "message": "User cannot access the resource."}
            assert denied.headers["content-type"] == "application/json"
            assert denied.headers["www-authenticate"].startswith("Basic realm=")
        wrong = httpx.post(url + "/connectors/x/tasks", auth=("alice", "wrong-password-99"), json=[])
        assert wrong.status_code == 401
        assert httpx.get(url + "/", headers={"Authorization": "Basic %%%"}).status_code == 401
        ok = httpx.get(url + "/connectors", auth=("alice", "wonderland-42"))
        assert ok.status_code == 200 and ok.json()["path"] == "/connectors"
    assert "wrong-password-99" not in caplog.text and "wonderland-42" not in caplog.text


# ---- TLS --------------------------------------------------------------------------------------------


def _https(pki: Pki, **extra: str) -> dict[str, str]:
    return {"listeners": "https://127.0.0.1:0", **extra}


def test_http_listener_has_no_ssl_context() -> None:
    assert _server_context({"listeners": "http://127.0.0.1:8083"}) is None
    assert _server_context({}) is None
    assert _forwarding({"listeners": "http://:8083"}) == {}


def test_https_with_pem_keystore_file_and_trusting_client(pki: Pki, serve) -> None:
    worker = _https(
        pki,
        **{
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.keystore.location": pki.server_pem_store(),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": pki.ca_file(),
        },
    )
    server = serve(_app(), _server_context(worker))
    with httpx.Client(**_forwarding(worker)) as client:
        answer = client.get(f"https://127.0.0.1:{server.port}/connectors")
        assert answer.status_code == 200 and answer.json()["scheme"] == "https"
        assert client.get(f"https://localhost:{server.port}/").status_code == 200
    # a client that does not trust the CA is refused
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"https://127.0.0.1:{server.port}/", verify=ssl.create_default_context())
    # plain http on the https port gets nothing useful
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{server.port}/", timeout=5)


def test_https_with_inline_pem_and_encrypted_key(pki: Pki, serve) -> None:
    worker = _https(
        pki,
        **{
            "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": pki.cert_pem(pki.server, pki.ca).decode(),
            "ssl.keystore.key": pki.key_pem(pki.server_key, b"key-pass").decode(),
            "ssl.key.password": "key-pass",
            "ssl.truststore.certificates": pki.cert_pem(pki.ca).decode(),
        },
    )
    server = serve(_app(), _server_context(worker))
    answer = httpx.get(f"https://localhost:{server.port}/x", verify=_client_context(worker))
    assert answer.json() == {"path": "/x", "scheme": "https"}


def test_https_with_pkcs12_stores_and_required_client_auth(pki: Pki, serve) -> None:
    server_cfg = _https(
        pki,
        **{
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": pki.p12("server.p12", pki.server_key, pki.server, b"store-pass"),
            "listeners.https.ssl.keystore.password": "store-pass",
            "listeners.https.ssl.truststore.location": pki.ca_file(),
            "listeners.https.ssl.client.auth": "required",
        },
    )
    server = serve(_app(), _server_context(server_cfg))
    url = f"https://127.0.0.1:{server.port}/"
    # a peer worker with its own PKCS12 key store (type sniffed) and the CA as trust store gets in
    peer = _https(
        pki,
        **{
            "ssl.keystore.location": pki.p12("client.p12", pki.client_key, pki.client, b"c-pass"),
            "ssl.keystore.password": "c-pass",
            "ssl.truststore.location": pki.ca_file(),
        },
    )
    with httpx.Client(**_forwarding(peer)) as client:
        assert client.get(url).status_code == 200
    # one that trusts the server but shows no certificate is refused by the server
    anonymous = ssl.create_default_context(cafile=pki.ca_file())
    with pytest.raises(httpx.HTTPError):
        httpx.get(url, verify=anonymous, timeout=5)


def test_requested_client_auth_lets_anonymous_clients_in(pki: Pki, serve) -> None:
    cfg = _https(
        pki,
        **{
            "ssl.keystore.location": pki.server_pem_store(),
            "ssl.truststore.location": pki.ca_file(),
            "ssl.client.auth": "requested",
        },
    )
    server = serve(_app(), _server_context(cfg))
    assert (
        httpx.get(
            f"https://localhost:{server.port}/", verify=ssl.create_default_context(cafile=pki.ca_file())
        ).status_code
        == 200
    )


def test_enabled_protocols_are_enforced(pki: Pki, serve) -> None:
    cfg = _https(pki, **{"ssl.keystore.location": pki.server_pem_store(), "ssl.enabled.protocols": "TLSv1.3"})
    server = serve(_app(), _server_context(cfg))
    old = ssl.create_default_context(cafile=pki.ca_file())
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"https://localhost:{server.port}/", verify=old)
    modern = ssl.create_default_context(cafile=pki.ca_file())
    assert httpx.get(f"https://localhost:{server.port}/", verify=modern).status_code == 200
    with pytest.raises(SecurityConfigError, match="ssl.enabled.protocols"):
        _server_context({**cfg, "ssl.enabled.protocols": "SSLv3"})


def test_hostname_verification_follows_endpoint_identification(pki: Pki, serve) -> None:
    # a certificate for "elsewhere" only: refused by default, accepted when identification is disabled
    key = ec.generate_private_key(ec.SECP256R1())
    cert = certificate("elsewhere", key, "test-ca", pki.ca_key, ca=False, sans=[x509.DNSName("elsewhere.example")])
    store = pki.write("elsewhere.pem", pki.key_pem(key) + pki.cert_pem(cert))
    cfg = _https(pki, **{"ssl.keystore.location": store, "ssl.truststore.location": pki.ca_file()})
    server = serve(_app(), _server_context(cfg))
    url = f"https://127.0.0.1:{server.port}/"
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, verify=_client_context(cfg))
    relaxed = {**cfg, "ssl.endpoint.identification.algorithm": ""}
    assert httpx.get(url, verify=_client_context(relaxed)).status_code == 200


def test_https_with_basic_auth_together(pki: Pki, serve, tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("ops: tls-and-auth\n")
    cfg = _https(pki, **{"ssl.keystore.location": pki.server_pem_store(), "ssl.truststore.location": pki.ca_file()})
    server = serve(_app(Credentials.from_file(users)), _server_context(cfg))
    url = f"https://localhost:{server.port}/connectors"
    assert httpx.get(url, verify=_client_context(cfg)).status_code == 401
    assert httpx.get(url, verify=_client_context(cfg), auth=("ops", "tls-and-auth")).status_code == 200


def test_configuration_errors_are_clear(pki: Pki, tmp_path: Path) -> None:
    with pytest.raises(SecurityConfigError, match="needs a key store"):
        _server_context({"listeners": "https://:8443"})
    jks = tmp_path / "server.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 60)
    with pytest.raises(SecurityConfigError, match="JKS is not supported.*keytool"):
        _server_context({"listeners": "https://:8443", "ssl.keystore.location": str(jks)})
    with pytest.raises(SecurityConfigError, match="JKS is not supported"):
        _server_context(
            {"listeners": "https://:8443", "ssl.keystore.type": "JKS", "ssl.keystore.location": pki.server_pem_store()}
        )
    p12 = pki.p12("wrong.p12", pki.server_key, pki.server, b"right")
    with pytest.raises(SecurityConfigError, match="wrong password"):
        _server_context({"listeners": "https://:8443", "ssl.keystore.location": p12, "ssl.keystore.password": "wrong"})
    with pytest.raises(SecurityConfigError, match="Cannot read the key store"):
        _server_context({"listeners": "https://:8443", "ssl.keystore.location": str(tmp_path / "none")})
    # a bad value of a typed setting is the worker file's error, whether given as ssl.* or listeners.https.*
    with pytest.raises(ConfigError, match="Invalid value always for configuration ssl.client.auth"):
        _server_context(
            {"listeners": "https://:8443", "ssl.keystore.location": pki.server_pem_store(), "ssl.client.auth": "always"}
        )
    with pytest.raises(ConfigError, match="configuration listeners.https.ssl.client.auth"):
        _server_context(
            {
                "listeners": "https://:8443",
                "ssl.keystore.location": pki.server_pem_store(),
                "listeners.https.ssl.client.auth": "always",
            }
        )
