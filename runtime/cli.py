"""`connect-runtime standalone WORKER.properties [CONNECTOR ...]`: builds and runs a worker.

Exit codes: 0 after a clean shutdown, 1 for usage errors, 2 when the worker cannot start (bad worker
file, unreachable Kafka), 3 when a connector file cannot be applied (as the reference's CLI).
"""
from __future__ import annotations

import argparse
import gc
import os
import logging
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from .connector_files import ConnectorFileError, ConnectorRequest, parse_connector_file
from .embedded_broker import BrokerUnavailableError, EmbeddedBroker
from .api.errors import ConfigError
from .rest.server import RestSockets
from .worker_config import WorkerConfig, read_properties

log = logging.getLogger("runtime.cli")

USAGE = "connect-runtime standalone WORKER.properties [CONNECTOR.properties|CONNECTOR.json ...]"


class StartupError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def configure_logging(level: str, fmt: str = "text") -> None:
    from . import log_context
    from .rest.loggers import LEVELS

    logging.basicConfig(level=LEVELS.get(level.upper(), logging.INFO), stream=sys.stdout)
    for handler in logging.getLogger().handlers:
        log_context.install(handler, fmt.strip().lower())
    for noisy in ("uvicorn.access", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def load_worker_config(path: Path) -> WorkerConfig:
    try:
        props = read_properties(path)
    except OSError as exc:
        raise StartupError(f"Cannot read worker properties file '{path}': {exc.strerror or exc}", 2) from None
    configure_logging(str(props.get("log.level", "INFO")), str(props.get("log.format", "text")))
    try:
        return WorkerConfig(props)
    except Exception as exc:  # noqa: BLE001 - any config problem is the file's
        raise StartupError(f"Invalid worker properties in '{path}': {exc}", 2) from None


def worker_admin_client(config: WorkerConfig) -> Any:
    from confluent_kafka.admin import AdminClient

    from .worker.clients import create_client

    admin_config = {"bootstrap.servers": config.bootstrap_servers or ""}
    admin_config.update(config.client_configs("admin."))
    return create_client(AdminClient, admin_config, "worker admin client")


def kafka_cluster_id(config: WorkerConfig, admin: Any = None) -> str | None:
    """The cluster id, waiting at most `admin.default.api.timeout.ms` (default 30 s) for Kafka to answer."""
    admin = admin if admin is not None else worker_admin_client(config)
    timeout_s = config.get_int("admin.default.api.timeout.ms") / 1000
    try:
        return admin.list_topics(timeout=timeout_s).cluster_id
    except Exception as exc:  # noqa: BLE001
        raise StartupError(f"Could not reach Kafka at {config.bootstrap_servers} within {timeout_s:g}s: {exc}", 2) from None


def bind_rest_sockets(config: WorkerConfig) -> RestSockets:
    """A socket for every entry of `listeners`, of `admin.listeners` when set (as the reference: unset keeps
    /admin on the REST listeners, an empty value turns the admin endpoints off) and of `metrics.listeners`."""
    try:
        main = config.listener_addresses("listeners")
        admin = config.listener_addresses("admin.listeners") if config.get("admin.listeners") is not None else None
        metrics = config.listener_addresses("metrics.listeners")
        if any(scheme != "http" for scheme, _, _ in metrics):
            raise ConfigError("metrics.listeners", config.get("metrics.listeners"), "Metrics listeners are http only")
    except ConfigError as exc:
        raise StartupError(str(exc), 2) from None
    if any(scheme == "https" for scheme, _, _ in admin or []) and main[0][0] != "https":
        raise StartupError("Invalid value for admin.listeners: https admin listeners need https REST listeners "
                           "(listeners.https.* settings) in this runtime", 2)
    if len({scheme for scheme, _, _ in main}) > 1:
        raise StartupError("Invalid value for listeners: every REST listener must use the same scheme "
                           "(http or https) in this runtime", 2)
    bound: list[socket.socket] = []

    def bind_each(addresses: list[tuple[str, str, int]]) -> list[socket.socket]:
        socks = []
        for _, host, port in addresses:
            socks.append(bind_socket(host, port))
            bound.append(socks[-1])
        return socks

    try:
        main_socks = bind_each(main)
        admin_socks = None if admin is None else bind_each(admin)
        metrics_socks = bind_each(metrics)
    except StartupError:
        for sock in bound:
            sock.close()
        raise
    return RestSockets(main_socks, admin_socks, admin_https=any(s == "https" for s, _, _ in admin or []),
                       metrics=metrics_socks)


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise StartupError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}", 2) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class StandaloneRuntime:
    """Everything a standalone worker is made of, started and stopped in order."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.broker: EmbeddedBroker | None = None
        self.server = None
        self.herder = None
        self.broker_monitor = None
        self.credentials = None
        self.ssl_context = None
        self.forward_kwargs: dict = {}
        self._server_thread: threading.Thread | None = None

    def start(self) -> None:
        from .config_providers import ConfigResolver
        from .herder.standalone import StandaloneHerder
        from .plugins import Plugins
        from .storage.base import StatusStore
        from .storage.files import FileConfigStore, FileOffsetStore, MemoryConfigStore, MemoryOffsetStore
        from .worker.broker_monitor import BrokerMonitor
        from .worker.offsets import OffsetsManager
        from .worker.worker import Worker

        config = self.config
        if not config.bootstrap_servers:
            try:
                self.broker = EmbeddedBroker().start()
            except BrokerUnavailableError as exc:
                raise StartupError(str(exc), 2) from None
            config.set_bootstrap_servers(self.broker.bootstrap_servers)
            # the embedded broker completes a first group join in about half the session timeout
            config.originals.setdefault("consumer.session.timeout.ms", "6000")
            log.info("No bootstrap.servers configured: using the embedded Kafka-protocol broker on %s "
                     "(in-memory storage; for demos and tests, not for data that must be kept)",
                     self.broker.bootstrap_servers)
        from .rest.security import (
            SecurityConfigError, basic_auth_from_worker_config, forwarding_client_kwargs,
            ssl_context_from_worker_config,
        )

        try:
            self.credentials = basic_auth_from_worker_config(config.originals)
            self.ssl_context = ssl_context_from_worker_config(config.originals)
            self.forward_kwargs = forwarding_client_kwargs(config.originals)
        except SecurityConfigError as exc:
            raise StartupError(f"Invalid REST security settings: {exc}", 2) from None
        admin = worker_admin_client(config)
        cluster_id = kafka_cluster_id(config, admin)
        self.broker_monitor = BrokerMonitor(lambda timeout: admin.list_topics(timeout=timeout),
                                            config.bootstrap_servers or "").start()
        self.sockets = bind_rest_sockets(config)
        sock = self.sockets.main[0]
        bound_port = sock.getsockname()[1]
        worker_id = config.worker_id(bound_port)

        offsets_file = config.offsets_file()
        configs_file = config.configs_file()
        offset_store = FileOffsetStore(offsets_file) if offsets_file else MemoryOffsetStore()
        config_store = FileConfigStore(configs_file) if configs_file else MemoryConfigStore()
        if configs_file is None:
            log.warning("Neither config.storage.file.filename nor offset.storage.file.filename is set: connectors "
                        "and offsets stay in memory and will not survive a restart")
        plugins = Plugins(config.get_list("plugin.path"))
        statuses = StatusStore()
        try:
            resolver = ConfigResolver.from_worker_config(config.originals)
        except Exception as exc:  # noqa: BLE001
            raise StartupError(f"Invalid config.providers settings: {exc}", 2) from None
        worker = Worker(config, plugins, offset_store, statuses, worker_id, resolver=resolver)
        herder = StandaloneHerder(config, plugins, worker, config_store, statuses, OffsetsManager(config, offset_store),
                                  worker_id, cluster_id, broker_monitor=self.broker_monitor)
        self.herder = herder
        try:
            herder.start()
        except ValueError as exc:
            raise StartupError(str(exc), 2) from None
        self._start_server()
        log.info("Kafka Connect standalone worker %s started (Kafka cluster %s)", worker_id, cluster_id)

    def _start_server(self) -> None:
        from .rest.server import start_rest_server

        self.server, self._server_thread = start_rest_server(self.config, self.herder, self.sockets, self.credentials,
                                                             self.forward_kwargs, self.ssl_context)

    def apply_connector_files(self, requests: list[ConnectorRequest]) -> None:
        assert self.herder is not None
        existing = set(self.herder.connector_names())
        for request in requests:
            try:
                self.herder.put_connector_config(request.name, dict(request.config), request.name in existing,
                                                 request.initial_state)
            except Exception as exc:  # noqa: BLE001
                message = getattr(exc, "message", None) or str(exc)
                raise StartupError(f"Stopping after connector error: failed to apply '{request.path}': {message}", 3) from None
            log.info("Applied connector %s from %s", request.name, request.path)

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.broker_monitor is not None:
            self.broker_monitor.stop()
        if self.herder is not None:
            self.herder.stop()
        if self._server_thread is not None:
            self._server_thread.join(5)
        if self.broker is not None:
            self.broker.stop()


def cap_malloc_arenas(arenas: int = 2) -> None:
    """glibc gives each thread (task threads, librdkafka's) its own malloc arena; a long-lived worker that
    restarts tasks then creeps in RSS through fragmentation (measured by bench/soak.py: 4.2 MB per 100
    operations, 0.9 with two arenas). Cap them, as MALLOC_ARENA_MAX=2 does, unless the user chose."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, arenas)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def tune_gc() -> None:
    """The data plane allocates many short-lived, acyclic objects per record: collecting the young
    generation every 700 allocations (the default) costs a large share of the hot path."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def run_standalone(worker_file: Path, connector_files: list[Path]) -> int:
    config = load_worker_config(worker_file)
    requests = []
    names: set[str] = set()
    for path in connector_files:
        try:
            request = parse_connector_file(path)
        except ConnectorFileError as exc:
            raise StartupError(str(exc), 3) from None
        if request.name in names:
            raise StartupError(f"Connector {request.name} is defined twice on the command line (again in '{path}')", 3)
        names.add(request.name)
        requests.append(request)

    runtime = StandaloneRuntime(config)
    stop_event = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("Received signal %s; shutting down", signal.Signals(signum).name)
        stop_event.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        runtime.start()
        tune_gc()
        runtime.apply_connector_files(requests)
        assert runtime.herder is not None
        runtime.herder.mark_ready()
        log.info("Worker is ready")
        stop_event.wait()
    finally:
        runtime.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="connect-runtime", usage=USAGE,
                                     description="Run a Kafka Connect worker written in Python.")
    parser.add_argument("mode", choices=["standalone", "distributed"])
    parser.add_argument("worker_properties", type=Path)
    parser.add_argument("connectors", type=Path, nargs="*")
    argv = sys.argv[1:] if argv is None else argv
    cap_malloc_arenas()
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 1
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 1 if exc.code else 0
    try:
        if args.mode == "distributed":
            if args.connectors:
                raise StartupError("Distributed workers take no connector files: create connectors over REST", 1)
            from .distributed.runtime import run_distributed

            return run_distributed(args.worker_properties)
        return run_standalone(args.worker_properties, args.connectors)
    except StartupError as exc:
        logging.getLogger("runtime.cli").error("%s", exc)
        print(f"connect-runtime: {exc}", file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    # run the importable module's main(), so that StartupError raised by modules importing runtime.cli
    # (e.g. distributed mode) is the class main() catches, not a copy living in __main__
    from runtime.cli import main as _main

    sys.exit(_main())
