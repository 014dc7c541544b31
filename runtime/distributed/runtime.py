"""`connect-runtime distributed WORKER.properties`: a worker of a Connect cluster sharing the internal topics."""
from __future__ import annotations

import logging
import signal
import socket
import sys
import threading
from pathlib import Path

from ..worker_config import WorkerConfig

log = logging.getLogger("runtime.distributed")


class DistributedRuntime:
    """Everything a distributed worker is made of, started and stopped in order (as StandaloneRuntime)."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.server = None
        self.herder = None
        self.broker_monitor = None
        self.credentials = None
        self.ssl_context = None
        self.forward_kwargs: dict = {}
        self._server_thread: threading.Thread | None = None

    def start(self) -> None:
        from ..api.errors import ConfigError
        from ..cli import StartupError, bind_rest_sockets, kafka_cluster_id, worker_admin_client
        from ..config_providers import ConfigResolver
        from ..plugins import Plugins
        from ..rest.security import (
            SecurityConfigError, basic_auth_from_worker_config, forwarding_client_kwargs,
            ssl_context_from_worker_config,
        )
        from ..storage.kafka_log import KafkaStoreError
        from ..storage.kafka_stores import KafkaStoreSettings
        from ..worker.broker_monitor import BrokerMonitor
        from ..worker.offsets import OffsetsManager, SourceOffsetStores
        from ..worker.worker import Worker
        from ..herder.distributed import DistributedHerder
        from .member import Timing

        config = self.config
        if not config.bootstrap_servers:
            raise StartupError('Missing required configuration "bootstrap.servers" which has no default value.', 2)
        try:
            settings = KafkaStoreSettings.from_worker(config)
            timing = Timing.from_worker(config)
        except (ConfigError, ValueError) as exc:
            raise StartupError(f"Invalid worker properties: {exc}", 2) from None
        if str(config.get("exactly.once.source.support")).lower() == "enabled":
            # refusing beats a silent downgrade: users who asked for exactly-once must not get at-least-once
            raise StartupError("exactly.once.source.support=enabled is not supported: this runtime delivers source "
                               "records at least once (use 'disabled')", 2)
        try:
            self.credentials = basic_auth_from_worker_config(config.originals)
            self.ssl_context = ssl_context_from_worker_config(config.originals)
            self.forward_kwargs = forwarding_client_kwargs(config.originals)
        except SecurityConfigError as exc:
            raise StartupError(f"Invalid REST security settings: {exc}", 2) from None
        try:
            resolver = ConfigResolver.from_worker_config(config.originals)
        except Exception as exc:  # noqa: BLE001
            raise StartupError(f"Invalid config.providers settings: {exc}", 2) from None
        admin = worker_admin_client(config)
        cluster_id = kafka_cluster_id(config, admin)
        self.broker_monitor = BrokerMonitor(lambda timeout: admin.list_topics(timeout=timeout),
                                            config.bootstrap_servers or "").start()
        self.sockets = bind_rest_sockets(config)
        sock = self.sockets.main[0]
        worker_id = config.worker_id(sock.getsockname()[1])
        url = f"{'https' if self.ssl_context is not None else 'http'}://{worker_id}"

        plugins = Plugins(config.get_list("plugin.path"))
        status_store = settings.status_store()
        config_store = settings.config_store()
        offset_store = settings.offset_store()
        # KIP-618: a source connector's own `offsets.storage.topic`, with a copy in the worker's offsets topic
        source_stores = SourceOffsetStores(config, offset_store, settings.offset_topic, settings.client_config,
                                           settings.read_strategy, resolve=resolver.resolve)
        offsets = OffsetsManager(config, offset_store, source_stores)
        group_id = settings.client_config["group.id"]
        herder = DistributedHerder(config, plugins, config_store, status_store, offsets, worker_id, url, cluster_id,
                                   group_id, timing, settings.client_config)
        herder.broker_monitor = self.broker_monitor
        worker = Worker(config, plugins, offset_store, herder.statuses, worker_id, resolver=resolver)
        worker.source_offset_stores = source_stores
        # GET offsets is given only the connector's name: its stored config says which topic to read
        offsets.connector_config = lambda name: _stored_config(herder, name)
        herder.attach_worker(worker)
        self.herder = herder
        try:
            herder.start()
        except (KafkaStoreError, ValueError) as exc:
            self.sockets.close()
            raise StartupError(f"Could not start the worker's internal topics: {exc}", 2) from None
        self._start_server()
        log.info("Kafka Connect distributed worker %s started in group %s (Kafka cluster %s)", worker_id, group_id,
                 cluster_id)

    def _start_server(self) -> None:
        from ..rest.server import start_rest_server

        self.server, self._server_thread = start_rest_server(self.config, self.herder, self.sockets, self.credentials,
                                                             self.forward_kwargs, self.ssl_context)

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.broker_monitor is not None:
            self.broker_monitor.stop()
        if self.herder is not None:
            self.herder.stop()
        if self._server_thread is not None:
            self._server_thread.join(5)


def _stored_config(herder: object, name: str) -> dict[str, str] | None:
    state = herder.config_store.snapshot().connectors.get(name)  # type: ignore[attr-defined]
    return dict(state.config) if state is not None else None


def run_distributed(worker_file: Path) -> int:
    """The `distributed` mode of the CLI: run until SIGTERM/SIGINT. Exit code 2 when the worker cannot start.

    Startup errors are reported here (not raised): under `python -m runtime.cli` the CLI's own StartupError
    class is `__main__.StartupError`, a different class from the `runtime.cli.StartupError` this module sees."""
    from ..cli import StartupError, load_worker_config, tune_gc

    stop_event = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("Received signal %s; shutting down", signal.Signals(signum).name)
        stop_event.set()

    runtime: DistributedRuntime | None = None
    try:
        config = load_worker_config(worker_file)
        runtime = DistributedRuntime(config)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        runtime.start()
        tune_gc()
        assert runtime.herder is not None
        runtime.herder.mark_ready()
        log.info("Worker is ready")
        stop_event.wait()
    except StartupError as exc:
        log.error("%s", exc)
        print(f"connect-runtime: {exc}", file=sys.stderr)
        return exc.code
    except Exception as exc:  # noqa: BLE001 - whatever stops the worker, say so in its log
        log.exception("The worker stopped on an unexpected error")
        print(f"connect-runtime: {exc}", file=sys.stderr)
        return 2
    finally:
        if runtime is not None:
            runtime.stop()
    return 0
