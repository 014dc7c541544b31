"""Building the runner of one task from its resolved configs: the same for a task thread of the worker
(worker.py) and for a task a task process runs (task_host.py), which differ only in where a source task's
offsets live and where its status reports and seen topics go."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api.connector import SinkConnector
from ..plugins import Plugins
from ..storage.base import OffsetStore, StatusStore
from ..storage.states import TargetState
from ..worker_config import WorkerConfig
from . import clients
from .converter_setup import build_converter, build_header_converter
from .exactly_once import ExactlyOnceStart, ExactlyOnceTask
from .sink_runner import SinkTaskRunner
from .source_runner import SourceTaskRunner
from .task_runner import TaskRunner
from .transactional_source import ExactlyOnceSourceTaskRunner
from .transform_chain import TransformationChain

TopicListener = Callable[[str, int, str], None]  # (connector, task index, topic): KIP-558's active topics
# (connector, task index, connector config) -> the task's (not yet started) offset store
OffsetStoreFactory = Callable[[str, int, dict[str, str]], OffsetStore]


class TaskBuilder:
    def __init__(
        self,
        config: WorkerConfig,
        plugins: Plugins,
        statuses: StatusStore,
        worker_id: str,
        on_topic: TopicListener | None,
        offset_store: OffsetStoreFactory,
    ) -> None:
        self.config = config
        self.plugins = plugins
        self.statuses = statuses
        self.worker_id = worker_id
        self.on_topic = on_topic
        self.offset_store = offset_store

    def build(
        self,
        name: str,
        index: int,
        task_config: dict[str, str],
        connector_config: dict[str, str],
        target: TargetState,
        exactly_once: ExactlyOnceStart | None = None,
    ) -> TaskRunner:
        """The runner of one task (not started); `exactly_once`: a source task run exactly once."""
        desc = self.plugins.connector_desc(connector_config.get("connector.class", ""))
        task_class_name = task_config.get("task.class")
        task_class = self.plugins.task_class(task_class_name, desc) if task_class_name else None
        if task_class is None:
            raise ValueError(f"Task config of {name}-{index} has no task.class")
        common: dict[str, Any] = dict(
            connector=name,
            index=index,
            task_class=task_class,
            config=task_config,
            connector_config=connector_config,
            target_state=target,
            statuses=self.statuses,
            worker_id=self.worker_id,
            on_topic=self.on_topic,
            transforms=TransformationChain(connector_config, self.plugins.resolve),
            key_converter=build_converter(self.plugins, "key.converter", self.config, connector_config),
            value_converter=build_converter(self.plugins, "value.converter", self.config, connector_config),
            header_converter=build_header_converter(self.plugins, self.config, connector_config),
            flush_interval_ms=self.config.get_int("offset.flush.interval.ms"),
        )
        if issubclass(desc.cls, SinkConnector):
            return SinkTaskRunner(
                consumer_config=clients.consumer_config(self.config, name, connector_config),
                batch_size=clients.max_poll_records(self.config, connector_config),
                dlq_producer_config=clients.producer_config(self.config, connector_config),
                dlq_admin_config=clients.admin_config(self.config, connector_config, sink=True),
                **common,
            )
        source: dict[str, Any] = dict(
            producer_config=clients.producer_config(self.config, connector_config),
            offset_store=self.offset_store(name, index, connector_config),
            flush_timeout_ms=self.config.get_int("offset.flush.timeout.ms"),
            **common,
        )
        if exactly_once is not None:
            settings = ExactlyOnceTask.for_task(self.config, connector_config, exactly_once)
            return ExactlyOnceSourceTaskRunner(exactly_once=settings, **source)
        return SourceTaskRunner(**source)


__all__ = ["OffsetStoreFactory", "TaskBuilder", "TopicListener"]
