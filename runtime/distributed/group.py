"""Membership of the worker group on the broker's group coordinator (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup), as Apache Kafka Connect's workers do.

librdkafka does not expose custom group protocols, so this uses kafka-python's `BaseCoordinator`, which
is built to be extended: protocol type `connect`, the reference's metadata and assignment formats
(connect_protocol.py). Besides its extension points (`_perform_assignment`, `_on_join_complete_async`), the
coordinator below overrides two response handlers of kafka-python 3.0's (to time membership from the
broker's answers) and reads its `_generation`: kafka-python is pinned in pyproject.toml to the version
these were written and tested against. The network (`NetworkSelector`, `KafkaConnectionManager`) is built
here and handed to kafka-python, so nothing reaches into its client's private members. kafka-python runs the network on an IO thread of its own, with the heartbeats;
a join thread joins and rejoins when the group asks; the herder's tick thread calls `poll()` every tick,
and if it stops calling for longer than the rebalance timeout the IO thread leaves the group (the
reference's herder-thread stall rule).

What the worker decides (which units go where, what to do with an assignment) stays with the caller
through `GroupListener`; this module only speaks the protocol.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kafka import errors as kafka_errors
from kafka.coordinator.base import BaseCoordinator
from kafka.net.compat import KafkaNetClient
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector

from .connect_protocol import (
    PROTOCOL_TYPE,
    PROTOCOL_VERSIONS,
    ConnectAssignment,
    ProtocolError,
    WorkerState,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
)
from .stall import StallWatch

log = logging.getLogger(__name__)

# The protocols this worker offers, preferred first: "compatible" is the reference's incremental
# cooperative protocol; "sessioned" has the same formats (version 2) and adds signed internal requests,
# which this worker does not check. It is offered second so a group that last ran reference workers
# can be joined: Tansu keeps an empty group's protocol and refuses members that do not offer it
# (InconsistentGroupProtocol); Apache Kafka accepts any protocol in an empty group.
PROTOCOLS = ("compatible", "sessioned")


class GroupListener(Protocol):
    """What the worker supplies to the group protocol. Called on kafka-python's IO thread: keep it short."""

    def worker_state(self) -> WorkerState: ...

    def perform_assignment(
        self, generation: int, leader_id: str, members: dict[str, WorkerState]
    ) -> dict[str, ConnectAssignment]: ...

    def on_joined(self, generation: int, member_id: str, assignment: ConnectAssignment | None) -> None: ...


def kafka_python_settings(client_config: Mapping[str, str]) -> dict[str, Any]:
    """kafka-python's names for the worker's Kafka client settings (librdkafka's names, from
    KafkaStoreSettings): the group client reaches the same brokers with the same credentials."""
    settings: dict[str, Any] = {
        "bootstrap_servers": client_config["bootstrap.servers"].split(","),
        "client_id": f"{client_config.get('group.id', 'connect')}-group",
    }
    names = {
        "security.protocol": "security_protocol",
        "sasl.username": "sasl_plain_username",
        "sasl.password": "sasl_plain_password",
        "ssl.ca.location": "ssl_cafile",
        "ssl.certificate.location": "ssl_certfile",
        "ssl.key.location": "ssl_keyfile",
        "ssl.key.password": "ssl_password",
    }
    for ours, theirs in names.items():
        if client_config.get(ours):
            settings[theirs] = client_config[ours]
    mechanism = client_config.get("sasl.mechanism") or client_config.get("sasl.mechanisms")
    if mechanism:
        settings["sasl_mechanism"] = mechanism
    if str(client_config.get("ssl.endpoint.identification.algorithm", "https")).strip().lower() == "none":
        settings["ssl_check_hostname"] = False
    if "security_protocol" in settings:
        settings["security_protocol"] = str(settings["security_protocol"]).upper()
    return settings


class WorkerCoordinator(BaseCoordinator):
    """kafka-python's group member, speaking Kafka Connect's protocol."""

    def __init__(
        self,
        client: KafkaNetClient,
        listener: GroupListener,
        stalled: Callable[[], bool] = lambda: False,
        **configs: Any,
    ) -> None:
        super().__init__(client, **configs)
        self.listener = listener
        # the stall watch's view (stall.py): this process has not run for longer than a session just now
        self._stalled = stalled
        self._stall_noticed_at: float | None = None  # time.monotonic() when the watch last counted it out
        # Membership is measured from the last answer that proves it (a heartbeat answered, a join
        # completed), not from kafka-python's session clock, which restarts whenever the coordinator is
        # looked up again: also right after a freeze, before any heartbeat has told it it was removed.
        self.alive_at = time.monotonic()
        # Out of the group since kafka-python last reset the generation, until a join completes: this
        # also covers a rejoin whose JoinGroup is answered (a new generation id) but not yet its SyncGroup.
        self.lost = True

    def reset_generation(self, *args: Any, **kwargs: Any) -> None:
        self.lost = True
        super().reset_generation(*args, **kwargs)

    def mark_lost(self) -> None:
        """Count this member out of the group until its next join completes, and rejoin (see stall.py)."""
        self._stall_noticed_at = time.monotonic()
        self.lost = True
        self.request_rejoin()

    def _answer_predates_stall(self, send_time: float) -> bool:
        """The request was sent before this process stopped for longer than its session (the watch said so
        since, or has not run yet to say so): the group has gone on without this member."""
        noticed = self._stall_noticed_at
        return self._stalled() or (noticed is not None and send_time < noticed)

    def _refuse_stale_answer(self, request: str, error_code: int, send_time: float) -> None:
        """Apache Kafka removes a member whose session expired and answers its JoinGroup or SyncGroup
        UNKNOWN_MEMBER_ID. Tansu answered ones this process sent before it was frozen past its session, even
        naming it the leader of a generation another member then led too; taken up, this stale leader assigned
        work on what it knew before the freeze. Such an answer is refused as Apache Kafka's would be: the
        member joins again, as a new one."""
        if error_code != 0 or not self._answer_predates_stall(send_time):
            return
        log.warning(
            "Discarding the answer to a %s sent before this worker stopped for longer than its session; "
            "joining group %s again",
            request,
            self.group_id,
        )
        self.reset_generation()
        self.request_rejoin()
        raise kafka_errors.UnknownMemberIdError(self.group_id)

    def _process_join_group_response(self, response: Any, send_time: float) -> Any:
        self._refuse_stale_answer("JoinGroup", response.error_code, send_time)
        return super()._process_join_group_response(response, send_time)

    def _handle_heartbeat_response(self, response: Any, send_time: float) -> Any:
        if kafka_errors.for_code(response.error_code) in (kafka_errors.NoError, kafka_errors.RebalanceInProgressError):
            # the coordinator knew this member when it answered: at least when the request was sent, which is
            # all an answer read after a freeze (to a heartbeat sent before it) proves
            self.alive_at = max(self.alive_at, send_time)
        return super()._handle_heartbeat_response(response, send_time)

    def _process_sync_group_response(self, response: Any, send_time: float) -> Any:
        self._refuse_stale_answer("SyncGroup", response.error_code, send_time)
        assignment = super()._process_sync_group_response(response, send_time)  # raises on errors
        self.alive_at = time.monotonic()  # before the member turns stable: a long join is no expired session
        return assignment

    def protocol_type(self) -> str:
        return PROTOCOL_TYPE

    def group_protocols(self) -> list[tuple[str, bytes]]:
        state = self.listener.worker_state()
        return [(name, encode_metadata(state, PROTOCOL_VERSIONS[name])) for name in PROTOCOLS]

    def _perform_assignment(self, leader_id: str, protocol: str, members: list[Any]) -> dict[str, bytes]:
        states: dict[str, WorkerState] = {}
        for member in members:
            try:
                states[member.member_id] = decode_metadata(member.metadata)
            except ProtocolError as exc:
                # a member we cannot read gets no work (the reference would fail the whole rebalance)
                log.error("Ignoring group member %s: %s", member.member_id, exc)
        assignments = self.listener.perform_assignment(self._generation.generation_id, leader_id, states)
        version = PROTOCOL_VERSIONS.get(protocol, 1)
        return {
            member.member_id: encode_assignment(_with_version(assignments.get(member.member_id), version, leader_id))
            for member in members
        }

    async def _on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, member_assignment_bytes: bytes
    ) -> None:
        try:
            assignment = decode_assignment(member_assignment_bytes)
        except ProtocolError as exc:
            log.error("Unreadable assignment for generation %d: %s; rejoining", generation, exc)
            self.request_rejoin()
            return
        self.listener.on_joined(generation, member_id, assignment)
        self.lost = False  # after on_joined: the listener sees either this or the join it must take up


def _with_version(assignment: ConnectAssignment | None, version: int, leader_id: str) -> ConnectAssignment:
    if assignment is None:
        return ConnectAssignment(leader_id, "", -1, version=version)
    if assignment.version == version:
        return assignment
    return ConnectAssignment(
        assignment.leader,
        assignment.leader_url,
        assignment.config_offset,
        assignment.connectors,
        assignment.tasks,
        assignment.revoked_connectors,
        assignment.revoked_tasks,
        assignment.delay_ms,
        assignment.error,
        version,
    )


# JoinGroup answers no retry cures (kafka-python raises them as fatal; the reference's worker exits on them):
# the worker's settings, or whatever else uses its group.id, must change first
FATAL_JOIN_ERRORS: tuple[type[Exception], ...] = (
    kafka_errors.InconsistentGroupProtocolError,
    kafka_errors.InvalidSessionTimeoutError,
    kafka_errors.InvalidGroupIdError,
    kafka_errors.GroupAuthorizationFailedError,
    kafka_errors.GroupMaxSizeReachedError,
    kafka_errors.FencedInstanceIdError,
)
FATAL_RETRY_S = 5.0  # a worker refused so tries again this often, in case what refused it changes


def explain_join_refusal(group_id: str, exc: Exception, session_timeout_ms: int) -> str:
    """One line for a person: which answer the coordinator gave, and what to change."""
    why = {
        kafka_errors.InconsistentGroupProtocolError: (
            f"the group's members speak another protocol: a consumer group or another application uses "
            f"group.id {group_id}; give this Connect cluster a group.id of its own"
        ),
        kafka_errors.InvalidSessionTimeoutError: (
            f"session.timeout.ms={session_timeout_ms} is outside the broker's group.min.session.timeout.ms to "
            "group.max.session.timeout.ms (6000 to 1800000 by default)"
        ),
        kafka_errors.GroupAuthorizationFailedError: (
            f"the worker's principal is not authorized for group {group_id} (it needs READ on the group)"
        ),
        kafka_errors.GroupMaxSizeReachedError: "the group has the broker's group.max.size members already",
    }.get(type(exc), str(exc))
    answer = getattr(exc, "message", type(exc).__name__)
    return f"This worker cannot join group {group_id}: the group coordinator answered {answer}: {why}"


class WorkerGroup:
    """This worker's membership: join, stay, rejoin when asked, leave."""

    def __init__(
        self,
        client_config: Mapping[str, str],
        group_id: str,
        listener: GroupListener,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        rebalance_timeout_ms: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock` is the one the stall watch reads (stall.py)."""
        self._settings = kafka_python_settings(client_config)
        self._clock = clock
        self.group_id = group_id
        self._listener = listener
        self._timeouts = {
            "session_timeout_ms": session_timeout_ms,
            "heartbeat_interval_ms": heartbeat_interval_ms,
            "max_poll_interval_ms": rebalance_timeout_ms,
        }
        self._net: NetworkSelector | None = None
        self._manager: KafkaConnectionManager | None = None
        self.coordinator: WorkerCoordinator | None = None
        self._join_thread: threading.Thread | None = None
        self._watch: StallWatch | None = None
        self._closed = threading.Event()
        self._rejoin = threading.Event()
        self._refusal: str | None = None  # why the coordinator refused the last join, when no retry cures it

    def refusal(self) -> str | None:
        """Why the group coordinator refused this worker's last join for good (FATAL_JOIN_ERRORS), else None."""
        return self._refusal

    def start(self, timeout_s: float) -> None:
        net = NetworkSelector(**self._settings)
        manager = KafkaConnectionManager(net, **self._settings)
        client = KafkaNetClient(net=net, manager=manager, **self._settings)
        net.start()  # the IO thread: heartbeats go on while the tick thread is busy
        try:
            manager.bootstrap(int(timeout_s * 1000))
        except Exception:
            net.stop(1000)
            raise
        api_version = manager.broker_version
        self._net, self._manager = net, manager
        watch = self._watch = StallWatch(self._timeouts["session_timeout_ms"] / 1000, self._clock)
        self.coordinator = WorkerCoordinator(
            client,
            self._listener,
            stalled=watch.overdue,
            group_id=self.group_id,
            api_version=api_version,
            **self._timeouts,
        )
        self._join_thread = threading.Thread(target=self._join_loop, name="herder-group-join", daemon=True)
        self._join_thread.start()
        threading.Thread(target=self._watch_stalls, args=(watch,), name="herder-group-stall-watch", daemon=True).start()

    def _join_loop(self) -> None:
        """Join whenever the group asks for it. A thread of its own because a join waits on the other
        members (seconds; up to the rebalance timeout), and because kafka-python drops a join that
        completes between two bounded `ensure_active_group` calls and starts another one."""
        coordinator = self.coordinator
        assert coordinator is not None
        while not self._closed.is_set():
            if not coordinator.need_rejoin():
                self._rejoin.wait(0.05)
                self._rejoin.clear()
                continue
            try:
                coordinator.ensure_active_group(timeout_ms=None)
                self._refusal = None
            except FATAL_JOIN_ERRORS as exc:
                self._refusal = explain_join_refusal(self.group_id, exc, self._timeouts["session_timeout_ms"])
                log.error("%s; trying again in %.0fs", self._refusal, FATAL_RETRY_S)
                self._closed.wait(FATAL_RETRY_S)
            except Exception as exc:  # noqa: BLE001 - e.g. the coordinator moved; join again
                if self._closed.is_set():
                    return
                log.warning("Joining group %s failed: %s; retrying", self.group_id, exc)
                self._closed.wait(0.5)

    def _watch_stalls(self, watch: StallWatch) -> None:
        """Every heartbeat interval: has this process been stopped for longer than a session (stall.py)?"""
        interval_s = min(self._timeouts["heartbeat_interval_ms"], self._timeouts["session_timeout_ms"] / 4) / 1000
        while not self._closed.wait(interval_s):
            self._check_stall(watch)

    def _check_stall(self, watch: StallWatch) -> bool:
        """One look of `watch`: after a stall past the session timeout, the member counts itself out of the
        group (fenced) until its next join completes, and rejoins. Whether it stalled."""
        gap = watch.check()
        coordinator = self.coordinator
        if gap is None or coordinator is None:
            return False
        log.warning(
            "This worker did not run for %.1fs, longer than its session timeout: the group may have moved its "
            "work meanwhile; it stops what it runs and rejoins group %s",
            gap,
            self.group_id,
        )
        coordinator.mark_lost()
        self._rejoin.set()
        return True

    def poll(self) -> None:
        """Tell the heartbeat loop the tick thread lives: if it stops calling for longer than the
        rebalance timeout, kafka-python leaves the group (its work then goes to others)."""
        coordinator = self.coordinator
        assert coordinator is not None
        try:
            coordinator.poll_heartbeat()
        except kafka_errors.KafkaError as exc:
            log.warning("Group %s heartbeat: %s", self.group_id, exc)

    def generation(self) -> tuple[int, str] | None:
        """(generation id, member id) while this worker is a stable member of the group."""
        coordinator = self.coordinator
        if coordinator is None:
            return None
        generation = coordinator.generation_if_stable()
        if generation is None or generation.generation_id < 0:
            return None
        return generation.generation_id, generation.member_id

    def protocol(self) -> str | None:
        """The protocol the group runs ("compatible" or "sessioned") while this worker is a stable member."""
        coordinator = self.coordinator
        generation = coordinator.generation_if_stable() if coordinator is not None else None
        return None if generation is None else generation.protocol

    def rebalancing(self) -> bool:
        coordinator = self.coordinator
        return coordinator is None or not coordinator.stable() or coordinator.need_rejoin()

    def session_expired(self) -> bool:
        """No heartbeat has succeeded for a session timeout while stable: the coordinator may have
        removed this worker (a frozen process, a broker out of reach), so its work may run elsewhere."""
        coordinator = self.coordinator
        if coordinator is None or not coordinator.stable():
            return False
        return time.monotonic() - coordinator.alive_at > self._timeouts["session_timeout_ms"] / 1000

    def fenced(self) -> bool:
        """Out of the group: no generation, or rejoining after losing it (until that join completes), or,
        while stable, no heartbeat answered for a session timeout, or the process just ran again after a stop
        longer than that (stall.py)."""
        coordinator, watch = self.coordinator, self._watch
        return (
            coordinator is None
            or coordinator.lost
            or coordinator.group_metadata().generation_id < 0
            or self.session_expired()
            or (watch is not None and watch.overdue())
        )

    def request_rejoin(self) -> None:
        if self.coordinator is not None:
            self.coordinator.request_rejoin()
            self._rejoin.set()

    def close(self, timeout_s: float = 5.0, settle_s: float | None = None) -> None:
        """Leave the group (the others rebalance at once) and stop the IO thread.

        A rebalance under way is let finish first (`settle_s` at most, default `timeout_s`): a LeaveGroup
        from a member in the middle of a join is where brokers differ (a full-cluster restart under load
        once left Tansu with a group whose SyncGroups all answered REBALANCE_IN_PROGRESS, and nobody could
        join it again). If the rebalance has still not settled, this worker goes without a LeaveGroup and
        the coordinator drops it when its session times out, as it drops a crashed worker; the others then
        wait one session timeout longer, which every broker handles. After a completed join, leaving is
        plain on every broker."""
        coordinator, net, manager = self.coordinator, self._net, self._manager
        settled = True
        if coordinator is not None:
            deadline = time.monotonic() + (timeout_s if settle_s is None else settle_s)
            while (
                (not coordinator.stable() or coordinator.need_rejoin())
                and time.monotonic() < deadline
                and coordinator.group_metadata().generation_id >= 0
            ):
                time.sleep(0.05)
            settled = coordinator.stable() and not coordinator.need_rejoin()
        self._closed.set()
        if coordinator is not None:
            try:
                if settled or self._refusal is not None:
                    # a refused member has no member id: closing only ends its heartbeat loop, no LeaveGroup
                    coordinator.close(timeout_ms=int(timeout_s * 1000))
                else:
                    # stopping the network below ends the heartbeats too (they run on its IO thread)
                    log.info(
                        "Leaving group %s without a LeaveGroup: a rebalance is still under way; the "
                        "coordinator removes this worker when its session times out",
                        self.group_id,
                    )
            except Exception as exc:  # noqa: BLE001 - leaving is best effort: the session timeout removes us
                log.warning("Could not leave group %s: %s", self.group_id, exc)
        if manager is not None:
            manager.close()  # its connections, and the metadata refresh loop (as kafka-python's client closes)
        if net is not None:
            try:
                net.stop(int(timeout_s * 1000))
            except Exception as exc:  # noqa: BLE001 - stopping is best effort: the session timeout removes us
                log.warning("Could not stop the group client: %s", exc)
        if self._join_thread is not None:
            self._join_thread.join(timeout_s)
