"""Task generation through a real herder: tasks.max.enforce (KIP-1004), connector-requested reconfiguration,
failures of task_configs, and connectors with broken config definitions (contract 1.8, 2.5)."""

from __future__ import annotations

import importlib

import pytest

from runtime.control.errors import BadRequest

from .conftest import CUSTOM, new_name, states, wait_for

pytestmark = pytest.mark.integration


def custom(name: str, cls: str, tasks: int = 2, **extra: str) -> dict[str, str]:
    return {"name": name, "connector.class": f"{CUSTOM}.{cls}", "tasks.max": str(tasks), **extra}


def test_more_tasks_than_tasks_max_fails_the_connector(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, custom(name, "TooManyTasksConnector", tasks=2), False)
    body = h.connector_status(name)
    assert body["connector"]["state"] == "FAILED"
    assert (
        f"The connector {name} has generated 3 tasks, which is greater than 2, the maximum number of tasks it is "
        "configured to create. "
    ) in body["connector"]["trace"]
    assert body["tasks"] == []
    assert h.connector_info(name)["tasks"] == []


def test_tasks_max_enforce_false_allows_extra_tasks(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(
        name, custom(name, "TooManyTasksConnector", tasks=2, **{"tasks.max.enforce": "false"}), False
    )
    assert states(h, name) == ("RUNNING", ["RUNNING"] * 3)


def test_failing_task_configs_fails_the_connector(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, custom(name, "FailingTaskConfigsConnector"), False)
    body = h.connector_status(name)
    assert body["connector"]["state"] == "FAILED"
    assert "task_configs exploded" in body["connector"]["trace"]
    h.stop_connector(name)
    assert states(h, name) == ("STOPPED", [])


def test_connector_requested_reconfiguration_replaces_tasks(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, custom(name, "ReconfiguringSourceConnector", tasks=5), False)
    assert states(h, name) == ("RUNNING", ["RUNNING"])
    module = importlib.import_module(CUSTOM)
    module.request(name, 3)
    wait_for(lambda: states(h, name) == ("RUNNING", ["RUNNING"] * 3), 10, "3 tasks")
    assert [t["config"]["of"] for t in h.task_infos(name)] == ["3", "3", "3"]
    module.request(name, 9)  # capped by tasks.max
    wait_for(lambda: states(h, name) == ("RUNNING", ["RUNNING"] * 5), 10, "5 tasks")


def test_reconfiguration_request_while_paused_is_deferred_to_resume(harness):
    h = harness.herder
    name = new_name()
    h.put_connector_config(name, custom(name, "ReconfiguringSourceConnector", tasks=5), False)
    module = importlib.import_module(CUSTOM)
    context = module.CONTEXTS[name]
    h.pause_connector(name)
    module.WANTED_TASKS[name] = 2
    context.request_task_reconfiguration()
    h.connector_names()  # let the queued request run
    h.pause_connector(name)  # a herder round-trip after the request
    assert states(h, name) == ("PAUSED", ["PAUSED"])
    h.resume_connector(name)
    assert states(h, name) == ("RUNNING", ["RUNNING", "RUNNING"])


@pytest.mark.parametrize(
    "cls, message",
    [
        ("NullConfigConnector", f"{CUSTOM}.NullConfigConnector.config() must return a ConfigDef that is not null."),
        ("NullValidateConnector", f"{CUSTOM}.NullValidateConnector.validate() must return a Config that is not null."),
    ],
)
def test_broken_config_definitions_are_bad_requests(harness, cls, message):
    h = harness.herder
    name = new_name()
    with pytest.raises(BadRequest) as info:
        h.put_connector_config(name, custom(name, cls), False)
    assert info.value.message == message
    with pytest.raises(BadRequest) as info:
        h.validate(custom(name, cls))
    assert info.value.message == message
    assert name not in h.connector_names()
