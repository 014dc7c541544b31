"""Kafka Connect's group protocol formats, byte for byte as the reference writes them.

The expected bytes were produced by the reference itself (Kafka Connect 3.9's
IncrementalCooperativeConnectProtocol, run through jshell on the oracle's class path):

    var a = new ExtendedAssignment((short) 1, (short) 0, "m1", "http://x:1", 42L, List.of("c"),
        List.of(new ConnectorTaskId("c", 0), new ConnectorTaskId("d", 1)), List.of("e"), List.of(), 5);
    IncrementalCooperativeConnectProtocol.serializeAssignment(a, false);
    var w = new ExtendedWorkerState("http://x:1", 7L, new ExtendedAssignment((short) 1, (short) 0, "", "", 7L,
        List.of("c"), List.of(new ConnectorTaskId("c", 0)), List.of(), List.of(), 0));
    IncrementalCooperativeConnectProtocol.serializeMetadata(w, false);
"""

from __future__ import annotations

import pytest

from runtime.distributed.connect_protocol import (
    ConnectAssignment,
    ProtocolError,
    WorkerState,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
)

REFERENCE_ASSIGNMENT = bytes.fromhex(
    "0001000000026d31000a687474703a2f2f783a31000000000000002a0000000200016300000002ffffffff0000000000016400"
    "000001000000010000000100016500000001ffffffff00000005"
)
REFERENCE_METADATA = bytes.fromhex(
    "0001000a687474703a2f2f783a3100000000000000070000002b000100000000000000000000000000070000000100016300"
    "000002ffffffff000000000000000000000000"
)


def test_an_assignment_is_written_and_read_as_the_reference_does() -> None:
    assignment = ConnectAssignment(
        "m1", "http://x:1", 42, frozenset({"c"}), frozenset({("c", 0), ("d", 1)}), frozenset({"e"}), frozenset(), 5
    )
    assert encode_assignment(assignment) == REFERENCE_ASSIGNMENT
    assert decode_assignment(REFERENCE_ASSIGNMENT) == assignment


def test_worker_metadata_is_written_and_read_as_the_reference_does() -> None:
    state = WorkerState("http://x:1", 7, frozenset({"c"}), frozenset({("c", 0)}))
    assert encode_metadata(state, 1) == REFERENCE_METADATA
    assert decode_metadata(REFERENCE_METADATA) == state


def test_version_0_and_missing_trailing_fields_are_read_with_defaults() -> None:
    assert decode_metadata(encode_metadata(WorkerState("http://w:1", 3), 0)) == WorkerState("http://w:1", 3)
    v0 = ConnectAssignment("m", "http://w:1", 9, frozenset({"c"}), version=0)
    assert decode_assignment(encode_assignment(v0)) == v0
    # a v1 assignment without its revocations and delay (the reference tolerates missing fields)
    truncated = encode_assignment(ConnectAssignment("m", "u", 1, frozenset({"c"})))[: -(4 + 4)]
    assert decode_assignment(truncated) == ConnectAssignment("m", "u", 1, frozenset({"c"}))
    assert decode_assignment(b"") is None


@pytest.mark.parametrize("raw", [b"\x00", b"\x00\x01\x00\x05ab", b"\xff\xff", REFERENCE_METADATA[:9]])
def test_malformed_bytes_are_a_protocol_error(raw: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_metadata(raw)
    with pytest.raises(ProtocolError):
        decode_assignment(raw if raw else b"\x00")
