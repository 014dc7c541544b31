"""The spark_pipeline DAG's final check: exactly once, read from the rows' own Kafka offsets."""
from __future__ import annotations

import pytest

pytest.importorskip("airflow")  # the DAG module imports Airflow; the provider's unit tests need it too

from dags.spark_pipeline import result_problems  # noqa: E402

TARGETS = {"orders:0": 200, "orders:1": 200}
SEEDS = {"0": 150}


def summary(p0: tuple[int, int, int, int], p1: tuple[int, int, int, int]) -> dict:
    keys = ("rows", "distinct_offsets", "min_offset", "max_offset")
    return {"offsets": {"orders:0": dict(zip(keys, p0)), "orders:1": dict(zip(keys, p1))}}


def test_the_seeded_range_once_passes():
    assert result_problems(summary((50, 50, 150, 199), (200, 200, 0, 199)), TARGETS, SEEDS) == []


def test_more_records_after_the_targets_still_pass():
    assert result_problems(summary((60, 60, 150, 209), (230, 230, 0, 229)), TARGETS, SEEDS) == []


@pytest.mark.parametrize("p0, problem", [
    ((51, 50, 150, 199), "1 duplicate rows"),
    ((49, 49, 150, 199), "have gaps"),
    ((60, 60, 140, 199), "first offset 140, seeded at 150"),
    ((40, 40, 150, 189), "last offset 189, expected at least 199"),
])
def test_duplicates_gaps_an_ignored_seed_and_a_short_range_fail(p0, problem):
    problems = result_problems(summary(p0, (200, 200, 0, 199)), TARGETS, SEEDS)
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_partition_without_rows_fails_unless_its_seed_is_at_the_target():
    result = {"offsets": {"orders:1": {"rows": 200, "distinct_offsets": 200, "min_offset": 0, "max_offset": 199}}}
    assert result_problems(result, TARGETS, SEEDS) == ["orders:0: no rows, expected offsets up to 199"]
    assert result_problems(result, TARGETS, {"0": 200}) == []
