"""Noticing that this worker's process did not run for longer than its session timeout (SIGSTOP, a paused VM,
a machine swapping): the group coordinator may have removed it meanwhile and handed its work to others.

Apache Kafka learns that from the coordinator's answers (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION), and the
member then starts over, revoking all it held; the heartbeat clock in group.py covers a stall while the
member is stable. Neither covers a process frozen between its JoinGroup and its SyncGroup: no heartbeat is
due then, and Tansu keeps the member's id and answers the late SyncGroup with REBALANCE_IN_PROGRESS, so the
member rejoined still holding (and claiming) the tasks the group had moved meanwhile, whose producers the
new owners had fenced: they stayed FAILED or UNASSIGNED (issue 25's frozen follower). A process cannot
tell from inside how long it was stopped except by its own clock, so a thread of the group's own looks at
it every heartbeat interval: a gap of more than a session timeout means the member must count itself out
of the group until its next join completes.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class StallWatch:
    """The gap between consecutive `check()` calls, against a limit (the session timeout)."""

    def __init__(self, limit_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit_s = limit_s
        self._clock = clock
        self._last = clock()

    def check(self) -> float | None:
        """Seconds since the previous check when that is more than the limit (the process stalled), else None."""
        now = self._clock()
        gap, self._last = now - self._last, now
        return gap if gap > self.limit_s else None

    def overdue(self) -> bool:
        """The last check is older than the limit: the watch itself has not run (the process was stopped)."""
        return self._clock() - self._last > self.limit_s
