"""Start-up steps both worker modes take: reading the worker file, logging, reaching Kafka, binding the REST
listeners, and tuning the process. Every failure is a StartupError with the CLI's exit code."""

from __future__ import annotations

import gc
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

from ..api.errors import ConfigError
from ..rest.server import RestSockets
from ..worker_config import WorkerConfig, read_properties


class StartupError(Exception):
    """The worker cannot start; `code` is the process's exit code (2: the worker, 3: a connector file)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def configure_logging(level: str, fmt: str = "text") -> None:
    from .. import log_context
    from ..log_levels import LEVELS

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

    from ..worker.clients import create_client

    admin_config = {"bootstrap.servers": config.bootstrap_servers or ""}
    admin_config.update(config.client_configs("admin."))
    return create_client(AdminClient, admin_config, "worker admin client")


def kafka_cluster_id(config: WorkerConfig, admin: Any = None) -> str | None:
    """The cluster id, waiting at most `admin.default.api.timeout.ms` (default 30 s) for Kafka to answer."""
    from confluent_kafka import KafkaException

    admin = admin if admin is not None else worker_admin_client(config)
    timeout_s = config.get_int("admin.default.api.timeout.ms") / 1000
    try:
        return admin.list_topics(timeout=timeout_s).cluster_id
    except KafkaException as exc:
        raise StartupError(
            f"Could not reach Kafka at {config.bootstrap_servers} within {timeout_s:g}s: {exc}", 2
        ) from None


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
        raise StartupError(
            "Invalid value for admin.listeners: https admin listeners need https REST listeners "
            "(listeners.https.* settings) in this runtime",
            2,
        )
    if len({scheme for scheme, _, _ in main}) > 1:
        raise StartupError(
            "Invalid value for listeners: every REST listener must use the same scheme (http or https) in this runtime",
            2,
        )
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
    return RestSockets(
        main_socks, admin_socks, admin_https=any(s == "https" for s, _, _ in admin or []), metrics=metrics_socks
    )


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
