"""Standalone specifics of the contract (sections 0 and 6) that the scenarios rely on: connectors given as
CLI files, connectors created over REST surviving a restart, and CLI errors stopping the worker (exit 3)."""

from __future__ import annotations

import json

import pytest

from tests.support.broker import unique
from tests.support.worker import WorkerProcess, connector_json, write_properties

from .helpers import Api, source_config, source_offsets

pytestmark = pytest.mark.integration


def test_connector_files_in_every_format(bootstrap_servers, tmp_path) -> None:
    flat, shaped, props = unique("flat"), unique("shaped"), unique("props")
    (tmp_path / "flat.json").write_text(
        json.dumps({**source_config(unique("t"), messages_per_task=0), "name": flat, "tasks.max": 2})
    )
    connector_json(tmp_path / "shaped.json", shaped, source_config(unique("t"), messages_per_task=0), "PAUSED")
    write_properties(tmp_path / "c.properties", {**source_config(unique("t"), messages_per_task=0), "name": props})
    files = [tmp_path / "flat.json", tmp_path / "shaped.json", tmp_path / "c.properties"]
    with WorkerProcess(tmp_path / "w", bootstrap_servers, connector_files=files) as worker:
        api = Api(worker.url)
        # health is ready only after the CLI connectors were submitted, so they are all there
        assert sorted(api.get("/connectors").json()) == sorted([flat, shaped, props])
        assert api.get(f"/connectors/{flat}/config").json()["tasks.max"] == "2"  # number coerced to a string
        api.wait_state(flat, "RUNNING", 2)
        assert api.status(shaped)["connector"]["state"] == "PAUSED"
        api.wait_state(props, "RUNNING", 1)
        api.close()


@pytest.mark.parametrize("case", ["missing-name", "duplicate-name"])
def test_bad_connector_files_exit_3(bootstrap_servers, tmp_path, case) -> None:
    name = unique("dup")
    if case == "missing-name":
        (tmp_path / "a.json").write_text(json.dumps(source_config("t")))
        files = [tmp_path / "a.json"]
    else:
        connector_json(tmp_path / "a.json", name, source_config("t", messages_per_task=0))
        connector_json(tmp_path / "b.json", name, source_config("t", messages_per_task=0))
        files = [tmp_path / "a.json", tmp_path / "b.json"]
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers, connector_files=files)
    with pytest.raises(RuntimeError, match="worker exited with 3"):
        worker.start(timeout_s=30)
    if case == "missing-name":
        assert "is missing the mandatory 'name' configuration" in worker.log_path.read_text()


def test_rest_connectors_survive_restart_and_cli_file_updates_them(bootstrap_servers, tmp_path) -> None:
    # section 0: REST-created connectors persist; a CLI file for an existing name updates its config,
    # applied after the persisted state is loaded
    name, topic = unique("persisted"), unique("t")
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers)
    with worker:
        api = Api(worker.url)
        api.create(name, source_config(topic, tasks=1, messages_per_task=5))
        api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 5}, what="saved 5")
        api.close()
    worker.connector_files = [
        connector_json(tmp_path / "c.json", name, source_config(topic, tasks=2, messages_per_task=5))
    ]
    with worker:
        api = Api(worker.url)
        assert api.get("/connectors").json() == [name]
        assert api.get(f"/connectors/{name}/config").json()["tasks.max"] == "2"
        api.wait_state(name, "RUNNING", 2)
        # source offsets survived too: task 0 does not start over, task 1 produces its 5
        api.wait_offsets(name, lambda o: source_offsets(o) == {f"{name}-0": 5, f"{name}-1": 5}, what="saved 5 each")
        api.close()


def test_restart_with_a_blocking_connector_keeps_serving_others(bootstrap_servers, tmp_path) -> None:
    # 81 (second half, standalone): a persisted connector whose start() blocks again after a worker restart
    # does not keep the worker from answering, and every connector comes back. The standalone herder
    # restores connectors one after another on its thread (as it applies every change), so the REST API
    # answers at once and /health says "starting" until all are back; names are chosen so that the
    # blocked connector is restored first.
    blocked, other = "a-" + unique("blocked"), "b-" + unique("other")
    gate = tmp_path / "gate"  # open (present) for the first run, closed for the restart
    gate.touch()
    worker = WorkerProcess(tmp_path / "w", bootstrap_servers)
    with worker:
        api = Api(worker.url)
        api.create(other, source_config(unique("t"), throughput=50))
        config = source_config(unique("t"), messages_per_task=0, **{"connector.start.block.until.file": str(gate)})
        api.create(blocked, config)
        api.close()
    gate.unlink()
    worker.start(wait_healthy=False)
    try:
        api = Api(worker.url)
        # answered while the restored connector's start() is held at its gate
        assert api.get("/connectors").status_code == 200
        assert sorted(api.get("/connectors").json()) == sorted([blocked, other])
        gate.touch()
        api.wait_state(blocked, "RUNNING", 1, timeout_s=20)
        api.wait_state(other, "RUNNING", 1, timeout_s=20)
        assert api.get("/health").json()["status"] == "healthy"
        api.close()
    finally:
        gate.touch()
        worker.stop()
