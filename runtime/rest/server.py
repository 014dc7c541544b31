"""Serving the REST app on an already bound socket, in a thread of its own (both worker modes)."""
from __future__ import annotations

import socket
import ssl
import threading
from typing import Any

from ..worker_config import WorkerConfig


def start_rest_server(config: WorkerConfig, herder: Any, sock: socket.socket, credentials: Any = None,
                      forward_client_kwargs: dict[str, Any] | None = None,
                      ssl_context: ssl.SSLContext | None = None) -> tuple[Any, threading.Thread]:
    """The uvicorn server and its thread; set `server.should_exit` to stop it."""
    import uvicorn

    from .app import create_app
    from .security import uvicorn_ssl_kwargs

    admin_listeners = config.get("admin.listeners")
    app = create_app(herder, admin_enabled=admin_listeners is None or admin_listeners != [],
                     credentials=credentials, forward_client_kwargs=forward_client_kwargs)
    server_config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                   timeout_graceful_shutdown=5, **uvicorn_ssl_kwargs(ssl_context))
    server = uvicorn.Server(server_config)
    server.install_signal_handlers = lambda: None  # the CLI owns signals
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="rest-server", daemon=True)
    thread.start()
    return server, thread
