"""Tap state as source offsets (Singer and Airbyte): bookmarks flattened, and which record carries a state."""

from __future__ import annotations

from runtime.api import SourceRecord
from runtime.connectors.state_offsets import StateCarrier, decode_bookmark, encode_bookmark


def test_bookmarks_round_trip_through_flat_offsets() -> None:
    bookmark = {"replication_key": "updated_at", "replication_key_value": "2024-01-01", "progress_markers": {"a": 1}}
    flat = encode_bookmark(bookmark)
    assert flat == {
        "replication_key": "updated_at",
        "replication_key_value": "2024-01-01",
        "progress_markers.json": '{"a":1}',
    }
    assert decode_bookmark(flat) == bookmark


def record(n: int) -> SourceRecord:
    return SourceRecord(None, None, "t", value=n)


def offsets(records: list[SourceRecord]) -> list:
    return [(r.value, r.source_partition, r.source_offset) for r in records]


def test_a_state_rides_on_the_records_before_it_even_when_a_second_follows_at_once() -> None:
    carrier, out = StateCarrier(hold=2), []
    for n in range(4):
        carrier.add(record(n), out)
    carrier.state([({"stream": "a"}, {"v": 1}), ({"stream": "b"}, {"v": 1})])
    carrier.state([({"stream": "a"}, {"v": 2})])  # no record in between: the same record carries the newer one
    carrier.add(record(4), out)
    carrier.state([({"stream": "c"}, {"v": 1}), ({"stream": "b"}, {"v": 2})])
    carrier.release(out)
    assert offsets(out) == [
        (0, None, None),
        (1, None, None),
        (2, {"stream": "b"}, {"v": 1}),
        (3, {"stream": "a"}, {"v": 2}),  # no record came between the two states: it carries the newer one
        (4, {"stream": "c"}, {"v": 1}),
    ]
    # b's second change had no record left to ride on: it waits for the next one
    carrier.add(record(5), out)
    carrier.release(out)
    assert offsets(out)[-1] == (5, {"stream": "b"}, {"v": 2})


def test_a_change_with_no_record_to_carry_it_waits_for_the_next_records() -> None:
    carrier, out = StateCarrier(hold=1), []
    carrier.state([({"stream": "a"}, {"v": 1})])
    carrier.add(record(0), out)
    carrier.release(out)
    assert offsets(out) == [(0, {"stream": "a"}, {"v": 1})]
