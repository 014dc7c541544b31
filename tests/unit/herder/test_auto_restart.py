"""Self-healing's rounds on a fake clock: Strimzi's backoff (at once, then 2, 6, 12, ... minutes after the last
restart), the maximum, the reset after a healthy run, and exactly one restart per failure whoever owns it.

No broker: a fake herder (it restarts by writing the status a started instance writes) over the real status
store and restart ledger, and `AutoRestarter.step` called with the times the test chooses."""

from __future__ import annotations

import logging

import pytest

from runtime.control.restart_backoff import (
    BACKOFF_UNIT_MS,
    ENABLED,
    MAX_RESTARTS,
    RestartPolicy,
    backoff_units,
    policy_of,
    problems,
)
from runtime.herder.auto_restart import AutoRestarter
from runtime.storage.base import InstanceStatus, StatusStore
from runtime.storage.restart_records import (
    MemoryRestartLedger,
    RestartRecord,
    decode_record,
    encode_record,
    parse_record_key,
    record_key,
)
from runtime.storage.states import State

ME, OTHER = "me:8083", "other:8083"
MINUTE = 60_000


class FakeFleet:
    """One connector `c` with two tasks; restarting an instance writes RUNNING, as its new start does."""

    def __init__(self, statuses: StatusStore, **config: str) -> None:
        self.statuses = statuses
        self.configs = {"c": {"connector.class": "SequenceSource", ENABLED: "true", **config}}
        self.owned: set[tuple[str, int | None]] = {("c", None), ("c", 0), ("c", 1)}
        self.restarts: list[tuple[str, int | None]] = []
        self.leader = True

    def connector_names(self) -> list[str]:
        return sorted(self.configs)

    def connector_config(self, name: str) -> dict[str, str]:
        return self.configs[name]

    def owns(self, name: str, task: int | None) -> bool:
        return (name, task) in self.owned

    def is_leader(self) -> bool:
        return self.leader

    def restart_connector(self, name: str) -> None:
        self.restarts.append((name, None))
        self.statuses.put_connector(name, InstanceStatus(State.RUNNING, ME))

    def restart_task(self, name: str, index: int) -> None:
        self.restarts.append((name, index))
        self.statuses.put_task(name, index, InstanceStatus(State.RUNNING, ME))


@pytest.fixture
def statuses() -> StatusStore:
    store = StatusStore()
    store.put_connector("c", InstanceStatus(State.RUNNING, ME))
    for index in (0, 1):
        store.put_task("c", index, InstanceStatus(State.RUNNING, ME))
    return store


def healer(statuses: StatusStore, ledger: MemoryRestartLedger | None = None, **config: str):
    fleet = FakeFleet(statuses, **config)
    return fleet, AutoRestarter(fleet, statuses, ledger or MemoryRestartLedger(), ME, clock=lambda: 0.0)


def fail(statuses: StatusStore, task: int = 0, worker: str = ME, trace: str = "ConnectError: boom\n\tat x") -> None:
    statuses.put_task("c", task, InstanceStatus(State.FAILED, worker, trace))


def test_strimzis_backoff_in_minutes():
    assert [backoff_units(n) for n in range(10)] == [0, 2, 6, 12, 20, 30, 42, 56, 60, 60]
    assert RestartPolicy(None).backoff_ms(2) == 6 * MINUTE


def test_a_task_failing_three_times_is_restarted_after_0_2_and_6_minutes_then_reset(statuses, caplog):
    fleet, restarter = healer(statuses)
    caplog.set_level(logging.INFO, "runtime.herder.auto_restart")
    fail(statuses)
    assert restarter.step(0) is None
    assert fleet.restarts == [("c", 0)]  # at once
    assert restarter.ledger.get(("c", 0)) == RestartRecord(1, 0, ME, "ConnectError: boom")

    fail(statuses)  # a minute later: the second restart waits for 2 minutes after the first
    assert restarter.step(1 * MINUTE) == 1 * MINUTE
    assert restarter.step(2 * MINUTE - 1) == 1 and fleet.restarts == [("c", 0)]
    restarter.step(2 * MINUTE)
    assert fleet.restarts == [("c", 0)] * 2

    fail(statuses)  # then 6 minutes after the second
    restarter.step(7 * MINUTE)
    assert fleet.restarts == [("c", 0)] * 2
    restarter.step(8 * MINUTE)
    assert fleet.restarts == [("c", 0)] * 3 and restarter.restarted[("c", 0)] == 3
    messages = [r.getMessage() for r in caplog.records if "Auto-restart" in r.getMessage()]
    assert messages == [
        f"Auto-restart {n} of task c-0 (backoff {backoff} ms after the previous one), answering its failure: "
        "ConnectError: boom"
        for n, backoff in ((1, 0), (2, 2 * MINUTE), (3, 6 * MINUTE))
    ]

    # healthy since: the count starts again once more than 12 minutes (its backoff for 3) have passed
    restarter.step(8 * MINUTE)  # the round after the restart sees it RUNNING
    restarter.step(20 * MINUTE)
    assert restarter.ledger.get(("c", 0)) is not None
    restarter.step(20 * MINUTE + 1)
    assert restarter.ledger.get(("c", 0)) is None
    fail(statuses)
    restarter.step(21 * MINUTE)
    assert fleet.restarts == [("c", 0)] * 4  # at once again


def test_it_stops_after_the_maximum_and_says_so_once(statuses, caplog):
    fleet, restarter = healer(statuses, **{MAX_RESTARTS: "2"})
    for minute in (0, 2):
        fail(statuses)
        restarter.step(minute * MINUTE)
    assert len(fleet.restarts) == 2
    fail(statuses, trace="ConnectError: still broken")
    for minute in (60, 600, 6000):
        assert restarter.step(minute * MINUTE) is None
    assert len(fleet.restarts) == 2
    given_up = [r.getMessage() for r in caplog.records if "Not restarting" in r.getMessage()]
    assert given_up == [
        "Not restarting task c-0 again: it failed after 2 automatic restart(s), the maximum; restart it by hand. "
        "Its failure: ConnectError: still broken"
    ]
    view = restarter.view("c", fleet.configs["c"], {("c", 0): "FAILED", ("c", 1): "RUNNING"})
    assert view == {
        ("c", 0): {
            "count": 2,
            "max_restarts": 2,
            "last_restart": "1970-01-01T00:02:00.000Z",
            "next_restart": None,
            "exhausted": True,
        }
    }


def test_each_failure_is_answered_once(statuses):
    fleet, restarter = healer(statuses)
    fleet.restart_task = lambda name, index: fleet.restarts.append((name, index))  # a restart still starting
    fail(statuses)
    for minute in (0, 1, 5, 60):  # the status says RESTARTING until the new instance reports
        restarter.step(minute * MINUTE)
    assert fleet.restarts == [("c", 0)]
    assert statuses.task("c", 0).state is State.RESTARTING


def test_only_the_owner_answers_only_failures_it_wrote(statuses):
    fleet, restarter = healer(statuses)
    fail(statuses, task=0, worker=OTHER)  # its old owner's report: the new owner starts it anyway
    fail(statuses, task=1)
    fleet.owned.discard(("c", 1))  # moved away meanwhile
    restarter.step(0)
    assert fleet.restarts == []


def test_a_task_that_moved_keeps_its_count(statuses):
    ledger = MemoryRestartLedger()
    ledger.put(("c", 0), RestartRecord(2, 0, OTHER, "ConnectError: boom"))  # its earlier owner's two restarts
    fleet, restarter = healer(statuses, ledger)
    fail(statuses)  # failed again here
    assert restarter.step(5 * MINUTE) == 1 * MINUTE  # the third waits 6 minutes after the second
    restarter.step(6 * MINUTE)
    assert fleet.restarts == [("c", 0)] and ledger.get(("c", 0)).count == 3


def test_a_task_that_moved_resets_only_after_a_full_healthy_run_on_its_new_worker(statuses):
    ledger = MemoryRestartLedger()
    ledger.put(("c", 0), RestartRecord(1, 0, OTHER, "ConnectError: boom"))  # its last restart, elsewhere
    _, restarter = healer(statuses, ledger)
    restarter.step(10 * MINUTE)  # started here (the move) and RUNNING: seen healthy from now on
    restarter.step(12 * MINUTE)
    assert ledger.get(("c", 0)) is not None  # long since its last restart, but not 2 minutes healthy here
    fail(statuses)
    restarter.step(12 * MINUTE + 1)
    assert ledger.get(("c", 0)).count == 2  # the count went on: this is its second restart
    restarter.step(12 * MINUTE + 2)  # RUNNING again
    restarter.step(18 * MINUTE + 2)
    assert ledger.get(("c", 0)) is not None
    restarter.step(18 * MINUTE + 3)
    assert ledger.get(("c", 0)) is None  # 6 minutes healthy after its second restart


def test_a_failed_connector_is_restarted_and_nothing_of_a_connector_that_does_not_ask(statuses):
    fleet, restarter = healer(statuses)
    statuses.put_connector("c", InstanceStatus(State.FAILED, ME, "ConnectError: start failed"))
    restarter.step(0)
    assert fleet.restarts == [("c", None)] and statuses.connector("c").state is State.RUNNING
    fleet.configs["c"][ENABLED] = "false"
    fail(statuses)
    restarter.step(60 * MINUTE)
    assert fleet.restarts == [("c", None)]


def test_the_unit_scales_every_delay(statuses):
    _, restarter = healer(statuses, **{BACKOFF_UNIT_MS: "100"})
    fail(statuses)
    restarter.step(0)
    fail(statuses)
    assert restarter.step(0) == 200  # 2 units of 100 ms


def test_the_leader_forgets_the_counts_of_deleted_connectors(statuses):
    ledger = MemoryRestartLedger()
    ledger.put(("gone", 0), RestartRecord(1, 0, ME, "x"))
    fleet, restarter = healer(statuses, ledger)
    fleet.leader = False
    restarter.step(0)
    assert ledger.get(("gone", 0)) is not None
    fleet.leader = True
    restarter.step(0)
    assert ledger.records() == {}


def test_settings_are_checked_and_off_by_default():
    assert policy_of({"connector.class": "X"}) is None
    assert policy_of({ENABLED: "TRUE"}) == RestartPolicy(None)
    assert policy_of({ENABLED: "true", MAX_RESTARTS: "7", BACKOFF_UNIT_MS: "250"}) == RestartPolicy(7, 250)
    assert problems({ENABLED: "yes", MAX_RESTARTS: "-2", BACKOFF_UNIT_MS: "soon"}) == {
        ENABLED: f"Invalid value yes for configuration {ENABLED}: Expected value to be either true or false",
        MAX_RESTARTS: f"Invalid value -2 for configuration {MAX_RESTARTS}: Value must be at least -1",
        BACKOFF_UNIT_MS: f"Invalid value soon for configuration {BACKOFF_UNIT_MS}: Not a number of type INT",
    }


def test_records_round_trip_and_unreadable_ones_are_skipped(caplog):
    record = RestartRecord(3, 1_700_000_000_000, ME, "ConnectError: boom")
    for instance in (("my-conn", None), ("my-conn", 12)):
        assert parse_record_key(record_key(instance)) == instance
    assert decode_record("k", encode_record(record)) == record
    assert decode_record("k", b'{"count": 1, "last_restart": 5, "extra": true}') == RestartRecord(1, 5, "", "")
    assert decode_record("k", b'{"count": "x"}') is None and decode_record("k", b"not json") is None
    assert parse_record_key("auto-restart-task-c-x") is None
