"""Self-healing: every worker restarts the FAILED connectors and tasks it owns whose connector asks for it,
with Strimzi's backoff (control/restart_backoff.py), and counts, logs and shows each restart.

Each instance's count lives in a restart record (storage/restart_records.py: in memory standalone, in the
status topic distributed), written by its owner before each restart, so a task that moves keeps its count.
Exactly once per failure:
- only the owner acts, and only on a FAILED status it wrote itself: a worker given a task that failed
  elsewhere starts it anyway (its assignment does), and counts on from the record if it fails again;
- before restarting, the owner marks the failure answered (status RESTARTING, as KIP-745's restarts do):
  a FAILED status seen afterwards is a new failure, never the one just answered.
The loop wakes at the next restart due or every POLL_S to look for new failures; `step` is the loop's body
and takes the time, so tests drive it with a clock of their own.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Protocol

from ..control import restart_backoff
from ..control.restart_backoff import RestartPolicy
from ..storage.base import InstanceStatus, StatusStore
from ..storage.restart_records import Instance, RestartLedger, RestartRecord
from ..storage.states import State

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often new failures are looked for (in-memory reads of this worker's statuses)
HEALTHY = (State.RUNNING, State.PAUSED)


class Fleet(Protocol):
    """What self-healing asks of the herder (both herders offer it)."""

    def connector_names(self) -> list[str]: ...

    def connector_config(self, name: str) -> dict[str, str]: ...

    def owns(self, name: str, task: int | None) -> bool:
        """Whether this worker runs the connector (task None) or the task now."""
        ...

    def is_leader(self) -> bool: ...

    def restart_connector(self, name: str) -> None: ...

    def restart_task(self, name: str, index: int) -> None: ...


def label(instance: Instance) -> str:
    name, task = instance
    return f"connector {name}" if task is None else f"task {name}-{task}"


def failure_of(trace: str | None) -> str:
    """The line of a trace that names the failure: a Python traceback's last, a Java stack trace's first."""
    lines = [line.strip() for line in (trace or "").strip().splitlines() if line.strip()]
    if not lines:
        return "no trace"
    return (lines[-1] if lines[0].startswith("Traceback (most recent call last)") else lines[0])[:500]


def iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class AutoRestarter:
    def __init__(
        self,
        fleet: Fleet,
        statuses: StatusStore,
        ledger: RestartLedger,
        worker_id: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`statuses` is the store this worker's connectors and tasks write through; `clock` gives seconds
        since the epoch (restart times are shared between workers)."""
        self.fleet = fleet
        self.statuses = statuses
        self.ledger = ledger
        self.worker_id = worker_id
        self.clock = clock
        self.restarted: Counter[Instance] = Counter()  # restarts this worker made (for /metrics)
        self._given_up: set[Instance] = set()  # exhausted instances already logged
        self._healthy_since: dict[Instance, int] = {}  # when this worker first saw each healthy instance healthy
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- the loop -------------------------------------------------------------------------------

    def start(self) -> AutoRestarter:
        self._thread = threading.Thread(target=self._run, name="auto-restart", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def _run(self) -> None:
        wait_s = 0.0
        while not self._stop.wait(wait_s):
            try:
                due_in_ms = self.step(self.now_ms())
            except Exception:  # self-healing must never stop for one bad round
                log.exception("Automatic restarts: a round failed; trying again")
                due_in_ms = None
            wait_s = POLL_S if due_in_ms is None else min(POLL_S, due_in_ms / 1000)

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def step(self, now_ms: int) -> int | None:
        """One round at `now_ms`: restart what is due, reset what ran long enough, forget deleted connectors'
        records (the leader). Returns the milliseconds until the next restart due, None if none is."""
        policies: dict[str, RestartPolicy | None] = {}
        next_due: int | None = None
        seen = set()
        for instance, status in self._own_statuses():
            seen.add(instance)
            if instance[0] not in policies:
                policies[instance[0]] = self._policy(instance[0])
            policy = policies[instance[0]]
            if policy is None or not self.fleet.owns(*instance):
                continue
            record = self.ledger.get(instance)
            if status.state is not State.FAILED:
                self._given_up.discard(instance)
                self._maybe_reset(instance, status, record, policy, now_ms)
                continue
            self._healthy_since.pop(instance, None)
            count = record.count if record else 0
            if policy.exhausted(count):
                self._give_up(instance, status, count)
                continue
            due = policy.due_ms(count, record.last_restart_ms if record else None)
            if due is not None and due > now_ms:
                next_due = due - now_ms if next_due is None else min(next_due, due - now_ms)
                continue
            self._restart(instance, status, count + 1, policy, now_ms)
        self._healthy_since = {i: t for i, t in self._healthy_since.items() if i in seen}
        self._given_up &= seen
        if self.fleet.is_leader():
            self._forget_deleted()
        return next_due

    def _maybe_reset(
        self,
        instance: Instance,
        status: InstanceStatus,
        record: RestartRecord | None,
        policy: RestartPolicy,
        now_ms: int,
    ) -> None:
        """Strimzi's reset, on how long the instance has run healthy here: since its last restart, or since this
        worker first saw it healthy (a task that moved has run only that long, whenever its last restart was)."""
        if status.state not in HEALTHY:
            self._healthy_since.pop(instance, None)
            return
        since = self._healthy_since.setdefault(instance, now_ms)
        if record is not None and policy.resets(record.count, max(record.last_restart_ms, since), now_ms):
            self.ledger.put(instance, None)
            log.info("Auto-restart count of %s reset: it has run long enough since its last restart", label(instance))

    def _policy(self, name: str) -> RestartPolicy | None:
        try:
            return restart_backoff.policy_of(self.fleet.connector_config(name))
        except Exception:  # noqa: BLE001 - deleted meanwhile
            return None

    def _own_statuses(self) -> Iterator[tuple[Instance, InstanceStatus]]:
        """The statuses this worker wrote (connector first, then tasks): only their writer may answer them."""
        connectors, tasks = self.statuses.all_statuses()
        for name, status in sorted(connectors.items()):
            if status.worker_id == self.worker_id:
                yield (name, None), status
        for (name, index), status in sorted(tasks.items()):
            if status.worker_id == self.worker_id:
                yield (name, index), status

    def _restart(
        self, instance: Instance, status: InstanceStatus, count: int, policy: RestartPolicy, now_ms: int
    ) -> None:
        failure = failure_of(status.trace)
        # the count first: a worker dying now leaves the next owner with a count never lower than the restarts
        self.ledger.put(instance, RestartRecord(count, now_ms, self.worker_id, failure))
        name, task = instance
        restarting = InstanceStatus(State.RESTARTING, self.worker_id)
        if task is None:
            self.statuses.put_connector(name, restarting)
        else:
            self.statuses.put_task(name, task, restarting)
        self.restarted[instance] += 1
        limit = "" if policy.max_restarts is None else f" of {policy.max_restarts}"
        log.info(
            "Auto-restart %d%s of %s (backoff %d ms after the previous one), answering its failure: %s",
            count,
            limit,
            label(instance),
            policy.backoff_ms(count - 1),
            failure,
        )
        try:
            if task is None:
                self.fleet.restart_connector(name)
            else:
                self.fleet.restart_task(name, task)
        except Exception as exc:  # noqa: BLE001 - e.g. it moved to another worker meanwhile, which starts it
            log.warning("Auto-restart %d of %s did not go through: %s", count, label(instance), exc)

    def _give_up(self, instance: Instance, status: InstanceStatus, count: int) -> None:
        if instance in self._given_up:
            return
        self._given_up.add(instance)
        log.warning(
            "Not restarting %s again: it failed after %d automatic restart(s), the maximum; restart it by hand. "
            "Its failure: %s",
            label(instance),
            count,
            failure_of(status.trace),
        )

    def _forget_deleted(self) -> None:
        """Records of connectors that no longer exist go, so a new connector of the same name starts afresh."""
        records = self.ledger.records()
        if not records:
            return
        names = set(self.fleet.connector_names())
        for instance in records:
            if instance[0] not in names:
                self.ledger.put(instance, None)

    # ---- what REST shows ------------------------------------------------------------------------

    def view(self, name: str, config: dict[str, str], statuses: dict[Instance, str]) -> dict[Instance, dict[str, Any]]:
        """`auto_restart` of each instance of connector `name` (config `config`) that has a restart count or
        is FAILED, by instance; `statuses` are their states as the status body shows them. Empty when the
        connector does not ask for self-healing."""
        policy = restart_backoff.policy_of(config)
        if policy is None:
            return {}
        records = {i: r for i, r in self.ledger.records().items() if i[0] == name}
        shown: dict[Instance, dict[str, Any]] = {}
        for instance, state in statuses.items():
            record = records.get(instance)
            failed = state == State.FAILED.value
            if record is None and not failed:
                continue
            count = record.count if record else 0
            exhausted = failed and policy.exhausted(count)
            due = policy.due_ms(count, record.last_restart_ms if record else None)
            shown[instance] = {
                "count": count,
                "max_restarts": policy.max_restarts,
                "last_restart": iso(record.last_restart_ms) if record else None,
                "next_restart": None if not failed or exhausted else iso(due if due is not None else self.now_ms()),
                "exhausted": exhausted,
            }
        return shown
