"""DesiredStateDriftTrigger: fires when the desired state and the cluster's differ, never on a failure."""

import asyncio
import json

import pytest

from tests.unit.airflow_provider_connect.bodies import source_config

SECRET = "s3cr3t-pass-77"


def first_event(trigger, timeout=10):
    async def run():
        async for event in trigger.run():
            return event.payload

    return asyncio.run(asyncio.wait_for(run(), timeout))


def test_the_drift_trigger_fires_on_a_change_not_on_a_failure(fake, tmp_path):
    from airflow_provider_connect.triggers.as_code import DesiredStateDriftTrigger

    config = {k: str(v) for k, v in source_config().items()}
    fake.add("a", config, task_states=["FAILED"])
    (tmp_path / "a.json").write_text(json.dumps({"config": source_config()}))
    trigger = DesiredStateDriftTrigger(str(tmp_path), poll_interval=0)
    with pytest.raises(TimeoutError):  # only a FAILED task: restart_failed_connectors_on_failure's job
        first_event(trigger, timeout=0.5)
    (tmp_path / "b.yaml").write_text(f"config: {json.dumps(source_config(**{'db.password': SECRET}))}\n")
    event = first_event(trigger)
    assert event["status"] == "drift" and event["connectors"] == ["b"]
    assert "1 to create" in event["message"] and SECRET not in json.dumps(event)
    assert DesiredStateDriftTrigger(**trigger.serialize()[1]).serialize() == trigger.serialize()
