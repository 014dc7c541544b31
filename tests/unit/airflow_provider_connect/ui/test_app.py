"""The Kafka Connect page's app (the FastAPI app of the Airflow plugin) over the in-memory REST API.

Airflow's user and auth manager are replaced by a fixed user and a table of permissions; the browser test
in tests/integration/airflow/test_deployment.py runs the page inside a real Airflow API server.
"""

from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from airflow_provider_connect.hooks.base import ConnectSettings
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.ui.app import ACTION_HEADER, create_app
from tests.unit.airflow_provider_connect.conftest import BASE

SECRET = "view-secret-8080"


class Permissions:
    def __init__(self, read=("prod",), act=("prod",)):
        self.read, self.act = set(read), set(act)

    def can_read(self, user, conn_id):
        return conn_id in self.read

    def can_act(self, user, conn_id):
        return conn_id in self.act


def client(permissions=None, conn_ids=("prod", "dr")):
    def hook_for(conn_id, retry_policy=None):
        settings = ConnectSettings(BASE if conn_id == "prod" else "http://dr.test:8083")
        return ConnectHook(conn_id, retry_policy=retry_policy, settings=settings, sleep=lambda s: None)

    app = create_app(
        permissions or Permissions(), conn_ids=lambda: list(conn_ids), hook_for=hook_for, user=lambda: "alice"
    )
    return TestClient(app)


@pytest.fixture
def cluster(fake):
    fake.add("orders", {"connector.class": "FileStreamSource", "db.password": SECRET}, tasks=2)
    fake.connectors["orders"]["tasks"] = ["RUNNING", "FAILED"]
    fake.connectors["orders"]["traces"] = {
        1: f"org.apache.kafka.connect.errors.ConnectException: login {SECRET} refused"
    }
    fake.connectors["orders"]["topics"] = ["orders-topic"]
    fake.connectors["orders"]["offsets"] = [{"partition": {"filename": "/in"}, "offset": {"position": 12}}]
    fake.add("audit", {"connector.class": "FileStreamSink"}, state="PAUSED")
    return fake


def test_the_overview_shows_connectors_tasks_workers_traces_topics_and_offsets(cluster):
    body = client().get("/api/overview").json()
    (prod,) = body["connections"]  # "dr" is not readable by this user: not even listed
    assert prod["conn_id"] == "prod" and prod["url"] == BASE and prod["can_act"]
    audit, orders = prod["connectors"]
    assert (audit["name"], audit["state"], audit["failed"]) == ("audit", "PAUSED", False)
    assert orders["class"] == "FileStreamSource" and orders["failed"]
    assert [(t["id"], t["state"], t["worker_id"]) for t in orders["tasks"]] == [
        (0, "RUNNING", "w0:8083"),
        (1, "FAILED", "w1:8083"),
    ]
    assert "login *** refused" in orders["tasks"][1]["trace"]
    assert orders["topics"] == ["orders-topic"] and orders["offsets"][0]["offset"] == {"position": 12}
    assert SECRET not in str(body) and "config" not in orders


def test_a_cluster_that_does_not_answer_is_shown_with_its_error(router, cluster):
    import httpx

    router.route(url__startswith="http://dr.test:8083").mock(side_effect=httpx.ConnectError("refused"))
    body = client(Permissions(read=("prod", "dr"))).get("/api/overview").json()
    dr = next(c for c in body["connections"] if c["conn_id"] == "dr")
    assert dr["connectors"] == [] and "ConnectError after 2 attempt(s)" in dr["error"]
    assert next(c for c in body["connections"] if c["conn_id"] == "prod")["connectors"]


def test_restart_failed_restarts_only_the_failed_task(cluster):
    response = client().post("/api/connections/prod/connectors/orders/restart-failed", headers={ACTION_HEADER: "1"})
    assert response.status_code == 200 and response.json()["message"] == "Restarting task 1 of orders"
    assert cluster.connectors["orders"]["tasks"] == ["RUNNING", "RUNNING"]
    assert ("POST", "/connectors/orders/restart") in cluster.calls


@pytest.mark.parametrize("action,state", [("pause", "PAUSED"), ("stop", "STOPPED")])
def test_pause_and_stop(cluster, action, state):
    response = client().post(f"/api/connections/prod/connectors/orders/{action}", headers={ACTION_HEADER: "1"})
    assert response.status_code == 200 and cluster.connectors["orders"]["state"] == state
    resumed = client().post("/api/connections/prod/connectors/orders/resume", headers={ACTION_HEADER: "1"})
    assert resumed.status_code == 200 and cluster.connectors["orders"]["state"] == "RUNNING"


def test_actions_are_gated(cluster):
    viewer = client(Permissions(read=("prod",), act=()))
    assert viewer.get("/api/overview").json()["connections"][0]["can_act"] is False
    denied = viewer.post("/api/connections/prod/connectors/orders/pause", headers={ACTION_HEADER: "1"})
    assert denied.status_code == 403 and "may not change" in denied.json()["detail"]
    assert client().post("/api/connections/prod/connectors/orders/pause").status_code == 403  # not from the page
    assert client().post("/api/connections/dr/connectors/x/pause", headers={ACTION_HEADER: "1"}).status_code == 403
    assert client().post("/api/connections/qa/connectors/x/pause", headers={ACTION_HEADER: "1"}).status_code == 404
    assert (
        client().post("/api/connections/prod/connectors/orders/delete", headers={ACTION_HEADER: "1"}).status_code == 422
    )
    assert cluster.connectors["orders"]["state"] == "RUNNING"
    missing = client().post("/api/connections/prod/connectors/nope/pause", headers={ACTION_HEADER: "1"})
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]


def test_the_page_and_its_assets_are_served():
    page = client().get("/")
    assert page.status_code == 200 and 'src="static/view.js"' in page.text
    assert client().get("/static/view.js").status_code == 200
    assert client().get("/static/..%2Fapp.py").status_code == 404


def test_the_plugin_mounts_the_app_and_adds_the_view_to_the_navigation():
    from airflow_provider_connect.get_provider_info import get_provider_info
    from airflow_provider_connect.ui.plugin import KafkaConnectPlugin

    (app,) = KafkaConnectPlugin.fastapi_apps
    (view,) = KafkaConnectPlugin.external_views
    assert app["url_prefix"] == "/kafka-connect" and view["href"] == "kafka-connect/"
    assert (view["destination"], view["url_route"]) == ("nav", "kafka-connect")
    listed = get_provider_info()["plugins"]
    assert listed == [
        {"name": "kafka_connect", "plugin-class": "airflow_provider_connect.ui.plugin.KafkaConnectPlugin"}
    ]


def test_the_airflow_authorizer_asks_the_auth_manager_about_the_connection(monkeypatch):
    import airflow.api_fastapi.app as api_app

    from airflow_provider_connect.ui.app import AirflowAuthorizer

    asked = []

    class AuthManager:
        def is_authorized_connection(self, *, method, details, user):
            asked.append((method, details.conn_id, user))
            return method == "GET"

    monkeypatch.setattr(api_app, "get_auth_manager", lambda: AuthManager())
    user = SimpleNamespace(name="bob")
    authorizer = AirflowAuthorizer()
    assert authorizer.can_read(user, "prod") and not authorizer.can_act(user, "prod")
    assert asked == [("GET", "prod", user), ("PUT", "prod", user)]
