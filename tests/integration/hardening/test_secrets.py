"""PASSWORD-type values never show in validate answers or in the worker's log (a plugin of our own, loaded
from plugin.path, declares one; Kafka client secrets in client overrides count too)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import httpx
import pytest

from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

SECRET = "TopSecret-4711"
CLIENT_SECRET = "ClientSecret-0815"
PLUGIN = textwrap.dedent("""
    import time
    from runtime.api import ConfigDef, Importance, SourceConnector, SourceTask, Type

    CONFIG = (ConfigDef()
              .define("db.user", Type.STRING, "app", importance=Importance.HIGH, documentation="user")
              .define("db.password", Type.PASSWORD, importance=Importance.HIGH, documentation="secret")
              .define("db.port", Type.INT, 5432, importance=Importance.LOW, documentation="port"))

    class SecretSourceTask(SourceTask):
        def version(self):
            return "1.0"
        def start(self, props):
            self.props = props
        def poll(self):
            time.sleep(0.2)  # the plugin's own pacing: a task with nothing to produce waits a little per poll
            return None
        def stop(self):
            pass

    class SecretSourceConnector(SourceConnector):
        def version(self):
            return "1.0"
        def start(self, props):
            self.props = dict(props)
        def task_class(self):
            return SecretSourceTask
        def task_configs(self, max_tasks):
            return [dict(self.props)]
        def stop(self):
            pass
        def config(self):
            return CONFIG
""")
CLASS = "secret_plugin_h12.SecretSourceConnector"


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    plugins = tmp_path_factory.mktemp("plugins")
    (plugins / "secret_plugin_h12.py").write_text(PLUGIN)
    proc = WorkerProcess(
        tmp_path_factory.mktemp("secrets"), bootstrap_servers, props={"plugin.path": str(plugins), "log.level": "DEBUG"}
    )
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def config(**extra: str) -> dict[str, str]:
    return {"connector.class": CLASS, "name": "secretive", "db.password": SECRET, **extra}


def test_validate_hides_password_values(worker: WorkerProcess) -> None:
    with httpx.Client(base_url=worker.url, timeout=30) as client:
        for body in (config(), config(**{"db.port": "not-a-number"})):
            answer = client.put("/connector-plugins/SecretSourceConnector/config/validate", json=body)
            assert answer.status_code == 200, answer.text
            assert SECRET not in answer.text
            values = {c["value"]["name"]: c["value"] for c in answer.json()["configs"] if c.get("value")}
            assert values["db.password"]["value"] == "[hidden]"
            assert values["db.user"]["value"] == "app"  # other values are shown
        # an invalid config answered as a 400 names the problem, not the secret
        bad = client.post(
            "/connectors",
            json={"name": "bad-secretive", "config": {**config(**{"db.port": "x"}), "name": "bad-secretive"}},
        )
        assert bad.status_code == 400 and "db.port" in bad.text and SECRET not in bad.text


def test_client_override_secrets_are_hidden_in_validate(worker: WorkerProcess) -> None:
    overrides = {
        "producer.override.ssl.key.password": CLIENT_SECRET,
        "producer.override.sasl.jaas.config": f'x.Y required password="{CLIENT_SECRET}";',
        "admin.override.ssl.truststore.password": CLIENT_SECRET,
    }
    with httpx.Client(base_url=worker.url, timeout=30) as client:
        answer = client.put("/connector-plugins/SecretSourceConnector/config/validate", json=config(**overrides))
        assert answer.status_code == 200, answer.text
        assert CLIENT_SECRET not in answer.text, "a Kafka client PASSWORD setting is shown in the validate answer"


def test_secrets_stay_out_of_the_log(worker: WorkerProcess) -> None:
    with httpx.Client(base_url=worker.url, timeout=30) as client:
        created = client.post("/connectors", json={"name": "secretive", "config": config()})
        assert created.status_code == 201, created.text
        wait_for(
            lambda: client.get("/connectors/secretive/status").json()["tasks"][0]["state"] == "RUNNING",
            timeout_s=30,
            what="the task to run",
        )
        client.put("/connectors/secretive/config", json=config(**{"db.user": "other"}))
        client.post("/connectors/secretive/restart", params={"includeTasks": "true"})
        client.delete("/connectors/secretive")
    log = worker.log_path.read_text(errors="replace")
    assert SECRET not in log, "a PASSWORD value was written to the worker log"
    assert CLIENT_SECRET not in log
