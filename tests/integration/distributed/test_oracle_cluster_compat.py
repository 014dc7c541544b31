"""A Connect cluster of the reference (Kafka Connect 3.9, distributed) and one of ours, one after the other on
the same three internal topics: each sees the connectors, target states, task configs and source offsets the
other wrote, over its own REST API, and carries on from them (issue 5).

The oracle-process helper and the worker properties come from the store-level compatibility test; here both
sides are whole clusters (one worker each) and everything is checked through REST and the data topics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from runtime.embedded_broker import free_port
from tests.integration.test_kafka_stores_compat import (
    DistributedOracle,
    read_values,
    source_config,
    worker_props,
)
from tests.support.broker import unique
from tests.support.oracle import require_oracle
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.oracle]


def cluster_props(bootstrap: str) -> dict[str, object]:
    """Worker properties both clusters share, minus `listeners` (each side has its own port)."""
    props = worker_props(bootstrap, 0)
    del props["listeners"]
    # a restarted group must not hold connectors back for workers that will not return (KIP-415)
    props["scheduled.rebalance.max.delay.ms"] = 0
    return props


def our_worker(workdir: Path, props: dict[str, object]) -> WorkerProcess:
    return WorkerProcess(workdir, None, props=props, mode="distributed")


def oracle_on(tool: Path, workdir: Path, props: dict[str, object]) -> DistributedOracle:
    return DistributedOracle(tool, workdir, {**props, "listeners": f"http://127.0.0.1:{free_port()}"})


def expect_lines(bootstrap: str, topic: str, lines: list[str]) -> None:
    """The data topic holds exactly `lines` (no producer is left running, so a longer read never matches).
    Compared sorted: an auto-created topic may have several partitions, so only the multiset is meaningful;
    read again on a short read (one quiet poll ends `read_values`)."""
    wait_for(
        lambda: sorted(orjson.loads(v)["payload"] for v in read_values(bootstrap, topic)) == sorted(lines),
        20,
        0.2,
        f"{topic} holding exactly {lines}",
    )


def state_of(api: httpx.Client, name: str) -> tuple[str, list[str]] | None:
    response = api.get(f"/connectors/{name}/status")
    if response.status_code != 200:
        return None
    body = response.json()
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def offsets_of(api: httpx.Client, name: str) -> list[dict[str, Any]]:
    return api.get(f"/connectors/{name}/offsets").json()["offsets"]


def test_our_cluster_takes_over_what_the_reference_cluster_left(bootstrap_servers: str, tmp_path: Path) -> None:
    tool = require_oracle()
    props = cluster_props(bootstrap_servers)
    paused_file, stopped_file = tmp_path / "paused.txt", tmp_path / "stopped.txt"
    paused_file.write_text("one\ntwo\nthree\n")  # 14 bytes
    stopped_file.write_text("alpha\nbeta\n")  # 11 bytes
    topics = {"src-paused": unique("cluster-paused"), "src-stopped": unique("cluster-stopped")}
    files = {"src-paused": paused_file, "src-stopped": stopped_file}

    with oracle_on(tool, tmp_path, props) as oracle, httpx.Client(base_url=oracle.url, timeout=30) as ref:
        for name, topic in topics.items():
            created = ref.post("/connectors", json={"name": name, "config": source_config(files[name], topic)})
            assert created.status_code == 201, created.text
        for name, position in (("src-paused", 14), ("src-stopped", 11)):
            wait_for(
                lambda name=name, position=position: (
                    offsets_of(ref, name)
                    == [{"partition": {"filename": str(files[name])}, "offset": {"position": position}}]
                ),
                60,
                0.3,
                f"the oracle committing {name}'s offsets\n{oracle.tail()}",
            )
        assert ref.put("/connectors/src-paused/pause").status_code == 202
        assert ref.put("/connectors/src-stopped/stop").status_code == 204
        wait_for(lambda: state_of(ref, "src-paused") == ("PAUSED", ["PAUSED"]), 30, 0.2, "the oracle pausing")
        wait_for(lambda: state_of(ref, "src-stopped") == ("STOPPED", []), 30, 0.2, "the oracle stopping")
        reference = {
            name: {
                "config": ref.get(f"/connectors/{name}/config").json(),
                "info": ref.get(f"/connectors/{name}").json(),
                "tasks": ref.get(f"/connectors/{name}/tasks").json(),
                "offsets": ref.get(f"/connectors/{name}/offsets").json(),
            }
            for name in topics
        }
    assert reference["src-stopped"]["tasks"] == []
    assert len(reference["src-paused"]["tasks"]) == 1

    worker = our_worker(tmp_path / "ours", props)
    try:
        worker.start()
        with worker.client as api:
            assert sorted(api.get("/connectors").json()) == ["src-paused", "src-stopped"]
            for name in topics:
                assert api.get(f"/connectors/{name}/config").json() == reference[name]["config"]
                assert api.get(f"/connectors/{name}").json() == reference[name]["info"]
                assert api.get(f"/connectors/{name}/tasks").json() == reference[name]["tasks"]
                assert api.get(f"/connectors/{name}/offsets").json() == reference[name]["offsets"]
            wait_for(
                lambda: state_of(api, "src-paused") == ("PAUSED", ["PAUSED"]),
                30,
                0.2,
                f"src-paused PAUSED on our worker\n{worker.log_tail()}",
            )
            wait_for(
                lambda: state_of(api, "src-stopped") == ("STOPPED", []),
                30,
                0.2,
                f"src-stopped STOPPED on our worker\n{worker.log_tail()}",
            )

            # resumed here, the task continues at the oracle's committed position: only the new line arrives
            assert api.put("/connectors/src-paused/resume").status_code == 202
            wait_for(
                lambda: state_of(api, "src-paused") == ("RUNNING", ["RUNNING"]),
                30,
                0.2,
                f"src-paused RUNNING on our worker\n{worker.log_tail()}",
            )
            with paused_file.open("a") as out:
                out.write("four\n")
            wait_for(
                lambda: (
                    offsets_of(api, "src-paused")
                    == [{"partition": {"filename": str(paused_file)}, "offset": {"position": 19}}]
                ),
                30,
                0.2,
                f"our worker committing past the new line\n{worker.log_tail()}",
            )
    finally:
        worker.stop()
    expect_lines(bootstrap_servers, topics["src-paused"], ["one", "two", "three", "four"])
    expect_lines(bootstrap_servers, topics["src-stopped"], ["alpha", "beta"])


def test_reference_cluster_takes_over_what_our_cluster_left(bootstrap_servers: str, tmp_path: Path) -> None:
    tool = require_oracle()
    props = cluster_props(bootstrap_servers)
    source_file = tmp_path / "input.txt"
    source_file.write_text("first\nsecond\n")  # "second" starts at byte 6; 13 bytes in all
    topic = unique("cluster-ours")
    name = "ours-src"
    partition = {"filename": str(source_file)}

    worker = our_worker(tmp_path / "ours", props)
    try:
        worker.start()
        with worker.client as api:
            created = api.post("/connectors", json={"name": name, "config": source_config(source_file, topic)})
            assert created.status_code == 201, created.text
            wait_for(
                lambda: offsets_of(api, name) == [{"partition": partition, "offset": {"position": 13}}],
                30,
                0.2,
                f"our worker committing offsets\n{worker.log_tail()}",
            )
            assert api.put(f"/connectors/{name}/stop").status_code == 204
            wait_for(lambda: state_of(api, name) == ("STOPPED", []), 30, 0.2, "our worker stopping")
            altered = api.patch(
                f"/connectors/{name}/offsets", json={"offsets": [{"partition": partition, "offset": {"position": 6}}]}
            )
            assert altered.status_code == 200, altered.text
            ours = {
                "config": api.get(f"/connectors/{name}/config").json(),
                "offsets": api.get(f"/connectors/{name}/offsets").json(),
            }
    finally:
        worker.stop()
    assert ours["offsets"] == {"offsets": [{"partition": partition, "offset": {"position": 6}}]}

    with oracle_on(tool, tmp_path, props) as oracle, httpx.Client(base_url=oracle.url, timeout=30) as ref:
        assert ref.get("/connectors").json() == [name]
        assert ref.get(f"/connectors/{name}/config").json() == ours["config"]
        assert ref.get(f"/connectors/{name}").json()["tasks"] == []
        wait_for(
            lambda: state_of(ref, name) == ("STOPPED", []),
            60,
            0.3,
            f"the oracle reporting {name} STOPPED\n{oracle.tail()}",
        )
        assert ref.get(f"/connectors/{name}/offsets").json() == ours["offsets"]
        # resumed there, the task starts at our altered offset: "second" is read once more
        assert ref.put(f"/connectors/{name}/resume").status_code == 202
        wait_for(
            lambda: state_of(ref, name) == ("RUNNING", ["RUNNING"]),
            60,
            0.3,
            f"the oracle resuming {name}\n{oracle.tail()}",
        )
        wait_for(
            lambda: offsets_of(ref, name) == [{"partition": partition, "offset": {"position": 13}}],
            60,
            0.3,
            f"the oracle committing past our offset\n{oracle.tail()}",
        )
    expect_lines(bootstrap_servers, topic, ["first", "second", "second"])
