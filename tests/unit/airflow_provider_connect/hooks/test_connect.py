import base64
from types import SimpleNamespace

import httpx
import pytest

from airflow_provider_connect.errors import ConnectApiError, ConnectNotFoundError, ConnectorStateError
from airflow_provider_connect.hooks.base import ConnectSettings
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.hooks.retries import RetryPolicy
from tests.unit.airflow_provider_connect.conftest import BASE, CONN_PASSWORD, HEADER_TOKEN


def hook(**kw) -> ConnectHook:
    return ConnectHook("kafka_connect_default", sleep=lambda s: None, **kw)


def err(status, message):
    return httpx.Response(status, json={"error_code": status, "message": message})


# ---- connection parsing ------------------------------------------------------------------------


def conn(**kw):
    defaults = dict(
        conn_id="c", host="connect.example", schema=None, port=None, login=None, password=None, extra_dejson={}
    )
    return SimpleNamespace(**{**defaults, **kw})


def test_settings_from_connection_variants():
    s = ConnectSettings.from_connection(conn(host="connect.example", schema="https", port=8443))
    assert s.base_url == "https://connect.example:8443" and s.auth is None and s.verify is True
    s = ConnectSettings.from_connection(
        conn(
            host="http://c:8083/",
            port=9999,
            login="u",
            password="p",
            extra_dejson={"extra__kafka_connect__verify_ssl": "false", "timeout": "7.5", "headers": '{"X-A": "1"}'},
        )
    )
    assert s.base_url == "http://c:8083" and s.auth == ("u", "p") and s.verify is False
    assert s.timeout == 7.5 and s.headers == {"X-A": "1"}
    s = ConnectSettings.from_connection(conn(extra_dejson={"ca_bundle": "/etc/ca.pem"}))
    assert s.verify == "/etc/ca.pem"
    with pytest.raises(ValueError, match="no REST URL"):
        ConnectSettings.from_connection(conn(host=""))
    with pytest.raises(ValueError, match="JSON object"):
        ConnectSettings.from_connection(conn(extra_dejson={"headers": "[1]"}))
    assert "pw-zz91" not in repr(ConnectSettings.from_connection(conn(login="u", password="pw-zz91")))


def test_requests_carry_basic_auth_and_extra_headers(router):
    route = router.get(f"{BASE}/").respond(200, json={"version": "3.9.0", "commit": "x", "kafka_cluster_id": "k"})
    assert hook().get_server_info()["version"] == "3.9.0"
    sent = route.calls.last.request
    assert sent.headers["Authorization"] == "Basic " + base64.b64encode(f"admin:{CONN_PASSWORD}".encode()).decode()
    assert sent.headers["X-Auth"] == HEADER_TOKEN


# ---- one method per endpoint -------------------------------------------------------------------

ENDPOINTS = [
    # (call, method, path, params, response status, response json, expected result)
    (lambda h: h.list_connectors(), "GET", "/connectors", {}, 200, ["a"], ["a"]),
    (
        lambda h: h.list_connectors(expand=["status", "info"]),
        "GET",
        "/connectors",
        {"expand": ["status", "info"]},
        200,
        {"a": {}},
        {"a": {}},
    ),
    (lambda h: h.get_connector("a b"), "GET", "/connectors/a%20b", {}, 200, {"name": "a b"}, {"name": "a b"}),
    (lambda h: h.get_connector_config("a"), "GET", "/connectors/a/config", {}, 200, {"k": "v"}, {"k": "v"}),
    (
        lambda h: h.patch_connector_config("a", {"k": None}),
        "PATCH",
        "/connectors/a/config",
        {},
        200,
        {"name": "a"},
        {"name": "a"},
    ),
    (lambda h: h.delete_connector("a"), "DELETE", "/connectors/a", {}, 204, None, True),
    (lambda h: h.get_connector_status("a"), "GET", "/connectors/a/status", {}, 200, {"name": "a"}, {"name": "a"}),
    (lambda h: h.get_connector_tasks("a"), "GET", "/connectors/a/tasks", {}, 200, [], []),
    (
        lambda h: h.get_connector_tasks_config("a"),
        "GET",
        "/connectors/a/tasks-config",
        {},
        200,
        {"a-0": {}},
        {"a-0": {}},
    ),
    (lambda h: h.get_task_status("a", 2), "GET", "/connectors/a/tasks/2/status", {}, 200, {"id": 2}, {"id": 2}),
    (lambda h: h.restart_task("a", 0), "POST", "/connectors/a/tasks/0/restart", {}, 204, None, None),
    (
        lambda h: h.restart_connector("a"),
        "POST",
        "/connectors/a/restart",
        {"includeTasks": ["false"], "onlyFailed": ["false"]},
        204,
        None,
        None,
    ),
    (
        lambda h: h.restart_connector("a", include_tasks=True, only_failed=True),
        "POST",
        "/connectors/a/restart",
        {"includeTasks": ["true"], "onlyFailed": ["true"]},
        202,
        {"name": "a"},
        {"name": "a"},
    ),
    (lambda h: h.pause_connector("a"), "PUT", "/connectors/a/pause", {}, 202, None, None),
    (lambda h: h.resume_connector("a"), "PUT", "/connectors/a/resume", {}, 202, None, None),
    (lambda h: h.stop_connector("a"), "PUT", "/connectors/a/stop", {}, 204, None, None),
    (lambda h: h.get_connector_topics("a"), "GET", "/connectors/a/topics", {}, 200, {"a": {"topics": ["t"]}}, ["t"]),
    (lambda h: h.reset_connector_topics("a"), "PUT", "/connectors/a/topics/reset", {}, 202, None, None),
    (
        lambda h: h.get_offsets("a"),
        "GET",
        "/connectors/a/offsets",
        {},
        200,
        {"offsets": [{"partition": {}, "offset": {}}]},
        [{"partition": {}, "offset": {}}],
    ),
    (
        lambda h: h.alter_offsets("a", [{"partition": {"p": 1}, "offset": None}]),
        "PATCH",
        "/connectors/a/offsets",
        {},
        200,
        {"message": "ok"},
        "ok",
    ),
    (lambda h: h.reset_offsets("a"), "DELETE", "/connectors/a/offsets", {}, 200, {"message": "reset"}, "reset"),
    (
        lambda h: h.list_connector_plugins(connectors_only=False),
        "GET",
        "/connector-plugins",
        {"connectorsOnly": ["false"]},
        200,
        [],
        [],
    ),
    (lambda h: h.get_plugin_config("X"), "GET", "/connector-plugins/X/config", {}, 200, [], []),
    (
        lambda h: h.validate_config("X", {"connector.class": "X"}),
        "PUT",
        "/connector-plugins/X/config/validate",
        {},
        200,
        {"error_count": 0},
        {"error_count": 0},
    ),
    (lambda h: h.list_loggers(), "GET", "/admin/loggers", {}, 200, {"root": {}}, {"root": {}}),
    (lambda h: h.get_logger("org.x"), "GET", "/admin/loggers/org.x", {}, 200, {"level": "INFO"}, {"level": "INFO"}),
    (
        lambda h: h.set_logger_level("org.x", "DEBUG"),
        "PUT",
        "/admin/loggers/org.x",
        {"scope": ["worker"]},
        200,
        ["org.x"],
        ["org.x"],
    ),
    (
        lambda h: h.set_logger_level("org.x", "DEBUG", scope="cluster"),
        "PUT",
        "/admin/loggers/org.x",
        {"scope": ["cluster"]},
        204,
        None,
        None,
    ),
]


@pytest.mark.parametrize("call,method,path,params,status,body,expected", ENDPOINTS)
def test_endpoint(router, call, method, path, params, status, body, expected):
    route = (
        router.route(method=method, url__startswith=BASE).respond(status, json=body)
        if body is not None
        else router.route(method=method, url__startswith=BASE).respond(status)
    )
    assert call(hook()) == expected
    request = route.calls.last.request
    assert request.url.raw_path.decode().split("?")[0] == path
    assert {k: request.url.params.get_list(k) for k in request.url.params.keys()} == params


def test_put_config_reports_created_vs_updated(router):
    router.put(f"{BASE}/connectors/a/config").mock(
        side_effect=[httpx.Response(201, json={"name": "a"}), httpx.Response(200, json={"name": "a"})]
    )
    assert hook().put_connector_config("a", {"x": "1"}) == ({"name": "a"}, True)
    assert hook().put_connector_config("a", {"x": "1"}) == ({"name": "a"}, False)


def test_health_returns_starting_body_instead_of_raising(router):
    router.get(f"{BASE}/health").respond(503, json={"status": "starting", "message": "Worker is still starting up."})
    assert hook().get_health()["status"] == "starting"


def test_delete_missing_ok(router):
    router.delete(f"{BASE}/connectors/a").respond(404, json={"error_code": 404, "message": "Connector a not found"})
    assert hook().delete_connector("a", missing_ok=True) is False
    with pytest.raises(ConnectNotFoundError):
        hook().delete_connector("a")


# ---- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "first",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        err(500, "Request timed out"),
        err(503, "unavailable"),
        err(409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"),
    ],
)
def test_retries_transient_failures(router, first):
    route = router.put(f"{BASE}/connectors/a/stop").mock(side_effect=[first, httpx.Response(204)])
    hook().stop_connector("a")
    assert route.call_count == 2


def test_does_not_retry_client_errors(router):
    route = router.put(f"{BASE}/connectors/a/pause").mock(return_value=err(404, "Unknown connector a"))
    with pytest.raises(ConnectNotFoundError) as info:
        hook().pause_connector("a")
    assert route.call_count == 1
    assert info.value.status_code == 404 and info.value.error_code == 404
    assert info.value.server_message == "Unknown connector a"


def test_gives_up_after_max_attempts_with_server_error(router):
    route = router.get(f"{BASE}/connectors/a/offsets").mock(return_value=err(500, "Failed to fetch offsets"))
    with pytest.raises(ConnectApiError) as info:
        hook(retry_policy=RetryPolicy(max_attempts=3)).get_offsets("a")
    assert route.call_count == 3
    assert info.value.status_code == 500 and "Failed to fetch offsets" in str(info.value)


def test_gives_up_after_connection_errors(router):
    router.get(f"{BASE}/connectors").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ConnectApiError, match="ConnectError after 2 attempt"):
        hook(retry_policy=RetryPolicy(max_attempts=2)).list_connectors()


def test_backoff_grows_with_jitter_and_is_capped():
    from tenacity import RetryCallState

    from tests.unit.airflow_provider_connect.conftest import REAL_WAIT

    wait = REAL_WAIT(RetryPolicy(initial_backoff=1, max_backoff=4))

    def delay(attempt: int) -> float:
        state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})
        state.attempt_number = attempt
        return wait(state)

    for _ in range(20):  # half of each backoff is random: look at several draws
        delays = [delay(n) for n in (1, 2, 3, 4, 5)]
        assert 0.5 <= delays[0] <= 1 and 1 <= delays[1] <= 2 and all(2 <= d <= 4 for d in delays[2:])


def test_retries_sleep_the_backoff_and_log_why(router, capfd):
    slept: list[float] = []
    router.get(f"{BASE}/connectors").mock(
        side_effect=[err(503, "busy"), httpx.ConnectError("refused"), httpx.Response(200, json=[])]
    )
    ConnectHook(sleep=slept.append).list_connectors()
    assert slept == [0.0, 0.0]  # the fixture waits nothing; the hook's injected sleep is what tenacity calls
    logged = "".join(capfd.readouterr())  # Airflow's task logging writes to the console, not to caplog
    assert "GET /connectors: HTTP 503 (attempt 1/5)" in logged
    assert "GET /connectors: ConnectError (attempt 2/5)" in logged


# ---- create: never a blind re-POST --------------------------------------------------------------


def test_create_returns_created(router):
    route = router.post(f"{BASE}/connectors").respond(201, json={"name": "a", "config": {}, "tasks": []})
    info, created = hook().create_connector("a", {"connector.class": "X", "tasks.max": 2}, initial_state="stopped")
    assert created and info["name"] == "a"
    import json

    assert json.loads(route.calls.last.request.content) == {
        "name": "a",
        "config": {"connector.class": "X", "tasks.max": 2},
        "initial_state": "STOPPED",
    }


def test_create_conflict_reads_back_without_reposting(router):
    post = router.post(f"{BASE}/connectors").respond(
        409, json={"error_code": 409, "message": "Connector a already exists"}
    )
    router.get(f"{BASE}/connectors/a").respond(200, json={"name": "a", "config": {"name": "a"}})
    info, created = hook().create_connector("a", {})
    assert not created and info["name"] == "a" and post.call_count == 1


def test_create_lost_answer_resolved_by_reading_back(router):
    post = router.post(f"{BASE}/connectors").mock(side_effect=httpx.ReadTimeout("lost"))
    router.get(f"{BASE}/connectors/a").respond(200, json={"name": "a", "config": {"name": "a", "k": "v"}})
    info, created = hook().create_connector("a", {"k": "v"})
    assert post.call_count == 1 and not created and info["config"]["k"] == "v"


def test_create_reposts_only_when_read_back_finds_nothing(router):
    post = router.post(f"{BASE}/connectors").mock(
        side_effect=[
            httpx.ConnectError("refused"),
            err(500, "Request timed out"),
            httpx.Response(201, json={"name": "a"}),
        ]
    )
    get = router.get(f"{BASE}/connectors/a").respond(404, json={"error_code": 404, "message": "Connector a not found"})
    _, created = hook().create_connector("a", {})
    assert created and post.call_count == 3 and get.call_count == 2


def test_create_validation_error_is_not_retried_and_hides_secrets(router):
    secret = "db-password-123456"
    post = router.post(f"{BASE}/connectors").respond(
        400,
        json={
            "error_code": 400,
            "message": f"Connector configuration is invalid: Invalid value {secret} for configuration connection.password",
        },
    )
    with pytest.raises(ConnectApiError) as info:
        hook().create_connector("a", {"connection.password": secret, "connector.class": "X"})
    assert post.call_count == 1
    assert secret not in str(info.value) and "***" in str(info.value)
    assert info.value.error_code == 400


def test_error_message_truncated_and_credentials_scrubbed(router):
    router.get(f"{BASE}/connectors/a").respond(
        400, json={"error_code": 400, "message": f"{CONN_PASSWORD} " + "x" * 5000}
    )
    with pytest.raises(ConnectApiError) as info:
        hook().get_connector("a")
    text = str(info.value)
    assert CONN_PASSWORD not in text and "more characters truncated" in text and len(text) < 2300


def test_non_json_error_body(router):
    router.get(f"{BASE}/connectors/a").respond(418, text="<html>teapot</html>")
    with pytest.raises(ConnectApiError, match="HTTP 418.*teapot"):
        hook().get_connector("a")


# ---- waiting -------------------------------------------------------------------------------------


def status(state, tasks=(), trace=None):
    return {
        "name": "a",
        "connector": {"state": state, "worker_id": "w:1", **({"trace": trace} if trace else {})},
        "tasks": [
            {"id": i, "state": s, "worker_id": "w:1", **({"trace": trace} if s == "FAILED" else {})}
            for i, s in enumerate(tasks)
        ],
        "type": "source",
    }


def test_wait_for_state_polls_until_target(router):
    route = router.get(f"{BASE}/connectors/a/status").mock(
        side_effect=[
            err(404, "No status found for connector a"),
            httpx.Response(200, json=status("RUNNING", ["UNASSIGNED"])),
            httpx.Response(200, json=status("RUNNING", ["RUNNING", "RUNNING"])),
        ]
    )
    assert len(hook().wait_for_state("a", "RUNNING", poll_interval=0)["tasks"]) == 2
    assert route.call_count == 3


def test_wait_for_state_fails_on_failed_task_with_truncated_trace(router):
    trace = "java.lang.RuntimeException: boom\n" + "\tat x\n" * 2000
    router.get(f"{BASE}/connectors/a/status").respond(200, json=status("RUNNING", ["RUNNING", "FAILED"], trace))
    with pytest.raises(ConnectorStateError) as info:
        hook().wait_for_state("a", "RUNNING", poll_interval=0)
    assert "task a-1 is FAILED" in str(info.value) and "RuntimeException: boom" in str(info.value)
    assert "more characters truncated" in str(info.value) and len(str(info.value)) < 2500


def test_wait_for_state_times_out(router):
    router.get(f"{BASE}/connectors/a/status").respond(200, json=status("RUNNING", ["UNASSIGNED"]))
    with pytest.raises(ConnectorStateError, match="Timed out"):
        hook().wait_for_state("a", "RUNNING", timeout=0, poll_interval=0)


# ---- the UI: connection test and the connector link ----------------------------------------------


def test_connection_test_reads_the_server_and_its_health(router):
    router.get(f"{BASE}/").respond(200, json={"version": "3.9.0", "commit": "x", "kafka_cluster_id": "k"})
    health = router.get(f"{BASE}/health")
    health.respond(
        200, json={"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}
    )
    assert hook().test_connection() == (
        True,
        "Connected to Kafka Connect 3.9.0: Worker has completed startup and is ready to handle requests.",
    )
    health.respond(503, json={"status": "unhealthy", "message": "Worker is still starting up."})
    ok, message = hook().test_connection()
    assert not ok and "not healthy" in message and "still starting up" in message
    health.respond(404, json={"error_code": 404, "message": "HTTP 404 Not Found"})  # before Kafka Connect 3.9
    assert hook().test_connection() == (True, "Connected to Kafka Connect 3.9.0 (it has no /health endpoint)")
    router.get(f"{BASE}/").respond(401, json={"error_code": 401, "message": "Unauthorized"})
    ok, message = hook().test_connection()
    assert not ok and "401" in message


def test_connector_url_is_the_rest_status_or_the_connection_ui_template():
    plain = hook(settings=ConnectSettings.from_connection(conn(host="http://connect.example:8083")))
    assert plain.connector_url("my conn/1") == "http://connect.example:8083/connectors/my%20conn%2F1/status"
    ui = hook(
        settings=ConnectSettings.from_connection(
            conn(
                host="http://connect.example:8083",
                extra_dejson={"ui_url_template": "http://akhq:8080/ui/connect/main/connector/{connector}"},
            )
        )
    )
    assert ui.connector_url("orders") == "http://akhq:8080/ui/connect/main/connector/orders"


def test_operators_store_their_connector_link_before_running(router):
    from airflow_provider_connect.links import XCOM_KEY, ConnectorLink
    from airflow_provider_connect.operators.connector import ConnectorStopOperator
    from airflow_provider_connect.operators.migrate import ConnectorMigrateOperator

    pushed = {}
    ti = SimpleNamespace(xcom_push=lambda key, value: pushed.__setitem__(key, value))
    stop = ConnectorStopOperator(task_id="s", connector_name="orders")
    assert any(isinstance(link, ConnectorLink) for link in stop.operator_extra_links)
    stop.pre_execute({"ti": ti})
    assert pushed == {XCOM_KEY: f"{BASE}/connectors/orders/status"}
    move = ConnectorMigrateOperator(
        task_id="m",
        connector_name="orders",
        target_connector_name="orders2",
        source_conn_id="source",
        target_conn_id="target",
    )
    move.pre_execute({"ti": ti})
    assert pushed[XCOM_KEY] == "http://target.test:8083/connectors/orders2/status"
