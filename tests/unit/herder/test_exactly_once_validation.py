"""KIP-618's preflight checks of `exactly.once.support` and `transaction.boundary` (the distributed reference's
DistributedHerder.validateSourceConnector*): what each answer of the connector gives, and on which key. The
conformance suite checks the same against the reference itself (tests/conformance/distributed)."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.api import ConfigDef, SourceConnector, Task
from runtime.herder.validation import (
    BOUNDARIES_NULL,
    BOUNDARIES_REFUSED,
    SUPPORT_REFUSED,
    SUPPORT_UNKNOWN,
    WORKER_NOT_ENABLED,
    check_source_exactly_once,
    validate_connector_config,
)
from runtime.plugins import Plugins

ANSWER: dict[str, Any] = {}  # what the connector below answers, per test


class AnsweringSource(SourceConnector):
    def start(self, props: dict[str, str]) -> None: ...

    def stop(self) -> None: ...

    def task_class(self) -> type[Task]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def config(self) -> ConfigDef:
        return ConfigDef()

    def exactly_once_support(self, connector_config: dict[str, str]) -> Any:
        return _answer("support")

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> Any:
        return _answer("boundaries")


def _answer(kind: str) -> Any:
    answer = ANSWER[kind]
    if isinstance(answer, BaseException):
        raise answer
    return answer


@pytest.fixture
def plugins() -> Plugins:
    return Plugins()


def errors(plugins: Plugins, worker_enabled: bool = True, **config: str) -> dict[str, list[str]]:
    config = {"name": "c", "connector.class": f"{__name__}.AnsweringSource", **config}
    infos = validate_connector_config(plugins, config)
    check_source_exactly_once(plugins, infos, config, worker_enabled)
    found = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"] and c["value"]["errors"]}
    assert infos["error_count"] == sum(len(e) for e in found.values())
    return found


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("SUPPORTED", []),
        ("supported", []),
        ("UNSUPPORTED", [SUPPORT_REFUSED]),
        (None, [SUPPORT_UNKNOWN]),
        (RuntimeError("no idea"), ["An unexpected error occurred during validation: no idea"]),
        (
            RuntimeError(""),
            ["An unexpected error occurred during validation; please see the worker logs for more details."],
        ),
        (
            "MAYBE",
            [
                "An unexpected error occurred during validation: Unexpected value returned from "
                "SourceConnector::exactlyOnceSupport: MAYBE"
            ],
        ),
    ],
)
def test_required_asks_the_connector(plugins: Plugins, answer: Any, expected: list[str]) -> None:
    ANSWER.update(support=answer, boundaries="UNSUPPORTED")
    assert errors(plugins, **{"exactly.once.support": "REQUIRED"}).get("exactly.once.support", []) == expected
    # requested: no preflight check at all
    ANSWER["support"] = RuntimeError("not asked")
    assert errors(plugins, **{"exactly.once.support": "requested"}) == {}


def test_required_on_a_worker_without_exactly_once_says_so_first(plugins: Plugins) -> None:
    ANSWER.update(support=None, boundaries="UNSUPPORTED")
    found = errors(plugins, worker_enabled=False, **{"exactly.once.support": "required"})
    assert found == {"exactly.once.support": [WORKER_NOT_ENABLED, SUPPORT_UNKNOWN]}


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("SUPPORTED", []),
        ("UNSUPPORTED", [BOUNDARIES_REFUSED]),
        (None, [BOUNDARIES_NULL]),
        (ValueError("bad config"), ["An unexpected error occurred during validation: bad config"]),
    ],
)
def test_connector_boundaries_ask_the_connector(plugins: Plugins, answer: Any, expected: list[str]) -> None:
    ANSWER.update(support="SUPPORTED", boundaries=answer)
    # asked whatever the worker's exactly-once support, as the reference does
    for enabled in (True, False):
        found = errors(plugins, worker_enabled=enabled, **{"transaction.boundary": "Connector"})
        assert found.get("transaction.boundary", []) == expected
    ANSWER["boundaries"] = RuntimeError("not asked")
    assert errors(plugins, **{"transaction.boundary": "interval"}) == {}


def test_a_key_that_fails_its_own_validation_is_not_checked_further(plugins: Plugins) -> None:
    ANSWER.update(support=RuntimeError("not asked"), boundaries=RuntimeError("not asked"))
    found = errors(plugins, **{"exactly.once.support": "always", "transaction.boundary": "batch"})
    assert found["exactly.once.support"] == [
        "Invalid value always for configuration exactly.once.support: String must be one of (case insensitive): "
        "REQUIRED, REQUESTED"  # the reference's: upper-cased, in its HashSet's order
    ]
    assert len(found["transaction.boundary"]) == 1


def test_the_bundled_sources_answer_as_the_reference_s(plugins: Plugins) -> None:
    file_source = {"name": "f", "connector.class": "FileStreamSource", "topic": "t"}
    for config, expected in (
        ({**file_source, "file": "/tmp/in.txt"}, {}),
        (file_source, {"exactly.once.support": [SUPPORT_REFUSED]}),  # stdin: offsets are not even tracked
        (
            {**file_source, "file": "/tmp/in.txt", "transaction.boundary": "connector"},
            {"transaction.boundary": [BOUNDARIES_REFUSED]},
        ),
    ):
        infos = validate_connector_config(plugins, {**config, "exactly.once.support": "required"})
        check_source_exactly_once(plugins, infos, {**config, "exactly.once.support": "required"}, True)
        found = {
            c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"] and c["value"]["errors"]
        }
        assert found == expected
    sequence = {"name": "s", "connector.class": "SequenceSource", "topic": "t", "transaction.boundary": "connector"}
    for extra, expected in (
        ({}, {"transaction.boundary": [BOUNDARIES_REFUSED]}),
        ({"transaction.every.records": "5"}, {}),
    ):
        infos = validate_connector_config(plugins, {**sequence, **extra})
        check_source_exactly_once(plugins, infos, {**sequence, **extra, "exactly.once.support": "required"}, True)
        found = {
            c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"] and c["value"]["errors"]
        }
        assert found == expected


def test_sinks_are_not_checked(plugins: Plugins) -> None:
    config = {"name": "k", "connector.class": "RecordingSink", "topics": "t", "output.file": "/tmp/o"}
    infos = validate_connector_config(plugins, config)
    check_source_exactly_once(plugins, infos, {**config, "exactly.once.support": "required"}, False)
    assert infos["error_count"] == 0
