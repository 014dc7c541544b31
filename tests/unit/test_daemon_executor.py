"""runtime.daemon_executor: per-key serial jobs on daemon threads."""

from __future__ import annotations

import threading

from runtime.daemon_executor import KeyedDaemonExecutor, SerialDaemonExecutor


def test_jobs_of_one_key_run_in_order_on_a_daemon_thread() -> None:
    jobs = KeyedDaemonExecutor("connector")
    gate = threading.Event()
    seen: list[tuple[int, str, bool]] = []

    def job(n: int) -> int:
        if n == 0:
            gate.wait(30)
        thread = threading.current_thread()
        seen.append((n, thread.name, thread.daemon))
        return n

    futures = [jobs.submit("a", lambda n=n: job(n)) for n in range(3)]
    gate.set()
    assert [f.result(30) for f in futures] == [0, 1, 2]
    assert seen == [(n, "connector-a", True) for n in range(3)]


def test_a_stuck_key_holds_up_no_other_key() -> None:
    jobs = KeyedDaemonExecutor("connector")
    stuck = threading.Event()
    blocked = jobs.submit("stuck", lambda: stuck.wait(60))
    assert jobs.submit("other", lambda: "done").result(30) == "done"
    assert not blocked.done()
    stuck.set()
    assert blocked.result(30) is True


def test_on_thread_of_and_shutdown_cancels_what_is_queued() -> None:
    jobs = KeyedDaemonExecutor("connector")
    gate = threading.Event()
    running = jobs.submit("a", lambda: (jobs.on_thread_of("a"), gate.wait(30))[0])
    queued = jobs.submit("a", lambda: "never")
    assert not jobs.on_thread_of("a")
    jobs.shutdown()
    gate.set()
    assert running.result(30) is True
    assert queued.cancelled()


def test_serial_executor_names_its_thread() -> None:
    herder = SerialDaemonExecutor("herder")
    assert herder.submit(lambda: (threading.current_thread().name, herder.on_thread())).result(30) == ("herder", True)
    assert not herder.on_thread()
