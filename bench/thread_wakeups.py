"""What one idle task thread costs: N Python threads each waking once a second, as an idle source task
whose connector polls once a second does (issue 10's idle figure).

    .venv/bin/python bench/thread_wakeups.py --threads 1667

Prints the cores the process uses over 10 s and the cost per wake-up; nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import psutil


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1667, help="threads (1,667 = 5,000 tasks on 3 workers)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--wait",
        choices=["event", "lock", "sleep"],
        default="event",
        help="threading.Event().wait(1) (Python-level Condition machinery), a held "
        "Lock's acquire(timeout=1) (one C call, still interruptible by release()), "
        "or time.sleep(1) (not interruptible)",
    )
    args = parser.parse_args()
    stop = threading.Event()

    def idle_poll_loop() -> None:
        if args.wait == "event":
            event = threading.Event()
            while not stop.is_set():
                event.wait(1.0)
        elif args.wait == "lock":
            lock = threading.Lock()
            lock.acquire()
            while not stop.is_set():
                lock.acquire(timeout=1.0)
        else:
            while not stop.is_set():
                time.sleep(1.0)

    threads = [threading.Thread(target=idle_poll_loop, daemon=True) for _ in range(args.threads)]
    for thread in threads:
        thread.start()
    time.sleep(3)  # let the start-up burst pass
    process = psutil.Process()
    before, t0 = process.cpu_times(), time.perf_counter()
    time.sleep(args.seconds)
    after, elapsed = process.cpu_times(), time.perf_counter() - t0
    stop.set()
    cores = (after.user + after.system - before.user - before.system) / elapsed
    print(
        f"{args.threads} threads waking once a second ({args.wait}): {cores:.3f} cores "
        f"({cores / args.threads * 1e6:.0f} µs per wake-up); load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
