"""Unit tests of the suite's own logic: normalisers and the comparison rules (no workers needed)."""

from __future__ import annotations

import httpx

from .harness import (
    ORACLE,
    OURS,
    Answer,
    Conformance,
    Deliberate,
    Step,
    _agree,
    _transient,
)
from .normalise import normalise_body, normalise_location, token_map


def test_placeholders_replace_the_longest_name_first() -> None:
    mapping = token_map({"cf-c-1r": "<<c>>", "cf-c-1r-extra": "<<c2>>"})
    body = {"cf-c-1r-extra": {"name": "cf-c-1r", "msg": "Connector cf-c-1r-extra not found"}}
    assert normalise_body(body, mapping) == {"<<c2>>": {"name": "<<c>>", "msg": "Connector <<c2>> not found"}}


def test_worker_ids_traces_and_timestamps_are_masked_but_not_dropped() -> None:
    body = {
        "connector": {"state": "FAILED", "worker_id": "127.0.0.1:8083", "trace": "boom\n at x"},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "10.0.0.1:1"}],
        "last_modified": 17,
    }
    assert normalise_body(body, []) == {
        "connector": {"state": "FAILED", "worker_id": "<worker>", "trace": "<trace>"},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "<worker>"}],
        "last_modified": "<timestamp>",
    }
    # A null worker_id is not a "host:port" string and must stay visible as a difference.
    assert normalise_body({"worker_id": None}, []) == {"worker_id": None}


def test_unordered_collections_are_sorted() -> None:
    body = {
        "offsets": [
            {"partition": {"kafka_partition": 1}, "offset": None},
            {"partition": {"kafka_partition": 0}, "offset": None},
        ],
        "c": {"topics": ["b", "a"]},
    }
    out = normalise_body(body, [])
    assert [o["partition"]["kafka_partition"] for o in out["offsets"]] == [0, 1]
    assert out["c"]["topics"] == ["a", "b"]


def test_java_map_renderings_in_messages_are_sorted() -> None:
    body = {"message": "Connector config {name=x, topic=t, tasks.max=1} contains no connector type"}
    assert (
        normalise_body(body, [])["message"]
        == "Connector config {name=x, tasks.max=1, topic=t} contains no connector type"
    )


def test_location_keeps_the_encoded_path_only() -> None:
    mapping = token_map({"cf-c-1o": "<<c>>"})
    assert normalise_location("http://127.0.0.1:8083/connectors/cf-c-1o", "", mapping) == "/connectors/<<c>>"
    assert normalise_location("http://h:1/connectors/a%20b", "", []) == "/connectors/a%20b"


def _step(oracle: Answer, ours: Answer) -> Step:
    step = Step(0, "label", "GET", "/x", None)
    step.answers = {ORACLE: oracle, OURS: ours}
    return step


def _conformance() -> Conformance:
    return Conformance("t", [], None, recording=False)


def test_body_and_status_differences_are_reported() -> None:
    cf = _conformance()
    cf._check(
        _step(Answer(200, {"a": 1}, None, "application/json"), Answer(200, {"a": 2}, None, "application/json")),
        200,
        None,
        True,
    )
    assert len(cf.diffs) == 1 and "body differs" in cf.diffs[0]
    cf = _conformance()
    cf._check(
        _step(
            Answer(404, {"error_code": 404, "message": "m"}, None, None),
            Answer(422, {"detail": []}, None, "application/json"),
        ),
        404,
        None,
        True,
    )
    assert any("ours answered 422, expected 404" in d for d in cf.diffs)
    assert any("not {error_code, message}" in d for d in cf.diffs)


def test_deliberate_differences_check_our_status_and_message_only() -> None:
    why = Deliberate("section 0 rule", 400, ("initial_state",))
    ok = Answer(400, {"error_code": 400, "message": "bad initial_state"}, None, "application/json")
    cf = _conformance()
    cf._check(_step(Answer(500, {"error_code": 500, "message": "Jackson"}, None, None), ok), 500, why, True)
    assert cf.diffs == []
    cf = _conformance()
    cf._check(
        _step(
            Answer(500, {"error_code": 500, "message": "Jackson"}, None, None),
            Answer(500, {"error_code": 500, "message": "Jackson"}, None, "application/json"),
        ),
        500,
        why,
        True,
    )
    assert any("expected 400" in d and "section 0 rule" in d for d in cf.diffs)


def test_our_errors_need_a_json_content_type() -> None:
    cf = _conformance()
    cf._check(
        _step(
            Answer(404, {"error_code": 404, "message": "HTTP 404 Not Found"}, None, None),
            Answer(404, {"error_code": 404, "message": "HTTP 404 Not Found"}, None, "text/plain"),
        ),
        404,
        None,
        True,
    )
    assert len(cf.diffs) == 1 and "Content-Type" in cf.diffs[0]


def test_cluster_transients_are_recognised_by_status_and_message() -> None:
    rebalance = {"error_code": 500, "message": "Request cannot be completed because a rebalance is expected"}
    stale = {"error_code": 409, "message": "Cannot complete request momentarily due to stale configuration (x)"}
    assert _transient(httpx.Response(500, json=rebalance))
    assert _transient(httpx.Response(409, json=stale))
    # the same text under another status, any other 409/500, and non-JSON bodies are real answers
    assert not _transient(httpx.Response(400, json=rebalance))
    assert not _transient(httpx.Response(409, json={"error_code": 409, "message": "Connector c already exists"}))
    assert not _transient(httpx.Response(500, text="<html>oops</html>"))


def test_cluster_reads_agree_only_on_the_expected_status_and_equal_bodies() -> None:
    same = {ORACLE: Answer(200, {"a": 1}, None, None), OURS: Answer(200, {"a": 1}, None, None)}
    assert _agree(same, 200, compare_body=True)
    assert not _agree(same, 404, compare_body=True)
    differ = {ORACLE: Answer(200, {"a": 1}, None, None), OURS: Answer(200, {"a": 2}, None, None)}
    assert not _agree(differ, 200, compare_body=True)
    assert _agree(differ, 200, compare_body=False)
