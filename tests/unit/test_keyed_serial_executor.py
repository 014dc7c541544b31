"""The task process's job runner: jobs of one task run in the order they came (a stop after its start),
jobs of different tasks side by side (a slow start does not hold up another task's stop)."""
from __future__ import annotations

import threading

from runtime.worker.task_host import KeyedSerialExecutor


def test_jobs_of_one_key_run_in_order_and_other_keys_are_not_held_up() -> None:
    executor = KeyedSerialExecutor(max_workers=4)
    order: list[str] = []
    release = threading.Event()
    other_done = threading.Event()
    all_done = threading.Event()

    def slow_start() -> None:
        release.wait(30)
        order.append("start")

    executor.submit(("a", 0), slow_start)
    executor.submit(("a", 0), lambda: order.append("stop"))
    executor.submit(("a", 0), lambda: (order.append("restart"), all_done.set()))
    executor.submit(("b", 0), other_done.set)
    # task b's job ran while task a's start was still blocked
    assert other_done.wait(30)
    assert order == []
    release.set()
    assert all_done.wait(30)
    assert order == ["start", "stop", "restart"]
    executor.shutdown()


def test_a_failing_job_does_not_stop_the_next_of_its_key() -> None:
    executor = KeyedSerialExecutor(max_workers=1)
    done = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    executor.submit("k", fail)
    executor.submit("k", done.set)
    assert done.wait(30)
    executor.shutdown()
