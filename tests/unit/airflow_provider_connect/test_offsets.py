"""Sink offset targets: the forms they are given in, and committed offsets judged against them."""

import pytest

from airflow_provider_connect.offsets import committed_sink_offsets, evaluate_offsets, parse_targets, to_wire
from airflow_provider_connect.status import Verdict


def test_offset_targets_and_evaluation():
    targets = parse_targets({"t:0": 10, "my:topic:1": 5})
    assert targets == {("t", 0): 10, ("my:topic", 1): 5}
    assert parse_targets([{"topic": "t", "partition": 0, "offset": 3}]) == {("t", 0): 3}
    assert parse_targets(to_wire(targets)) == targets
    assert parse_targets(
        [{"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": 7}}]
    ) == {("t", 2): 7}
    with pytest.raises(ValueError):
        parse_targets({"no-partition": 1})
    offsets = [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 10}},
        {"partition": {"kafka_topic": "my:topic", "kafka_partition": 1}, "offset": {"kafka_offset": 4}},
    ]
    assert committed_sink_offsets(offsets) == {("t", 0): 10, ("my:topic", 1): 4}
    waiting = evaluate_offsets(offsets, targets)
    assert waiting.verdict is Verdict.WAITING and "my:topic:1 at 4 < 5" in waiting.message
    offsets[1]["offset"]["kafka_offset"] = 5
    assert evaluate_offsets(offsets, targets).verdict is Verdict.SUCCESS
    assert evaluate_offsets([], {("t", 0): 1}).verdict is Verdict.WAITING
