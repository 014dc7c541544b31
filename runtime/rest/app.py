"""The Kafka Connect REST API: the routers of routes/ over a herder, errors as `{"error_code", "message"}`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from ..control.errors import HerderError
from ..herder.auto_restart import AutoRestarter
from ..herder.interface import Herder
from ..version import KAFKA_COMPAT_VERSION, __version__
from .auto_restart_view import StatusAnnotator
from .forwarding import Forwarded, Forwarder, LeaderCalls
from .loggers import LoggerAdmin
from .request_bodies import COMPONENT_SCHEMAS
from .responses import HTTP_REASONS, error
from .routes import connectors, internal, offsets, plugins, root, tasks
from .routes import loggers as logger_routes
from .security import BasicAuthMiddleware, Credentials

log = logging.getLogger(__name__)


class _TrailingSlash:
    """Accept a trailing `/` on any path, as the reference does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            if len(path) > 1 and path.endswith("/"):
                scope = dict(scope)
                scope["path"] = path.rstrip("/") or "/"
                scope["raw_path"] = scope["path"].encode()
        await self.app(scope, receive, send)


class _ConnectApi(FastAPI):
    """The REST app; its OpenAPI document also describes the request bodies routes read by hand."""

    def openapi(self) -> dict[str, Any]:
        document = super().openapi()  # built once and cached by FastAPI: the update is idempotent
        document.setdefault("components", {}).setdefault("schemas", {}).update(COMPONENT_SCHEMAS)
        return document


def create_app(
    herder: Herder,
    loggers: LoggerAdmin | None = None,
    admin_enabled: bool = True,
    credentials: Credentials | None = None,
    forward_client_kwargs: dict[str, Any] | None = None,
    auto_restarts: AutoRestarter | None = None,
) -> FastAPI:
    """`auto_restarts`: the worker's self-healing, shown in status bodies and /metrics."""
    loggers = loggers or LoggerAdmin()
    app = _ConnectApi(
        title="Kafka Connect REST API",
        version=KAFKA_COMPAT_VERSION,
        description=f"Kafka Connect worker runtime {__version__} (Python)",
        redirect_slashes=False,
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(_TrailingSlash)
    if credentials is not None:
        app.add_middleware(BasicAuthMiddleware, credentials=credentials)  # added last: outermost
    leader_call = LeaderCalls(herder, Forwarder(forward_client_kwargs))

    @app.exception_handler(Forwarded)
    async def forwarded(_: Request, exc: Forwarded) -> Response:
        return exc.response

    @app.exception_handler(HerderError)
    async def herder_error(_: Request, exc: HerderError) -> JSONResponse:
        return error(exc.status, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        reason = HTTP_REASONS.get(exc.status_code, str(exc.detail))
        return error(exc.status_code, f"HTTP {exc.status_code} {reason}")

    @app.exception_handler(RequestValidationError)
    async def request_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        # only path parameters are validated by FastAPI (bodies are read by hand): a non-integer task
        # id is no such resource, as in the reference
        if any(err.get("loc", ("",))[0] == "path" for err in exc.errors()):
            return error(404, "HTTP 404 Not Found")
        return error(
            400,
            "; ".join(f"Invalid value at {'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in exc.errors()),
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("Unexpected error answering a request")
        return error(500, str(exc) or type(exc).__name__)

    annotate = StatusAnnotator(herder, auto_restarts)
    app.include_router(root.router(herder, auto_restarts))
    app.include_router(connectors.router(herder, leader_call, annotate))
    app.include_router(tasks.router(herder, leader_call, annotate))
    app.include_router(offsets.router(herder, leader_call))
    app.include_router(internal.router(herder, leader_call))
    app.include_router(plugins.router(herder))
    if admin_enabled:
        app.include_router(logger_routes.router(loggers, herder))
    return app
