"""The stall watch (runtime/distributed/stall.py): a worker whose process did not run for longer than its
session timeout (SIGSTOP, a paused VM) notices it at its next look, whatever the group protocol was doing."""

from __future__ import annotations

from runtime.distributed.stall import StallWatch


def test_a_gap_longer_than_the_session_is_a_stall_and_only_that() -> None:
    now = [100.0]
    watch = StallWatch(4.0, lambda: now[0])
    for _ in range(20):  # looks every heartbeat interval, however long it runs
        now[0] += 0.5
        assert watch.check() is None
    now[0] += 4.0  # a slow look, within the session: the coordinator still counts the member in
    assert watch.check() is None
    now[0] += 9.5  # stopped for longer than the session: any thread sees it before the watch looks
    assert watch.overdue()
    assert watch.check() == 9.5
    assert not watch.overdue()
    now[0] += 0.5  # the next look measures from the one that saw the stall
    assert watch.check() is None
