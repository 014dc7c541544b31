"""Hostile input against a real standalone worker: every answer is a 4xx with a JSON error naming the
problem (never a 5xx, never a dropped connection), and the worker stays consistent afterwards."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess, wait_for

from .conftest import SOURCE, create_connector

pytestmark = pytest.mark.integration

BODY_ENDPOINTS = [
    ("POST", "/connectors"),
    ("PUT", "/connectors/{name}/config"),
    ("PATCH", "/connectors/{name}/config"),
    ("PATCH", "/connectors/{name}/offsets"),
    ("PUT", "/connector-plugins/SequenceSourceConnector/config/validate"),
    ("PUT", "/admin/loggers/runtime.hostile"),
]


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    proc = WorkerProcess(tmp_path_factory.mktemp("hostile"), bootstrap_servers)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def client(worker: WorkerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=worker.url, timeout=60) as http:
        yield http


@pytest.fixture
def existing(client: httpx.Client) -> Iterator[str]:
    name = unique("hostile")
    create_connector(client, name, {"connector.class": SOURCE, "topic": name, "throughput": "5"})
    yield name
    client.delete(f"/connectors/{name}")


def raw(worker: WorkerProcess, path: str) -> httpx.URL:
    """A URL whose path is sent byte for byte (httpx would otherwise normalise dot segments)."""
    return httpx.URL(worker.url).copy_with(raw_path=path.encode())


def assert_client_error(
    answer: httpx.Response, status: int | tuple[int, ...] = 400, mentions: str | None = None
) -> dict[str, Any]:
    expected = (status,) if isinstance(status, int) else status
    assert answer.status_code in expected, (
        f"{answer.request.method} {answer.request.url}: {answer.status_code} {answer.text[:500]}"
    )
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert body["error_code"] == answer.status_code and isinstance(body["message"], str) and body["message"]
    if mentions:
        assert mentions.lower() in body["message"].lower(), body["message"]
    return body


def assert_worker_healthy(worker: WorkerProcess, client: httpx.Client) -> None:
    assert worker.process is not None and worker.process.poll() is None, worker.log_tail()
    assert client.get("/health").status_code == 200
    assert "Unexpected error answering a request" not in worker.log_path.read_text(errors="replace")


# ---- bodies ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method,path", BODY_ENDPOINTS)
@pytest.mark.parametrize("payload", [b"{", b'{"name": }', b"\xff\xfe\x00garbage", b"[1, 2,]", b"nul", b'{"a": NaN'])
def test_malformed_json_is_400(worker, client, existing, method: str, path: str, payload: bytes) -> None:
    answer = client.request(
        method, path.format(name=existing), content=payload, headers={"Content-Type": "application/json"}
    )
    assert_client_error(answer, 400)


@pytest.mark.parametrize("method,path", BODY_ENDPOINTS)
def test_empty_body_and_wrong_media_type(worker, client, existing, method: str, path: str) -> None:
    assert_client_error(
        client.request(method, path.format(name=existing), content=b"", headers={"Content-Type": "application/json"}),
        400,
    )
    assert_client_error(
        client.request(
            method,
            path.format(name=existing),
            content=b"name=x",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        ),
        415,
    )


def test_huge_bodies_are_413_and_the_worker_survives(worker, client, existing) -> None:
    huge = b'{"name": "x", "config": {"k": "' + b"a" * (11 * 1024 * 1024) + b'"}}'
    for method, path in BODY_ENDPOINTS:
        answer = client.request(
            method, path.format(name=existing), content=huge, headers={"Content-Type": "application/json"}
        )
        assert_client_error(answer, 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold while reading
        yield b'{"name": "chunked", "config": {"k": "'
        for _ in range(12):
            yield b"b" * (1024 * 1024)
        yield b'"}}'

    answer = client.post("/connectors", content=chunks(), headers={"Content-Type": "application/json"})
    assert_client_error(answer, 413)
    assert "chunked" not in client.get("/connectors").json()
    assert_worker_healthy(worker, client)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_is_400(worker, client, existing, depth: int) -> None:
    arrays = b"[" * depth + b"]" * depth
    in_config = b'{"name": "deep", "config": {"k": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}}"
    for method, path in BODY_ENDPOINTS:
        assert_client_error(
            client.request(
                method, path.format(name=existing), content=arrays, headers={"Content-Type": "application/json"}
            ),
            400,
        )
    assert_client_error(
        client.post("/connectors", content=in_config, headers={"Content-Type": "application/json"}), 400
    )
    assert "deep" not in client.get("/connectors").json()
    assert_worker_healthy(worker, client)


@pytest.mark.parametrize(
    "body,mentions",
    [
        ({"name": "wt", "config": ["connector.class"]}, "config"),
        ({"name": 42, "config": {"connector.class": SOURCE, "topic": "t"}}, "name"),
        ({"name": "wt", "config": {"connector.class": SOURCE, "topic": {"nested": 1}}}, "topic"),
        (
            {"name": "wt", "config": {"connector.class": SOURCE, "topic": "t"}, "initial_state": "SLEEPING"},
            "initial_state",
        ),
        ({"name": "wt", "config": {"connector.class": SOURCE, "topic": None}}, "null"),
        ({"name": "wt", "config": {"connector.class": SOURCE, "topic": "t"}, "surprise": True}, "surprise"),
        ({"name": "wt"}, "config"),
        ("just a string", None),
        ([{"name": "wt"}], None),
    ],
)
def test_wrong_types_on_create_are_400_and_create_nothing(worker, client, body: Any, mentions: str | None) -> None:
    assert_client_error(client.post("/connectors", json=body), 400, mentions)
    assert "wt" not in client.get("/connectors").json()


def test_wrong_types_on_other_endpoints(worker, client, existing) -> None:
    assert_client_error(client.put(f"/connectors/{existing}/config", json=["a"]), 400)
    assert_client_error(client.put(f"/connectors/{existing}/config", json={"topic": {"x": 1}}), 400, "topic")
    assert_client_error(client.patch(f"/connectors/{existing}/offsets", json={"offsets": "all"}), 400)
    assert_client_error(client.patch(f"/connectors/{existing}/offsets", json={"offsets": [{"partition": 1}]}), 400)
    assert_client_error(client.put("/admin/loggers/runtime.hostile", json={"level": ["DEBUG"]}), 400, "level")
    assert_client_error(client.put("/admin/loggers/runtime.hostile", json={"level": "LOUD"}), 404, "LOUD")
    assert_client_error(client.put("/connector-plugins/SequenceSourceConnector/config/validate", json=[1]), 400)
    for task in ("abc", "1.5", "-", "99999999999999999999999"):
        assert_client_error(client.get(f"/connectors/{existing}/tasks/{task}/status"), 404)
        assert_client_error(client.post(f"/connectors/{existing}/tasks/{task}/restart"), 404)
    assert_client_error(client.get(f"/connectors/{existing}/tasks/-1/status"), 404)
    # unknown query values are read as false, as the reference does: a plain restart
    assert (
        client.post(
            f"/connectors/{existing}/restart", params={"includeTasks": "\x00\xff", "onlyFailed": "[]"}
        ).status_code
        == 204
    )
    # the connector is untouched by all of that
    assert client.get(f"/connectors/{existing}/config").json()["topic"] == existing
    assert_worker_healthy(worker, client)


def test_unknown_connector_class_is_400_naming_it(worker, client) -> None:
    for cls in ("com.example.NoSuchConnector", "", "../../etc/passwd", "os.system", "runtime.api.Connector"):
        body = assert_client_error(
            client.post("/connectors", json={"name": "nc", "config": {"connector.class": cls}}), 400
        )
        if cls:
            assert cls in body["message"]
        assert_client_error(
            client.put("/connector-plugins/Whatever/config/validate", json={"connector.class": cls}), 400
        )
    assert "nc" not in client.get("/connectors").json()


# ---- names -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dots.in.name", "café-☕-名前-🚀", "a?b#c%d", "%2F", "semi;colon", "sp ace"])
def test_special_names_round_trip(worker, client, name: str) -> None:
    """Names with special characters can be created, read through the Location header and deleted."""
    name = f"{name}-{unique('n')}"
    answer = client.post("/connectors", json={"name": name, "config": {"connector.class": SOURCE, "topic": "names"}})
    assert answer.status_code == 201, answer.text
    location = answer.headers["location"]
    assert location.endswith("/connectors/" + quote(name, safe=""))
    path = "/connectors/" + quote(name, safe="")
    assert client.get(raw(worker, path)).json()["name"] == name
    assert client.get(raw(worker, path + "/status")).json()["name"] == name
    assert name in client.get("/connectors").json()
    assert client.delete(raw(worker, path)).status_code == 204
    assert name not in client.get("/connectors").json()


@pytest.mark.parametrize("name", ["a/b", "/lead", "trail/", "..", "."])
def test_names_a_url_cannot_carry_are_reachable_or_refused(worker, client, name: str) -> None:
    """A name with a slash, or a dot segment, either is refused with a 400 or can be reached (%2F, %2E)
    and deleted: never created and then stuck."""
    answer = client.post("/connectors", json={"name": name, "config": {"connector.class": SOURCE, "topic": "names"}})
    if answer.status_code == 400:
        assert_client_error(answer, 400)
        assert name not in client.get("/connectors").json()
        return
    assert answer.status_code == 201, answer.text
    encoded = quote(name, safe="").replace(".", "%2E")
    try:
        got = client.get(raw(worker, f"/connectors/{encoded}/status"))
        assert got.status_code == 200 and got.json()["name"] == name, got.text
        # the Location header must be usable by a client as is (no dot segments to be normalised away)
        location = httpx.URL(answer.headers["location"])
        assert client.get(location).json()["name"] == name
    finally:
        deleted = client.delete(raw(worker, f"/connectors/{encoded}"))
    assert deleted.status_code == 204, f"created {name!r} but cannot delete it: {deleted.status_code} {deleted.text}"
    assert name not in client.get("/connectors").json()


@pytest.mark.parametrize("name", ["ctl\x01char", "new\nline", "tab\tname", "nul\x00", "del\x7f", "", "   "])
def test_control_characters_and_empty_names_are_400(worker, client, name: str) -> None:
    answer = client.post("/connectors", json={"name": name, "config": {"connector.class": SOURCE, "topic": "names"}})
    assert_client_error(answer, 400, "name")
    names = client.get("/connectors").json()
    assert name not in names and name.strip() not in names


def test_huge_name_and_path(worker, client) -> None:
    name = "n" * 20_000
    answer = client.post("/connectors", json={"name": name, "config": {"connector.class": SOURCE, "topic": "names"}})
    assert answer.status_code in (201, 400), answer.text[:300]
    if answer.status_code == 201:  # then it must be deletable too
        assert client.delete(f"/connectors/{name}").status_code == 204
        assert name not in client.get("/connectors").json()
    answer = client.get("/connectors/" + "x" * 60_000 + "/status")
    assert answer.status_code in (404, 414, 431)
    assert_worker_healthy(worker, client)


# ---- concurrency -------------------------------------------------------------------------------------


def test_concurrent_conflicting_requests_leave_the_worker_consistent(worker, client, tmp_path: Path) -> None:
    name = unique("race")
    topic = unique("race-topic")
    configs = [
        {"connector.class": SOURCE, "topic": topic, "tasks.max": "2", "throughput": "20"},
        {"connector.class": SOURCE, "topic": topic, "tasks.max": "3", "throughput": "20"},
        {"connector.class": SOURCE, "topic": topic, "tasks.max": "1"},
    ]
    errors: list[str] = []
    path = f"/connectors/{name}"

    def storm(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=worker.url, timeout=120) as http:
            for _ in range(12):
                op = rng.choice(
                    ["create", "put", "delete", "pause", "resume", "stop", "restart", "restart-all", "status", "patch"]
                )
                config = rng.choice(configs)
                try:
                    if op == "create":
                        answer = http.post("/connectors", json={"name": name, "config": config})
                    elif op == "put":
                        answer = http.put(f"{path}/config", json=config)
                    elif op == "patch":
                        answer = http.patch(f"{path}/config", json={"tasks.max": str(rng.randint(1, 3))})
                    elif op == "delete":
                        answer = http.delete(path)
                    elif op == "restart":
                        answer = http.post(f"{path}/restart")
                    elif op == "restart-all":
                        answer = http.post(f"{path}/restart", params={"includeTasks": "true"})
                    elif op == "status":
                        answer = http.get(f"{path}/status")
                    else:
                        answer = http.put(f"{path}/{op}")
                except httpx.HTTPError as exc:
                    errors.append(f"{op}: connection error {exc!r}")
                    continue
                if answer.status_code >= 500:
                    errors.append(f"{op}: {answer.status_code} {answer.text[:300]}")

    threads = [threading.Thread(target=storm, args=(seed,)) for seed in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(t.is_alive() for t in threads), "requests hung"
    assert not errors, "\n".join(errors[:20])

    def consistent() -> bool:
        names = client.get("/connectors").json()
        if name not in names:
            return client.get(f"{path}/status").status_code == 404 and client.get(path).status_code == 404
        info, status, tasks = client.get(path), client.get(f"{path}/status"), client.get(f"{path}/tasks")
        if not (info.status_code == status.status_code == tasks.status_code == 200):
            return False
        task_ids = sorted(t["task"] for t in info.json()["tasks"])
        status_ids = sorted(t["id"] for t in status.json()["tasks"])
        listed_ids = sorted(t["id"]["task"] for t in tasks.json())
        state = status.json()["connector"]["state"]
        if state == "STOPPED":
            return task_ids == status_ids == listed_ids == []
        # every task the config names has a status, and no status exists for a task that is not configured
        return task_ids == status_ids == listed_ids and all(
            t["state"] in ("RUNNING", "PAUSED") for t in status.json()["tasks"]
        )

    wait_for(consistent, timeout_s=30, what="list, info, tasks and status to agree")
    # the name is still fully usable: it can be (re)created, runs, and is deleted cleanly
    client.delete(path)
    create_connector(client, name, configs[0])
    wait_for(
        lambda: [t["state"] for t in client.get(f"{path}/status").json()["tasks"]] == ["RUNNING", "RUNNING"],
        timeout_s=30,
        what="the recreated connector's two tasks to run",
    )
    assert client.delete(path).status_code == 204
    assert client.get(f"{path}/status").status_code == 404
    assert_worker_healthy(worker, client)
