"""What a worker says when the group coordinator refuses its join for good (runtime/distributed/group.py): the
answer's name and what to change. Tansu gives only INCONSISTENT_GROUP_PROTOCOL (the integration test); the
others come from Apache Kafka's checks (session timeout range, ACLs, group size)."""

from __future__ import annotations

import pytest
from kafka import errors as kafka_errors

from runtime.distributed.group import FATAL_JOIN_ERRORS, explain_join_refusal


@pytest.mark.parametrize(
    ("error", "answer", "advice"),
    [
        (kafka_errors.InconsistentGroupProtocolError(), "INCONSISTENT_GROUP_PROTOCOL", "a group.id of its own"),
        (kafka_errors.InvalidSessionTimeoutError(), "INVALID_SESSION_TIMEOUT", "session.timeout.ms=3000 is outside"),
        (kafka_errors.GroupAuthorizationFailedError("g"), "GROUP_AUTHORIZATION_FAILED", "READ on the group"),
        (kafka_errors.GroupMaxSizeReachedError("g"), "GROUP_MAX_SIZE_REACHED", "group.max.size"),
        (kafka_errors.InvalidGroupIdError(), "INVALID_GROUP_ID", "InvalidGroupIdError"),
    ],
)
def test_a_refusal_names_the_answer_and_what_to_change(error: Exception, answer: str, advice: str) -> None:
    assert isinstance(error, FATAL_JOIN_ERRORS)
    line = explain_join_refusal("g", error, 3000)
    assert line.startswith(f"This worker cannot join group g: the group coordinator answered {answer}: "), line
    assert advice in line, line
