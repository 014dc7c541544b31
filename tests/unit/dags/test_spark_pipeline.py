"""The spark_pipeline DAG's final check: exactly once, read from the rows' own Kafka offsets."""

from __future__ import annotations

import pytest

from tests.support.env import require


@pytest.fixture(scope="module")
def result_problems():
    try:
        from dags.spark_pipeline import result_problems  # the DAG module imports Airflow
    except ImportError as exc:
        require(False, f"Apache Airflow and its Spark provider ({exc})")
    return result_problems


TARGETS = {"orders:0": 200, "orders:1": 200}
SEEDS = {"0": 150}


def summary(p0: tuple[int, int, int, int], p1: tuple[int, int, int, int]) -> dict:
    keys = ("rows", "distinct_offsets", "min_offset", "max_offset")
    return {"offsets": {"orders:0": dict(zip(keys, p0)), "orders:1": dict(zip(keys, p1))}}


def test_the_seeded_range_once_passes(result_problems):
    assert result_problems(summary((50, 50, 150, 199), (200, 200, 0, 199)), TARGETS, SEEDS) == []


def test_more_records_after_the_targets_still_pass(result_problems):
    assert result_problems(summary((60, 60, 150, 209), (230, 230, 0, 229)), TARGETS, SEEDS) == []


@pytest.mark.parametrize(
    "p0, problem",
    [
        ((51, 50, 150, 199), "1 duplicate rows"),
        ((49, 49, 150, 199), "have gaps"),
        ((60, 60, 140, 199), "first offset 140, seeded at 150"),
        ((40, 40, 150, 189), "last offset 189, expected at least 199"),
    ],
)
def test_duplicates_gaps_an_ignored_seed_and_a_short_range_fail(result_problems, p0, problem):
    problems = result_problems(summary(p0, (200, 200, 0, 199)), TARGETS, SEEDS)
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_partition_without_rows_fails_unless_its_seed_is_at_the_target(result_problems):
    result = {"offsets": {"orders:1": {"rows": 200, "distinct_offsets": 200, "min_offset": 0, "max_offset": 199}}}
    assert result_problems(result, TARGETS, SEEDS) == ["orders:0: no rows, expected offsets up to 199"]
    assert result_problems(result, TARGETS, {"0": 200}) == []


def test_resume_runs_whether_or_not_offsets_are_seeded(result_problems):
    """Without seeds the branch skips seed_offsets: resume must still run (its trigger rule), after it."""
    from airflow.sdk import TriggerRule

    from dags.spark_pipeline import dag

    resume, seed = dag.get_task("resume"), dag.get_task("seed_offsets")
    assert "seed_offsets" in resume.upstream_task_ids and "plan_seeds" in resume.upstream_task_ids
    assert resume.trigger_rule == TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS
    plan = dag.get_task("plan_seeds")
    assert plan.downstream_task_ids == {"seed_offsets", "resume"}
    assert plan.python_callable(params={"seed_offsets": {}}) == ["resume"]
    assert plan.python_callable(params={"seed_offsets": {"0": 5}}) == ["seed_offsets", "resume"]
    assert seed.stop_first  # a re-run finds the connector running
    assert dag.get_task("wait_caught_up").upstream_task_ids == {"catch_up_targets"}
