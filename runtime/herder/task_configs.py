"""Task configs as both herders make them: ask the running connector (with `tasks.max` and
`tasks.max.enforce`), and regenerate them once a connector has started. What each herder then does with
them differs: the standalone herder stores them and replaces its tasks, the distributed one writes them to
the config topic for their owners."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable

from ..control.stages import StageTracker
from ..control.target_states import generates_tasks
from ..storage.base import ConnectorState
from ..storage.states import TargetState
from ..worker.worker import Worker, succeeded

# the herder's: regenerate the named connector's tasks; the future (if any) is done once that has run
Reconfigure = Callable[[str], "concurrent.futures.Future | None"]


def tasks_max(config: dict[str, str]) -> tuple[int, bool]:
    """`tasks.max` (at least 1; 1 when unreadable) and whether it is enforced (`tasks.max.enforce`, KIP-1004)."""
    try:
        count = max(1, int(config.get("tasks.max", "1")))
    except ValueError:
        count = 1
    return count, config.get("tasks.max.enforce", "true").strip().lower() != "false"


def generate_task_configs(
    worker: Worker, name: str, state: ConnectorState, stages: StageTracker
) -> list[dict[str, str]] | None:
    """The task configs the connector generates now, or None when it generates none: its target state
    runs no tasks, it is not running, or it failed doing so (it then goes FAILED, as in the reference)."""
    if not generates_tasks(state.target_state) or not worker.is_running(name):
        return None
    count, enforce = tasks_max(state.config)
    try:
        with stages.stage("generating task configs for the connector"):
            return worker.task_configs(name, count, enforce)
    except Exception as exc:  # noqa: BLE001 - the connector's fault: it goes FAILED
        worker.fail_connector(name, exc)
        return None


def reconfigure_when_started(
    name: str, target: TargetState, started: concurrent.futures.Future, reconfigure: Reconfigure
) -> concurrent.futures.Future:
    """Once the connector's own thread has brought it to a `target` that generates tasks, ask the herder to
    regenerate its tasks (a continuation: no herder thread waits for a connector). The future is done once
    that has run, or once the start failed; for other targets it is `started` itself."""
    if not generates_tasks(target):
        return started
    settled: concurrent.futures.Future = concurrent.futures.Future()

    def on_started(done: concurrent.futures.Future) -> None:
        regenerated = reconfigure(name) if succeeded(done, f"Starting connector {name}") else None
        if regenerated is None:
            settled.set_result(None)
        else:
            regenerated.add_done_callback(lambda _: settled.set_result(None))

    started.add_done_callback(on_started)
    return settled
