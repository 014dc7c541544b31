"""The offsets operators (KIP-875): read to XCom, alter and reset only a STOPPED connector (or stop it first)."""

import json

import pytest

from airflow_provider_connect.errors import ConnectorStateError
from airflow_provider_connect.operators.offsets import (
    ConnectorAlterOffsetsOperator,
    ConnectorGetOffsetsOperator,
    ConnectorResetOffsetsOperator,
)

OFFSETS = [{"partition": {"task.id": "c-0"}, "offset": {"saved": 5}}]


def test_get_offsets_to_xcom(fake):
    fake.add("c", {"connector.class": "X"}, offsets=OFFSETS)
    assert ConnectorGetOffsetsOperator(task_id="g", connector_name="c").execute({}) == OFFSETS


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: ConnectorAlterOffsetsOperator(task_id="a", connector_name="c", offsets=json.dumps(OFFSETS), **kw),
        lambda **kw: ConnectorResetOffsetsOperator(task_id="r", connector_name="c", **kw),
    ],
)
def test_offset_changes_refuse_unless_stopped_or_asked_to_stop(fake, make):
    fake.add(
        "c",
        {"connector.class": "X"},
        state="RUNNING",
        offsets=[{"partition": {"task.id": "c-0"}, "offset": {"saved": 9}}],
    )
    with pytest.raises(ConnectorStateError, match="it is RUNNING.*STOPPED.*stop_first=True"):
        make().execute({})
    assert not any(path.endswith("/offsets") for _, path in fake.calls)
    message = make(stop_first=True).execute({})
    assert "successfully" in message and fake.connectors["c"]["state"] == "STOPPED"
    assert fake.connectors["c"]["offsets"] in (OFFSETS, [])
    make().execute({})  # already STOPPED: no stop needed, repeatable


def test_alter_offsets_validates_input():
    with pytest.raises(ValueError, match="non-empty list"):
        ConnectorAlterOffsetsOperator(task_id="a", connector_name="c", offsets="[]").execute({})
