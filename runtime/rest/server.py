"""Serving the REST app on an already bound socket, in a thread of its own (both worker modes)."""

from __future__ import annotations

import socket
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any

from ..herder.auto_restart import AutoRestarter
from ..herder.interface import Herder
from ..worker_config import WorkerConfig


@dataclass
class RestSockets:
    """Bound sockets of the REST listeners, and of `admin.listeners` (None: /admin stays on the REST listeners;
    empty: the admin endpoints are off)."""

    main: list[socket.socket]
    admin: list[socket.socket] | None = None
    admin_https: bool = False
    metrics: list[socket.socket] = field(default_factory=list)  # `metrics.listeners`: GET /metrics only

    def close(self) -> None:
        for sock in [*self.main, *(self.admin or []), *self.metrics]:
            sock.close()


class RestServers:
    """The uvicorn servers of one worker (REST listeners, admin listeners), stopped and joined together."""

    def __init__(self) -> None:
        self._servers: list[Any] = []
        self._threads: list[threading.Thread] = []

    def add(self, server: Any, sockets: list[socket.socket], name: str) -> None:
        thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, name=name, daemon=True)
        self._servers.append(server)
        self._threads.append(thread)
        thread.start()

    @property
    def should_exit(self) -> bool:
        return all(server.should_exit for server in self._servers)

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        for server in self._servers:
            server.should_exit = value

    def join(self, timeout_s: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout_s)


class _OnlyPaths:
    """A listener of one purpose (admin, metrics) serves its paths only; anything else is the reference's 404."""

    def __init__(self, app: Any, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path != self.prefix and not path.startswith(self.prefix + "/"):
            from starlette.responses import JSONResponse

            await JSONResponse({"error_code": 404, "message": "HTTP 404 Not Found"}, status_code=404)(
                scope, receive, send
            )
            return
        await self.app(scope, receive, send)


def preload_in_background() -> threading.Thread:
    """Import what serving the REST API takes (uvicorn, FastAPI and the app's models: about half a second of
    CPU, more on a busy machine) in a thread, while the worker's herder starts: a distributed herder spends
    most of its start waiting for its first join, and the REST server starts only after it. An import that
    fails here fails again, and is reported, where start_rest_server imports it."""

    def load() -> None:
        try:
            import uvicorn  # noqa: F401

            from . import app  # noqa: F401
        except Exception:  # noqa: BLE001 - start_rest_server's own import reports it
            pass

    thread = threading.Thread(target=load, name="rest-preload", daemon=True)
    thread.start()
    return thread


def start_rest_server(
    config: WorkerConfig,
    herder: Herder,
    sockets: RestSockets,
    credentials: Any = None,
    forward_client_kwargs: dict[str, Any] | None = None,
    ssl_context: ssl.SSLContext | None = None,
    auto_restarts: AutoRestarter | None = None,
) -> tuple[RestServers, RestServers]:
    """Serve the REST API on every REST listener and /admin/* on the admin listeners; the returned object
    stops (`should_exit = True`) and joins them all (returned twice: the runtimes keep a server and a thread)."""
    import uvicorn

    from .app import create_app
    from .loggers import LoggerAdmin
    from .security import uvicorn_ssl_kwargs

    loggers = LoggerAdmin()  # one logger state for both apps
    servers = RestServers()

    def serve(app: Any, socks: list[socket.socket], context: ssl.SSLContext | None, name: str) -> None:
        server_config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
            **uvicorn_ssl_kwargs(context),
        )
        # Each server runs in a thread of its own, where uvicorn installs no signal handlers: the CLI owns them.
        servers.add(uvicorn.Server(server_config), socks, name)

    app = create_app(
        herder,
        loggers,
        admin_enabled=sockets.admin is None,
        credentials=credentials,
        forward_client_kwargs=forward_client_kwargs,
        auto_restarts=auto_restarts,
    )
    serve(app, sockets.main, ssl_context, "rest-server")
    if sockets.admin:
        admin_app = create_app(
            herder, loggers, admin_enabled=True, credentials=credentials, forward_client_kwargs=forward_client_kwargs
        )
        serve(
            _OnlyPaths(admin_app, "/admin"), sockets.admin, ssl_context if sockets.admin_https else None, "admin-server"
        )
    if sockets.metrics:
        metrics_app = create_app(herder, loggers, admin_enabled=False, auto_restarts=auto_restarts)  # a scrape port
        serve(_OnlyPaths(metrics_app, "/metrics"), sockets.metrics, None, "metrics-server")
    return servers, servers
