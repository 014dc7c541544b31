"""A real worker process with an https listener and basic auth (Kafka's basic-auth extension settings)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.broker import unique
from tests.support.cluster import group_topics
from tests.support.pki import Pki
from tests.support.worker import REPO_ROOT, WorkerProcess, wait_for, write_properties

from .conftest import SOURCE

pytestmark = pytest.mark.integration


class SecureWorker(WorkerProcess):
    """WorkerProcess on https, polled for readiness with the CA and credentials it needs."""

    def __init__(self, *args: Any, verify: Any, auth: tuple[str, str] | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.verify, self.auth = verify, auth
        self.props["listeners"] = f"https://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}"

    def http(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.verify, timeout=30, **kwargs)

    def start(self, timeout_s: float = 60.0, wait_healthy: bool = True) -> SecureWorker:
        props_file = write_properties(self.workdir / "worker.properties", self.props)
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runtime.cli", self.mode, str(props_file)],
            cwd=REPO_ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + timeout_s
        with self.http(auth=self.auth) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"worker exited with {self.process.returncode}:\n{self.log_tail()}")
                try:
                    if client.get("/health").status_code == 200:
                        return self
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)  # the poll interval of a wait for readiness (the worker also may exit)
        raise RuntimeError(f"worker did not become ready:\n{self.log_tail()}")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


def test_https_worker_with_kafka_style_basic_auth(bootstrap_servers: str, tmp_path: Path, pki: Pki) -> None:
    users = tmp_path / "credentials.properties"
    users.write_text("admin: admin-secret\nreader: reader-secret\n")
    jaas = tmp_path / "connect.jaas"
    jaas.write_text(
        "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
        f'required\n  file="{users}";\n}};\n'
    )
    props = {
        "rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
        "rest.basic.auth.jaas.config": str(jaas),
        "listeners.https.ssl.keystore.type": "PKCS12",
        "listeners.https.ssl.keystore.location": pki.p12("server.p12", pki.server_key, pki.server, b"store-pass"),
        "listeners.https.ssl.keystore.password": "store-pass",
        "ssl.truststore.location": pki.ca_file(),
    }
    worker = SecureWorker(
        tmp_path / "worker", bootstrap_servers, props=props, verify=pki.ca_file(), auth=("admin", "admin-secret")
    )
    worker.start()
    try:
        with worker.http() as anonymous:
            for method, path in (
                ("GET", "/"),
                ("GET", "/connectors"),
                ("GET", "/openapi.json"),
                ("POST", "/connectors"),
                ("GET", "/no/such/path"),
            ):
                answer = anonymous.request(method, path)
                assert answer.status_code == 401, (method, path, answer.text)
                assert answer.json()["message"] == "User cannot access the resource."
                assert answer.headers["www-authenticate"].startswith("Basic")
        with worker.http(auth=("admin", "wrong")) as wrong:
            assert wrong.get("/connectors").status_code == 401
        with worker.http(auth=("admin", "admin-secret")) as admin:
            created = admin.post(
                "/connectors",
                json={"name": "secure", "config": {"connector.class": SOURCE, "topic": "secure", "throughput": "5"}},
            )
            assert created.status_code == 201, created.text
            assert created.headers["location"].startswith("https://")
        with worker.http(auth=("reader", "reader-secret")) as reader:
            assert reader.get("/connectors").json() == ["secure"]
        _airflow_hook_reaches_a_secured_worker(worker, pki)
        # plain http on the https port gets no answer
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{worker.port}/", timeout=5)
        assert "admin-secret" not in worker.log_path.read_text(errors="replace")
    finally:
        worker.stop()


def _airflow_hook_reaches_a_secured_worker(worker: SecureWorker, pki: Pki) -> None:
    """The provider's hook, configured from an Airflow connection (login/password, CA bundle extra)."""
    import json

    from tests.support.env import require

    try:
        from airflow_provider_connect.errors import ConnectApiError
        from airflow_provider_connect.hooks.connect import ConnectHook
    except ImportError:
        require(False, "Apache Airflow")
    base = {"conn_type": "kafka_connect", "host": worker.url, "login": "admin", "extra": {"ca_bundle": pki.ca_file()}}
    variants = {"SECURE_OK": {**base, "password": "admin-secret"}, "SECURE_BAD": {**base, "password": "nope"}}
    previous = {k: os.environ.get(f"AIRFLOW_CONN_{k}") for k in variants}
    try:
        for key, conn in variants.items():
            os.environ[f"AIRFLOW_CONN_{key}"] = json.dumps(conn)
        assert "secure" in ConnectHook(kafka_connect_conn_id="secure_ok").list_connectors()
        with pytest.raises(ConnectApiError) as refused:
            ConnectHook(kafka_connect_conn_id="secure_bad").list_connectors()
        assert "401" in str(refused.value) and "nope" not in str(refused.value)
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(f"AIRFLOW_CONN_{key}", None)
            else:
                os.environ[f"AIRFLOW_CONN_{key}"] = value


@pytest.mark.parametrize(
    "props,message",
    [
        (
            {
                "rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
            },
            "rest.basic.auth.credentials.file",
        ),
        (
            {"rest.basic.auth.credentials.file": "/nonexistent/users.properties"},
            "Error loading the basic auth credentials",
        ),
        ({"listeners": "https://127.0.0.1:0"}, "needs a key store"),
    ],
)
def test_bad_security_settings_stop_the_worker_with_code_2(
    bootstrap_servers: str, tmp_path: Path, props: dict[str, str], message: str
) -> None:
    worker = WorkerProcess(tmp_path, bootstrap_servers, props=props)
    with pytest.raises(RuntimeError, match="worker exited with 2"):
        worker.start(timeout_s=60)
    assert message in worker.log_path.read_text(errors="replace")
    worker.stop()


def test_distributed_forwarding_over_https_carries_credentials(
    bootstrap_servers: str, tmp_path: Path, pki: Pki
) -> None:
    """Leader-only requests sent to a follower are forwarded over https (the peers' CA trusted through
    ssl.truststore.*), with the caller's credentials: creating through either worker works."""
    users = tmp_path / "credentials.properties"
    users.write_text("ops: ops-secret\n")
    group = unique("secure-group")
    props = {
        **group_topics(group),
        "heartbeat.interval.ms": 500,
        "session.timeout.ms": 4000,
        "scheduled.rebalance.max.delay.ms": 0,
        "rest.basic.auth.credentials.file": str(users),
        "ssl.keystore.location": pki.server_pem_store(),
        "ssl.truststore.location": pki.ca_file(),
    }
    workers = [
        SecureWorker(
            tmp_path / f"w{i}",
            bootstrap_servers,
            props=props,
            mode="distributed",
            verify=pki.ca_file(),
            auth=("ops", "ops-secret"),
        )
        for i in range(2)
    ]
    try:
        workers[0].start()
        workers[1].start()
        for i, worker in enumerate(workers):
            with worker.http(auth=("ops", "ops-secret")) as client:
                name = f"via-{i}"
                created = wait_for(
                    lambda: (lambda r: r if r.status_code == 201 else None)(
                        client.post(
                            "/connectors", json={"name": name, "config": {"connector.class": SOURCE, "topic": name}}
                        )
                    ),
                    timeout_s=60,
                    what=f"create through worker {i}",
                )
                assert created.json()["name"] == name
            # without credentials a follower refuses before forwarding anything
            with worker.http() as anonymous:
                assert (
                    anonymous.post(
                        "/connectors", json={"name": f"anon-{i}", "config": {"connector.class": SOURCE, "topic": "x"}}
                    ).status_code
                    == 401
                )
        with workers[0].http(auth=("ops", "ops-secret")) as client:
            wait_for(
                lambda: sorted(client.get("/connectors").json()) == ["via-0", "via-1"],
                timeout_s=30,
                what="both connectors to be listed",
            )
    finally:
        for worker in workers:
            worker.stop()
