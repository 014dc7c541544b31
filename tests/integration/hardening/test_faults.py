"""Faults around a real standalone worker: no broker at start-up, a broker that goes away and comes back,
a task that hangs in stop(), and a full disk under the standalone state files."""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import time
from pathlib import Path

import httpx
import psutil
import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.embedded_broker import EmbeddedBroker, free_port
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.env import require
from tests.support.worker import WorkerProcess, wait_for

from .conftest import SINK, SOURCE, create_connector

pytestmark = pytest.mark.integration


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)], operation_timeout=10)
    for future in futures.values():
        try:
            future.result(timeout=15)
        except Exception as exc:
            if "exist" not in str(exc).lower():
                raise


def count_records(bootstrap: str, topic: str, at_least: int, timeout_s: float) -> int:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("probe"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + timeout_s
    try:
        while seen < at_least and time.monotonic() < deadline:
            seen += sum(1 for m in consumer.consume(500, timeout=1.0) if m.error() is None)
    finally:
        consumer.close()
    return seen


def sink_seqnos(path: Path) -> list[int]:
    if not path.exists():
        return []
    seqnos = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            value = json.loads(line)["value"]
        except (ValueError, KeyError):
            continue
        if isinstance(value, dict) and "payload" in value:
            value = value["payload"]
        if isinstance(value, dict) and "seqno" in value:
            seqnos.append(int(value["seqno"]))
    return seqnos


# ---- broker unavailable -------------------------------------------------------------------------------


def test_broker_unreachable_at_startup_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    # the start-up wait for Kafka is admin.default.api.timeout.ms (30 s by default)
    worker = WorkerProcess(tmp_path, dead, props={"admin.default.api.timeout.ms": 4000})
    with pytest.raises(RuntimeError, match="worker exited with 2"):
        worker.start(timeout_s=60)
    log = worker.log_path.read_text(errors="replace")
    assert f"Could not reach Kafka at {dead} within 4s" in log  # gave up after admin.default.api.timeout.ms
    assert "Traceback" not in log
    worker.stop()


def test_broker_outage_during_operation(fresh_broker: EmbeddedBroker, tmp_path: Path) -> None:
    """REST keeps answering while the broker is down, the worker does not spin, and data flows again once a
    broker is back on the same address. Tansu keeps topics in memory only: the restarted broker is empty,
    so the test recreates the topic (a real cluster would still have it)."""
    bootstrap = fresh_broker.bootstrap_servers
    topic = unique("outage")
    create_topic(bootstrap, topic)
    out = tmp_path / "sink.jsonl"
    worker = WorkerProcess(tmp_path / "worker", bootstrap, props={"offset.flush.interval.ms": 500}).start()
    second: EmbeddedBroker | None = None
    try:
        with httpx.Client(base_url=worker.url, timeout=30) as client:
            create_connector(client, "outage-src", {"connector.class": SOURCE, "topic": topic, "throughput": "200"})
            create_connector(
                client,
                "outage-sink",
                {
                    "connector.class": SINK,
                    "topics": topic,
                    "output.file": str(out),
                    "consumer.override.session.timeout.ms": "6000",
                },
            )
            wait_for(lambda: len(sink_seqnos(out)) > 200, timeout_s=60, what="records to flow before the outage")

            fresh_broker.stop()
            process = psutil.Process(worker.process.pid)  # type: ignore[union-attr]
            process.cpu_percent(None)
            stalled: list[str] = []

            # after ~10 s without answers from Kafka, /health says so; REST answers all the while (a request
            # that waited on Kafka would outlast the client's 5 s)
            def unhealthy() -> httpx.Response | None:
                for path in ("/connectors", "/connectors/outage-src/status"):
                    try:
                        assert client.get(path, timeout=5).status_code == 200
                    except httpx.TimeoutException:
                        stalled.append(path)
                answer = client.get("/health", timeout=15)  # the health check answers within its 10 s wait
                return answer if answer.status_code == 500 else None

            health = wait_for(unhealthy, timeout_s=30, what="/health to report the unreachable cluster")
            assert not stalled, f"REST requests stalled during the outage: {stalled}"
            cpu = process.cpu_percent(None)  # over the ~10 s the worker took to call the cluster unreachable
            assert cpu < 60, f"worker used {cpu:.0f}% CPU with the broker down (busy loop?)"
            assert health.json()["status"] == "unhealthy"
            assert "unreachable" in health.json()["message"] and bootstrap in health.json()["message"], health.text
            assert worker.process.poll() is None, worker.log_tail()  # type: ignore[union-attr]

            before = max(sink_seqnos(out), default=-1)
            second = EmbeddedBroker(port=fresh_broker.port, cluster_id=fresh_broker.cluster_id).start()
            create_topic(bootstrap, topic)
            # the source produces again (the new broker's topic starts empty, so all it holds is new) ...
            assert count_records(bootstrap, topic, at_least=50, timeout_s=60) >= 50, worker.log_tail()
            # ... and the sink consumes again, continuing past what it had written
            wait_for(
                lambda: max(sink_seqnos(out), default=-1) > before + 50,
                timeout_s=60,
                what=f"the sink to write records again after the broker came back:\n{worker.log_tail(20)}",
            )
            wait_for(
                lambda: client.get("/health").status_code == 200,
                timeout_s=30,
                what="/health to be healthy again once the cluster answers",
            )
            assert client.get("/health").json()["status"] == "healthy"
            status = client.get("/connectors/outage-src/status").json()
            assert status["connector"]["state"] == "RUNNING" and status["tasks"][0]["state"] == "RUNNING", status
    finally:
        worker.stop()
        if second is not None:
            second.stop()


# ---- a task that hangs in stop() ------------------------------------------------------------------------


def _one_worker(mode: str, bootstrap: str, tmp_path: Path, props: dict[str, object]) -> WorkerProcess:
    """A standalone worker, or a distributed one alone in a group of its own."""
    if mode == "standalone":
        return WorkerProcess(tmp_path, bootstrap, props=props)
    return Cluster(tmp_path, bootstrap, 1, **props).workers[0]


@pytest.mark.parametrize(
    "mode, props, named",
    [
        ("standalone", {"offset.storage.file.filename": "{tmp}"}, "IsADirectoryError: [Errno 21] Is a directory"),
        ("distributed", {"security.protocol": "SSL", "ssl.ca.location": "{tmp}/missing.pem"}, "ssl.ca.location"),
    ],
)
def test_a_crash_at_startup_exits_2_with_one_line_naming_it(
    mode: str, props: dict[str, str], named: str, bootstrap_servers: str, tmp_path: Path
) -> None:
    """Not a StartupError (an offsets file that is a folder; a CA file that does not exist): both modes
    log one ERROR line naming it and exit 2, as the reference's "Stopping due to error"."""
    props = {key: value.replace("{tmp}", str(tmp_path)) for key, value in props.items()}
    worker = _one_worker(mode, bootstrap_servers, tmp_path, props)
    with pytest.raises(RuntimeError, match="worker exited with 2"):
        worker.start(timeout_s=60)
    worker.stop()
    log = worker.log_path.read_text(errors="replace")
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "Stopping due to error: " in errors[0] and named in errors[0], log
    assert "Traceback" not in log


def test_task_hanging_in_stop_is_bounded_by_the_graceful_timeout(bootstrap_servers: str, tmp_path: Path) -> None:
    worker = WorkerProcess(tmp_path, bootstrap_servers, props={"task.shutdown.graceful.timeout.ms": 2000}).start()
    try:
        # stop() blocks 30 s, the client waits 15 s: a request that waited for stop() fails, one that waited
        # the graceful timeout (2 s) answers
        with httpx.Client(base_url=worker.url, timeout=15) as client:
            hang = {
                "connector.class": SOURCE,
                "topic": unique("hang"),
                "tasks.max": "2",
                "throughput": "10",
                "task.stop.block.ms": "30000",
            }
            create_connector(client, "hangs", hang)
            wait_for(
                lambda: [t["state"] for t in client.get("/connectors/hangs/status").json()["tasks"]] == ["RUNNING"] * 2,
                timeout_s=30,
                what="tasks to run",
            )
            for request in (
                lambda: client.put("/connectors/hangs/stop"),
                lambda: client.put("/connectors/hangs/resume"),
                lambda: client.post("/connectors/hangs/restart", params={"includeTasks": "true"}),
                lambda: client.delete("/connectors/hangs"),
            ):
                answer = request()
                assert answer.status_code < 300, answer.text
            assert "hangs" not in client.get("/connectors").json()
            assert client.get("/connectors/hangs/status").status_code == 404
            assert client.get("/health").status_code == 200
            # the name is free again and a well-behaved connector runs under it
            create_connector(client, "hangs", {**hang, "task.stop.block.ms": "0"})
            wait_for(
                lambda: [t["state"] for t in client.get("/connectors/hangs/status").json()["tasks"]] == ["RUNNING"] * 2,
                timeout_s=30,
                what="the new connector's tasks to run",
            )
            client.put("/connectors/hangs/config", json={**hang, "task.stop.block.ms": "30000"})
        # worker shutdown is bounded too: a shutdown that waited for the 30 s stop() would be killed after 20 s
        code = worker.stop(timeout_s=20)
        assert code == 0, worker.log_tail()
    finally:
        worker.stop()


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_connector_hanging_in_stop_holds_up_nothing(mode: str, bootstrap_servers: str, tmp_path: Path) -> None:
    """A connector's stop() runs on its own thread: with a graceful timeout far longer than any wait
    below, the delete answers, the herder (the tick thread, in distributed mode) starts the next
    connector, and the worker exits cleanly on SIGTERM, all while that stop() still blocks."""
    worker = _one_worker(mode, bootstrap_servers, tmp_path, {"task.shutdown.graceful.timeout.ms": 600000})
    worker.start()
    try:
        with httpx.Client(base_url=worker.url, timeout=60) as client:
            hang = {
                "connector.class": SOURCE,
                "topic": unique("hang"),
                "tasks.max": "1",
                "throughput": "10",
                "connector.stop.block.ms": "600000",
            }
            create_connector(client, "hangs", hang)
            wait_for(
                lambda: client.get("/connectors/hangs/status").json()["connector"]["state"] == "RUNNING",
                timeout_s=30,
                what="the connector to run",
            )
            answer = client.delete("/connectors/hangs")
            assert answer.status_code == 204, answer.text
            create_connector(client, "next", {**hang, "connector.stop.block.ms": "0"})
            wait_for(
                lambda: (
                    [t["state"] for t in client.get("/connectors/next/status").json().get("tasks", [])] == ["RUNNING"]
                ),
                timeout_s=30,
                what="the next connector's task to run",
            )
            assert client.get("/connectors").json() == ["next"]
        assert worker.stop(timeout_s=30) == 0, worker.log_tail()
    finally:
        worker.stop()


def _states(client: httpx.Client, name: str) -> tuple[str, list[str]] | None:
    answer = client.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return None
    body = answer.json()
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_pause_stop_and_restart_answer_while_the_connector_stop_blocks(
    mode: str, bootstrap_servers: str, tmp_path: Path
) -> None:
    """Issue 10: a pause, a stop and a restart hand the change to the connector's own thread. With stop() blocked
    until the test creates a file (and a graceful timeout far longer than the test), each request answers
    within the client's timeout, the worker (its herder thread; in distributed mode the tick thread) starts
    another connector meanwhile, and each connector reaches its state once stop() returns."""
    gate = tmp_path / "stop-gate"
    worker = _one_worker(mode, bootstrap_servers, tmp_path, {"task.shutdown.graceful.timeout.ms": 600000})
    worker.start()
    requests = {"paused": ("PUT", "pause", 202), "stopped": ("PUT", "stop", 204), "restarted": ("POST", "restart", 204)}
    names = {kind: unique(kind) for kind in requests}
    try:
        with httpx.Client(base_url=worker.url, timeout=10) as client:
            for name in names.values():
                create_connector(
                    client,
                    name,
                    {
                        "connector.class": SOURCE,
                        "topic": unique("gated"),
                        "tasks.max": "1",
                        "throughput": "10",
                        "connector.stop.block.until.file": str(gate),
                    },
                )
            for name in names.values():
                wait_for(lambda: _states(client, name) == ("RUNNING", ["RUNNING"]), timeout_s=30, what=f"{name} to run")

            def send(kind: str) -> int:
                method, action, _ = requests[kind]
                with httpx.Client(base_url=worker.url, timeout=10) as own:  # one client a thread
                    return own.request(method, f"/connectors/{names[kind]}/{action}").status_code

            with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
                codes = dict(zip(requests, pool.map(send, requests)))
            assert codes == {kind: code for kind, (_, _, code) in requests.items()}

            other = unique("other")
            create_connector(client, other, {"connector.class": SOURCE, "topic": unique("other"), "tasks.max": "1"})
            wait_for(
                lambda: _states(client, other) == ("RUNNING", ["RUNNING"]),
                timeout_s=30,
                what="another connector to run while stop() blocks",
            )
            # the blocked stop() holds each change back: none shows yet
            shown = {kind: (_states(client, name) or ("?",))[0] for kind, name in names.items()}
            assert shown == {"paused": "RUNNING", "stopped": "RUNNING", "restarted": "RESTARTING"}

            gate.touch()
            expected = {
                "paused": ("PAUSED", ["PAUSED"]),
                "stopped": ("STOPPED", []),
                "restarted": ("RUNNING", ["RUNNING"]),
            }
            for kind, state in expected.items():
                wait_for(lambda: _states(client, names[kind]) == state, timeout_s=30, what=f"{names[kind]} {state}")
        assert worker.stop(timeout_s=30) == 0, worker.log_tail()
    finally:
        gate.touch()
        worker.stop()


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_connector_stuck_in_start_does_not_hold_the_exit(mode: str, bootstrap_servers: str, tmp_path: Path) -> None:
    """start() never returns: SIGTERM still ends the worker (its start thread is a daemon thread), once its stop
    has waited task.shutdown.graceful.timeout.ms for the connector (1 s here; 5 s by default)."""
    props = {"rest.request.timeout.ms": 3000, "task.shutdown.graceful.timeout.ms": 1000}
    worker = _one_worker(mode, bootstrap_servers, tmp_path, props)
    worker.start()
    try:
        with httpx.Client(base_url=worker.url, timeout=60) as client:
            stuck = {
                "connector.class": SOURCE,
                "topic": unique("stuck"),
                "tasks.max": "1",
                "connector.start.block.ms": "3600000",
            }
            answer = client.post("/connectors", json={"name": "stuck", "config": stuck})
            # standalone: the request times out waiting for start(); distributed: created, then started
            assert answer.status_code in (201, 500), answer.text
            wait_for(
                lambda: "Creating connector stuck" in worker.log_path.read_text(errors="replace"),
                timeout_s=30,
                what="the connector's start to begin",
            )
        assert worker.stop(timeout_s=30) == 0, worker.log_tail()
    finally:
        worker.stop()


# ---- full disk --------------------------------------------------------------------------------------------


class SmallDisk:
    """A 256 KiB tmpfs (as root), else a folder made read-only (as a normal user)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        self.mounted = False
        self.filler = path / "filler"

    def __enter__(self) -> SmallDisk:
        if os.geteuid() == 0:
            result = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(self.path)], capture_output=True, text=True
            )
            self.mounted = result.returncode == 0
            # root ignores read-only folders, so only a real small filesystem can show a full disk
            require(self.mounted, f"a mountable tmpfs for the full-disk test ({result.stderr.strip()})")
        return self

    def fill(self) -> None:
        if self.mounted:
            with open(self.filler, "wb", buffering=0) as handle:
                try:
                    while True:
                        handle.write(b"\0" * 4096)
                        handle.flush()
                except OSError:
                    pass
        else:
            self.path.chmod(0o555)

    def free(self) -> None:
        if self.mounted:
            self.filler.unlink(missing_ok=True)
        else:
            self.path.chmod(0o755)

    def __exit__(self, *exc: object) -> None:
        self.free()
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], check=False)


def test_full_disk_keeps_the_previous_state(bootstrap_servers: str, tmp_path: Path) -> None:
    with SmallDisk(tmp_path / "disk") as disk:
        configs = disk.path / "connect.configs"
        offsets = disk.path / "connect.offsets"
        props = {
            "config.storage.file.filename": str(configs),
            "offset.storage.file.filename": str(offsets),
            "offset.flush.interval.ms": 300,
        }
        worker = WorkerProcess(tmp_path / "worker", bootstrap_servers, props=props).start()
        try:
            with httpx.Client(base_url=worker.url, timeout=60) as client:
                topic = unique("disk")
                create_connector(client, "kept", {"connector.class": SOURCE, "topic": topic, "throughput": "50"})
                wait_for(
                    lambda: offsets.exists() and "kept" in offsets.read_text(),
                    timeout_s=30,
                    what="offsets to be flushed",
                )
                saved = configs.read_bytes()

                disk.fill()
                big = {"connector.class": SOURCE, "topic": topic, "padding": "p" * 20_000}
                answers = [
                    client.post("/connectors", json={"name": "lost", "config": big}),
                    client.put("/connectors/kept/config", json=big),
                    client.put("/connectors/kept/pause"),
                    client.delete("/connectors/kept"),
                ]
                for answer in answers:
                    assert answer.status_code >= 400, (
                        f"{answer.request.method} {answer.request.url.path}: {answer.text}"
                    )
                    assert answer.headers["content-type"].startswith("application/json")
                    assert answer.json()["message"], answer.text
                # nothing half-applied: the worker still runs what the file holds, and the file is intact
                assert configs.read_bytes() == saved
                assert client.get("/connectors").json() == ["kept"]
                assert "padding" not in client.get("/connectors/kept/config").json()
                status = client.get("/connectors/kept/status").json()
                assert status["connector"]["state"] == "RUNNING", status
                wait_for(
                    lambda: re.search("No space left on device|Permission denied", worker.log_path.read_text()),
                    timeout_s=30,
                    what="an offset flush to fail on the full disk",
                )
                assert worker.process.poll() is None, worker.log_tail()  # type: ignore[union-attr]
                assert client.get("/health").status_code == 200
                assert json.loads(offsets.read_text())["offsets"], "the offsets file was damaged"

                disk.free()
                assert client.put("/connectors/kept/pause").status_code == 202
                wait_for(
                    lambda: client.get("/connectors/kept/status").json()["connector"]["state"] == "PAUSED",
                    timeout_s=15,
                    what="pause to apply once the disk has room",
                )
            worker.stop()
            # a restart reads the state that survived
            worker = WorkerProcess(tmp_path / "worker", bootstrap_servers, props=props, port=worker.port).start()
            with httpx.Client(base_url=worker.url, timeout=60) as client:
                assert client.get("/connectors").json() == ["kept"]
                assert client.get("/connectors/kept/status").json()["connector"]["state"] == "PAUSED"
        finally:
            worker.stop()
