"""`connect-runtime standalone WORKER.properties [CONNECTOR ...]`: one worker, its state in local files (or in
memory), Kafka at `bootstrap.servers` or an embedded broker on loopback."""

from __future__ import annotations

import logging

from ..config_providers import ConfigResolver
from ..connector_files import ConnectorRequest
from ..embedded_broker import BrokerUnavailableError, EmbeddedBroker
from ..herder.interface import Herder
from ..herder.standalone import StandaloneHerder
from ..herder.topics import MemoryTopics
from ..plugins import Plugins
from ..storage.base import StatusStore
from ..storage.files import FileConfigStore, FileOffsetStore, MemoryConfigStore, MemoryOffsetStore
from ..worker.offsets import OffsetsManager
from ..worker.worker import Worker
from ..worker_config import WorkerConfig
from .startup import StartupError
from .worker_runtime import WorkerRuntime

log = logging.getLogger("runtime.bootstrap")


class StandaloneRuntime(WorkerRuntime):
    mode = "standalone"

    def __init__(self, config: WorkerConfig, connector_requests: list[ConnectorRequest] | None = None) -> None:
        super().__init__(config)
        self.broker: EmbeddedBroker | None = None
        self.connector_requests = connector_requests or []

    def _check_settings(self) -> None:
        config = self.config
        if config.bootstrap_servers:
            return
        try:
            self.broker = EmbeddedBroker().start()
        except BrokerUnavailableError as exc:
            raise StartupError(str(exc), 2) from None
        config.set_bootstrap_servers(self.broker.bootstrap_servers)
        # the embedded broker completes a first group join in about half the session timeout
        config.originals.setdefault("consumer.session.timeout.ms", "6000")
        log.info(
            "No bootstrap.servers configured: using the embedded Kafka-protocol broker on %s "
            "(in-memory storage; for demos and tests, not for data that must be kept)",
            self.broker.bootstrap_servers,
        )

    def _build_herder(
        self, plugins: Plugins, resolver: ConfigResolver, worker_id: str, cluster_id: str | None
    ) -> StandaloneHerder:
        config = self.config
        offsets_file = config.offsets_file()
        configs_file = config.configs_file()
        offset_store = FileOffsetStore(offsets_file) if offsets_file else MemoryOffsetStore()
        config_store = FileConfigStore(configs_file) if configs_file else MemoryConfigStore()
        if configs_file is None:
            log.warning(
                "Neither config.storage.file.filename nor offset.storage.file.filename is set: connectors "
                "and offsets stay in memory and will not survive a restart"
            )
        statuses = self.statuses = StatusStore()
        topics = MemoryTopics(config)
        worker = Worker(config, plugins, offset_store, statuses, worker_id, on_topic=topics.record, resolver=resolver)
        return StandaloneHerder(
            config,
            plugins,
            worker,
            config_store,
            statuses,
            OffsetsManager(config, offset_store),
            topics,
            worker_id,
            cluster_id,
            broker_monitor=self.broker_monitor,
        )

    def _start_herder(self, herder: Herder) -> None:
        try:
            herder.start()
        except ValueError as exc:
            raise StartupError(str(exc), 2) from None

    def apply_startup_requests(self) -> None:
        self.apply_connector_files(self.connector_requests)

    def apply_connector_files(self, requests: list[ConnectorRequest]) -> None:
        """Create or replace each connector of the command line's files, in order; exit code 3 on the first
        that fails, as the reference's CLI."""
        assert self.herder is not None
        existing = set(self.herder.connector_names())
        for request in requests:
            try:
                self.herder.put_connector_config(
                    request.name,
                    dict(request.config),
                    request.name in existing,
                    request.initial_state,
                    request.initial_offsets,
                )
            except Exception as exc:  # noqa: BLE001 - validation runs the connector's own code: any error stops startup
                message = getattr(exc, "message", None) or str(exc)
                raise StartupError(
                    f"Stopping after connector error: failed to apply '{request.path}': {message}", 3
                ) from None
            log.info("Applied connector %s from %s", request.name, request.path)

    def stop(self) -> None:
        super().stop()
        if self.broker is not None:
            self.broker.stop()
