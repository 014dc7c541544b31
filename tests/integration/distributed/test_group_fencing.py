"""A group member (runtime/distributed/group.py) on the real broker whose network thread stalls past the
session timeout, as in a worker frozen with SIGSTOP: from the moment its session expires it is fenced,
and it stays fenced until it has completed a join of a new generation.

This failed before: right after the stall kafka-python looks the coordinator up again, which restarts
its own session clock, so the member looked like a member of the generation it had lost until its next
heartbeat was answered; and while its rejoin's JoinGroup was answered but not yet its SyncGroup, it had
a generation id again. A resumed worker then restarted the work it held in the lost generation (which
others ran by then) and later wrote UNASSIGNED over the new owners' statuses (issue 10). An answer read
after the stall to a heartbeat sent before it must not end the fence either."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from kafka.errors import UnknownMemberIdError
from kafka.protocol.consumer.group import HeartbeatResponse, JoinGroupResponse, SyncGroupResponse

from runtime.distributed.connect_protocol import ConnectAssignment, WorkerState
from runtime.distributed.group import WorkerGroup
from tests.support.broker import unique
from tests.support.worker import wait_for

pytestmark = pytest.mark.integration

SESSION_TIMEOUT_MS = 4000  # as tests/support/cluster.py
HEARTBEAT_MS = 500
REBALANCE_TIMEOUT_MS = 20000


class EmptyWorker:
    """The worker's side of the group protocol for a worker that holds nothing: it records the
    generations it was told it joined."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.joined: list[int] = []

    def worker_state(self) -> WorkerState:
        return WorkerState(self.url, -1)

    def perform_assignment(
        self, generation: int, leader_id: str, members: dict[str, WorkerState]
    ) -> dict[str, ConnectAssignment]:
        return {member: ConnectAssignment(leader_id, self.url, -1) for member in members}

    def on_joined(self, generation: int, member_id: str, assignment: ConnectAssignment | None) -> None:
        self.joined.append(generation)


class StoppableClock:
    """time.monotonic, plus what a test adds: the clock a stopped process reads when it runs again."""

    def __init__(self) -> None:
        self.stopped_s = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.stopped_s


@pytest.fixture
def clocks() -> dict[str, StoppableClock]:
    return {"a": StoppableClock(), "b": StoppableClock()}


@pytest.fixture
def members(
    bootstrap_servers: str, clocks: dict[str, StoppableClock]
) -> Iterator[list[tuple[WorkerGroup, EmptyWorker]]]:
    group_id = unique("fencing")
    made = []
    closing = threading.Event()

    def tick(group: WorkerGroup) -> None:  # as the herder's tick thread: it lives, so the member stays
        while not closing.wait(0.1):
            group.poll()

    for name in ("a", "b"):
        worker = EmptyWorker(f"http://{name}:8083")
        group = WorkerGroup(
            {"bootstrap.servers": bootstrap_servers, "group.id": group_id},
            group_id,
            worker,
            SESSION_TIMEOUT_MS,
            HEARTBEAT_MS,
            REBALANCE_TIMEOUT_MS,
            clocks[name],
        )
        group.start(30)
        threading.Thread(target=tick, args=(group,), name=f"tick-{name}", daemon=True).start()
        made.append((group, worker))
    yield made
    closing.set()
    for group, _ in made:
        group.close(1)


def stable_generation(group: WorkerGroup) -> int | None:
    current = group.generation()
    return None if current is None or group.fenced() else current[0]


def test_a_member_stalled_past_its_session_stays_fenced_until_it_has_joined_again(
    members: list[tuple[WorkerGroup, EmptyWorker]],
) -> None:
    (a, a_worker), (b, _) = members

    def one_generation() -> tuple[int] | None:  # a tuple: generation 0 is a generation
        generation = stable_generation(a)
        return (generation,) if generation is not None and generation == stable_generation(b) else None

    (before,) = wait_for(one_generation, 60, 0.05, "both members in one generation")
    unfenced: list[tuple[int, list[int]]] = []  # (generation id, generations a was told it joined)
    done, release = threading.Event(), threading.Event()

    def sample() -> None:
        while not done.wait(0.002):
            if not a.fenced():
                unfenced.append((a.coordinator.group_metadata().generation_id, list(a_worker.joined)))

    def stall() -> None:  # runs on a's network thread: no heartbeat, no request, until released
        release.wait()

    assert a._net is not None
    stalled_at = time.monotonic()
    a._net.call_soon_threadsafe(stall)
    sampler = threading.Thread(target=sample, name="fencing-sampler", daemon=True)
    try:
        # the coordinator removes a once its session expires; b goes on alone in a newer generation
        wait_for(lambda: (stable_generation(b) or -1) > before, 60, 0.05, "b in a generation without a")
        assert a.fenced()
        # the answer to a heartbeat sent just before the stall, read after it, proves nothing about now
        a.coordinator._handle_heartbeat_response(HeartbeatResponse(error_code=0), stalled_at)
        assert a.fenced()
        sampler.start()
    finally:
        release.set()
    try:
        rejoined = wait_for(
            lambda: (stable_generation(a) or -1) > before and stable_generation(a), 60, 0.05, "a back in the group"
        )
    finally:
        done.set()
        if sampler.is_alive():
            sampler.join(5)
    # never out of the fence in the generation it lost, nor in one whose join it has not completed
    stale = [
        (generation, joined) for generation, joined in unfenced if generation <= before or generation not in joined
    ]
    assert not stale, (
        f"a looked like a member of generation {stale[0][0]} (joined {stale[0][1]}), "
        f"having held {before} before its stall and rejoined in {rejoined}"
    )


def test_a_member_stopped_past_its_session_during_a_rebalance_counts_itself_out_until_it_has_joined_again(
    members: list[tuple[WorkerGroup, EmptyWorker]], clocks: dict[str, StoppableClock]
) -> None:
    """Issue 25's frozen follower: stopped between its JoinGroup and its SyncGroup, no heartbeat is due, and
    Tansu answers the late SyncGroup with REBALANCE_IN_PROGRESS keeping its member id; the worker rejoined
    still holding the tasks the group had moved meanwhile. Once it runs again it must count itself out of
    the group (its tasks are then stopped: local_work.py) until a join completes."""
    (a, a_worker), (b, _) = members
    (before,) = wait_for(
        lambda: (g,) if (g := stable_generation(a)) is not None and g == stable_generation(b) else None,
        60,
        0.05,
        "both members in one generation",
    )
    joins = len(a_worker.joined)
    sent_before_stop = time.monotonic()
    a.request_rejoin()  # a's JoinGroup goes out: a is stopped before the join completes
    assert a.rebalancing() and not a.fenced()
    clocks["a"].stopped_s += SESSION_TIMEOUT_MS / 1000 + 1  # what a's clock shows after such a stop
    wait_for(a.fenced, 10, 0.01, "a counting itself out of the group")
    # Answers read after the stop to requests sent before it are not taken up: Tansu once answered such a
    # JoinGroup naming the woken member leader of a generation another member led too, and it assigned work
    # from what it knew before its stop (issue 25's duplicate run). Apache Kafka answers UNKNOWN_MEMBER_ID.
    coordinator = a.coordinator
    assert coordinator is not None
    stale_join = JoinGroupResponse(
        error_code=0,
        generation_id=before + 1,
        protocol_type="connect",
        protocol_name="compatible",
        leader="stale-member",
        member_id="stale-member",
        members=[],
    )
    with pytest.raises(UnknownMemberIdError):
        coordinator._process_join_group_response(stale_join, sent_before_stop)
    with pytest.raises(UnknownMemberIdError):
        coordinator._process_sync_group_response(SyncGroupResponse(error_code=0, assignment=b""), sent_before_stop)
    assert a.fenced()
    # back once a join has completed since (on Tansu, in the same generation when nobody else moved)
    wait_for(lambda: len(a_worker.joined) > joins and stable_generation(a) is not None, 60, 0.05, "a back in the group")
    rejoined = stable_generation(a)
    assert rejoined is not None and rejoined >= before
