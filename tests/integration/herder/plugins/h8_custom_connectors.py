"""Connectors for herder tests, loaded through the worker's plugin.path (so only by dotted path)."""

from __future__ import annotations

import threading

from runtime.api import ConfigDef, SourceConnector, SourceTask

# connector name -> task count the ReconfiguringSource connector currently wants
WANTED_TASKS: dict[str, int] = {}
CONTEXTS: dict[str, object] = {}


class IdleTask(SourceTask):
    def __init__(self) -> None:
        self._stop = threading.Event()

    def start(self, props):
        pass

    def poll(self):
        self._stop.wait(0.05)
        return None

    def stop(self):
        self._stop.set()


class _Base(SourceConnector):
    def start(self, props):
        self.props = dict(props)

    def task_class(self):
        return IdleTask

    def stop(self):
        pass

    def config(self):
        return ConfigDef()


class TooManyTasksConnector(_Base):
    """Generates one task more than tasks.max (KIP-1004)."""

    def task_configs(self, max_tasks):
        return [{"i": str(i)} for i in range(max_tasks + 1)]


class ReconfiguringSourceConnector(_Base):
    """Generates WANTED_TASKS[name] tasks; `request(name, n)` asks the runtime to reconfigure."""

    def start(self, props):
        super().start(props)
        CONTEXTS[props["name"]] = self.context

    def task_configs(self, max_tasks):
        count = WANTED_TASKS.get(self.props["name"], 1)
        return [{"i": str(i), "of": str(count)} for i in range(min(count, max_tasks))]


def request(name: str, count: int) -> None:
    WANTED_TASKS[name] = count
    CONTEXTS[name].request_task_reconfiguration()


class FailingTaskConfigsConnector(_Base):
    def task_configs(self, max_tasks):
        raise RuntimeError("task_configs exploded")


class NullConfigConnector(_Base):
    def task_configs(self, max_tasks):
        return [{}]

    def config(self):
        return None


class NullValidateConnector(_Base):
    def task_configs(self, max_tasks):
        return [{}]

    def validate(self, connector_configs):
        return None
