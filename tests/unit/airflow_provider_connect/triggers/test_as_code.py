"""DesiredStateDriftTrigger: fires when the desired state and the cluster's differ, never on a failure."""

import asyncio
import json

from airflow_provider_connect.triggers.as_code import DesiredStateDriftTrigger
from tests.unit.airflow_provider_connect.bodies import source_config

SECRET = "s3cr3t-pass-77"


def test_the_drift_trigger_fires_on_a_change_not_on_a_failure(fake, tmp_path):
    config = {k: str(v) for k, v in source_config().items()}
    fake.add("a", config, task_states=["FAILED"])
    (tmp_path / "a.json").write_text(json.dumps({"config": source_config()}))
    trigger = DesiredStateDriftTrigger(str(tmp_path), poll_interval=0)

    def plans() -> int:
        return fake.calls.count(("GET", "/connectors"))

    async def watch() -> dict:
        event = asyncio.ensure_future(anext(aiter(trigger.run())))
        for _ in range(100_000):  # the trigger plans the cluster three times over
            if plans() >= 3 or event.done():
                break
            await asyncio.sleep(0)
        # only a FAILED task: restart_failed_connectors_on_failure's job, not a drift
        assert plans() >= 3 and not event.done(), event.result() if event.done() else plans()
        (tmp_path / "b.yaml").write_text(f"config: {json.dumps(source_config(**{'db.password': SECRET}))}\n")
        return (await asyncio.wait_for(event, 30)).payload

    event = asyncio.run(watch())
    assert event["status"] == "drift" and event["connectors"] == ["b"]
    assert "1 to create" in event["message"] and SECRET not in json.dumps(event)
    assert DesiredStateDriftTrigger(**trigger.serialize()[1]).serialize() == trigger.serialize()
