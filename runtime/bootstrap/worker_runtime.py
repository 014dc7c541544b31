"""What a worker is made of in either mode, started and stopped in order: REST security settings, config
providers, Kafka's cluster id, the broker monitor, the REST listeners, plugins, then the mode's stores, worker
and herder, then the REST server. A mode supplies only its checks, its stores and herder, and how its
herder's start failures read (standalone.py, distributed.py)."""

from __future__ import annotations

import logging
import signal
import ssl
import threading
from typing import Any

from ..config_providers import ConfigResolver
from ..herder.auto_restart import AutoRestarter
from ..herder.interface import Herder
from ..plugins import Plugins
from ..rest.security import (
    Credentials,
    SecurityConfigError,
    basic_auth_from_worker_config,
    forwarding_client_kwargs,
    ssl_context_from_worker_config,
)
from ..rest.server import RestServers, RestSockets, preload_in_background, start_rest_server
from ..storage.base import StatusStore
from ..storage.restart_records import MemoryRestartLedger, RestartLedger
from ..worker.broker_monitor import BrokerMonitor
from ..worker_config import WorkerConfig
from .startup import StartupError, bind_rest_sockets, kafka_cluster_id, tune_gc, worker_admin_client

log = logging.getLogger("runtime.bootstrap")


class WorkerRuntime:
    """One worker process's parts; `start()` builds them in order, `stop()` takes them down."""

    mode = "worker"

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.server: RestServers | None = None
        self.herder: Herder | None = None
        self.auto_restarts: AutoRestarter | None = None
        # set by the mode's _build_herder: the statuses its worker writes through, and where self-healing
        # keeps its restart counts
        self.statuses: StatusStore | None = None
        self.restart_ledger: RestartLedger = MemoryRestartLedger()
        self.broker_monitor: BrokerMonitor | None = None
        self.credentials: Credentials | None = None
        self.ssl_context: ssl.SSLContext | None = None
        self.forward_kwargs: dict[str, Any] = {}
        self.sockets: RestSockets | None = None
        self._server_thread: RestServers | None = None

    # ---- what a mode supplies -------------------------------------------------------------------

    def _check_settings(self) -> None:
        """Mode-specific checks and preparations before anything is built (StartupError when wrong)."""

    def _build_herder(
        self, plugins: Plugins, resolver: ConfigResolver, worker_id: str, cluster_id: str | None
    ) -> Herder:
        """The mode's stores, worker and herder, wired together (not started)."""
        raise NotImplementedError

    def _start_herder(self, herder: Herder) -> None:
        herder.start()

    def apply_startup_requests(self) -> None:
        """What the command line asked for besides running (standalone: connector files)."""

    # ---- start and stop -------------------------------------------------------------------------

    def start(self) -> None:
        config = self.config
        self._check_settings()
        try:
            self.credentials = basic_auth_from_worker_config(config)
            self.ssl_context = ssl_context_from_worker_config(config)
            self.forward_kwargs = forwarding_client_kwargs(config)
        except SecurityConfigError as exc:
            raise StartupError(f"Invalid REST security settings: {exc}", 2) from None
        try:
            resolver = ConfigResolver.from_worker_config(config)
        except Exception as exc:  # noqa: BLE001 - a config provider's own configure may raise anything
            raise StartupError(f"Invalid config.providers settings: {exc}", 2) from None
        admin = worker_admin_client(config)
        cluster_id = kafka_cluster_id(config, admin)
        self.broker_monitor = BrokerMonitor(
            lambda timeout: admin.list_topics(timeout=timeout), config.bootstrap_servers or ""
        ).start()
        self.sockets = bind_rest_sockets(config)
        worker_id = config.worker_id(self.sockets.main[0].getsockname()[1])
        plugins = Plugins(config.get_list("plugin.path"))
        self.herder = self._build_herder(plugins, resolver, worker_id, cluster_id)
        # the herder's start imports next to nothing (so nothing is imported from two threads at once) and
        # mostly waits: on the stores' first reads and, distributed, on its first join
        preload_in_background()
        self._start_herder(self.herder)
        assert self.statuses is not None, "the mode's _build_herder sets the statuses"
        self.auto_restarts = AutoRestarter(self.herder, self.statuses, self.restart_ledger, worker_id).start()
        self.server, self._server_thread = start_rest_server(
            config,
            self.herder,
            self.sockets,
            self.credentials,
            self.forward_kwargs,
            self.ssl_context,
            auto_restarts=self.auto_restarts,
        )
        log.info("Kafka Connect %s worker %s started (Kafka cluster %s)", self.mode, worker_id, cluster_id)

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.broker_monitor is not None:
            self.broker_monitor.stop()
        if self.auto_restarts is not None:
            self.auto_restarts.stop()
        if self.herder is not None:
            self.herder.stop()
        if self._server_thread is not None:
            self._server_thread.join(5)


def run_worker(runtime: WorkerRuntime) -> int:
    """Start the worker, apply what the command line asked for, and run until SIGTERM/SIGINT."""
    stop_event = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("Received signal %s; shutting down", signal.Signals(signum).name)
        stop_event.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        runtime.start()
        tune_gc()
        runtime.apply_startup_requests()
        assert runtime.herder is not None
        runtime.herder.mark_ready()
        log.info("Worker is ready")
        stop_event.wait()
    finally:
        runtime.stop()
    return 0
