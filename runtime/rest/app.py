"""The Kafka Connect REST API: thin routes over the herder, errors as `{"error_code", "message"}`."""
from __future__ import annotations

import json
import logging
from typing import Any, Callable, TypeVar
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from ..herder.errors import BadRequest, HerderError, NotLeader
from ..herder.offset_requests import OFFSETS_REQUIRED_MESSAGE
from ..herder.restart import RestartRequest
from ..herder.signatures import signature_from_headers
from ..metrics import metrics_registry
from ..version import KAFKA_COMPAT_VERSION, __version__
from .internal_requests import parse_task_configs
from .loggers import LoggerAdmin
from .security import BasicAuthMiddleware, Credentials
from .models import (
    CONFIG_MAP_SCHEMA, ConnectorOffsets, CreateConnectorRequest, LoggerLevel, config_map, describe,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MAX_BODY_BYTES = 8 * 1024 * 1024
HTTP_REASONS = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
                415: "Unsupported Media Type", 500: "Internal Server Error"}


def error(status: int, message: str | None) -> JSONResponse:
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


def flag(request: Request, name: str) -> bool:
    """Kafka's boolean query parameters: case-insensitive `true`, anything else is false."""
    return request.query_params.get(name, "").strip().lower() == "true"


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


def _body_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


_COMPONENT_SCHEMAS: dict[str, Any] = {}


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A request body's JSON schema; nested models go to the document's components (see create_app)."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    _COMPONENT_SCHEMAS.update(schema.pop("$defs", {}))
    return schema


def create_app(herder: Any, loggers: LoggerAdmin | None = None, admin_enabled: bool = True,
               credentials: Credentials | None = None, forward_client_kwargs: dict[str, Any] | None = None) -> FastAPI:
    loggers = loggers or LoggerAdmin()
    app = FastAPI(title="Kafka Connect REST API", version=KAFKA_COMPAT_VERSION,
                  description=f"Kafka Connect worker runtime {__version__} (Python)", redirect_slashes=False,
                  docs_url=None, redoc_url=None)
    app.add_middleware(_TrailingSlash)
    if credentials is not None:
        app.add_middleware(BasicAuthMiddleware, credentials=credentials)  # added last: outermost
    client_kwargs = forward_client_kwargs or {}
    forwarder = _Forwarder(client_kwargs)

    async def call(fn: Callable[..., T], *args: Any) -> T:
        return await run_in_threadpool(fn, *args)

    settling = {"put_connector_config", "patch_connector_config", "delete_connector", "stop_connector"}

    async def leader_call(request: Request, fn: Callable[..., Any], *args: Any) -> Any:
        """A leader-only operation: run here, or forward to the leader (contract 1.9)."""
        try:
            return await run_in_threadpool(fn, *args)
        except NotLeader as exc:
            answer = await forward_request(request, exc.leader_url, client_kwargs, forwarder)
            settle = getattr(herder, "settle_forwarded", None)
            if settle is not None and answer.status_code < 300 and getattr(fn, "__name__", "") in settling:
                # the leader answered once the owners reported the change; wait until this worker has
                # read it too, so that a status read here right after the answer shows it (best effort)
                await run_in_threadpool(settle, args[0])
            raise _Forward(answer) from None

    async def read_json(request: Request) -> Any:
        content_type = request.headers.get("content-type", "")
        if content_type and "json" not in content_type.lower():
            raise HerderError("HTTP 415 Unsupported Media Type", 415)
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise HerderError(f"Request body is larger than {MAX_BODY_BYTES} bytes", 413)
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise HerderError(f"Request body is larger than {MAX_BODY_BYTES} bytes", 413)
        if not raw.strip():
            raise BadRequest("Request body is missing: a JSON document is required")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise BadRequest(f"Request body is not valid JSON: {exc}") from None

    async def read_model(request: Request, model: type[M]) -> M:
        data = await read_json(request)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise BadRequest(describe(exc)) from None

    async def read_config(request: Request) -> dict[str, str | None]:
        data = await read_json(request)
        if not isinstance(data, dict):
            raise BadRequest("Cannot deserialize value: the request body must be a JSON object of config strings")
        bad = [k for k, v in data.items() if isinstance(v, (dict, list))]
        if bad:
            raise BadRequest(f"Cannot deserialize value of config key {bad[0]!r}: config values must be strings, numbers or booleans")
        return config_map(data)

    @app.exception_handler(_Forward)
    async def forwarded(_: Request, exc: "_Forward") -> Response:
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
        return error(400, "; ".join(f"Invalid value at {'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in exc.errors()))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("Unexpected error answering a request")
        return error(500, str(exc) or type(exc).__name__)

    # ---- root ----------------------------------------------------------------------------------

    @app.get("/", summary="Get details about this Connect worker and the ID of the Kafka cluster it is connected to")
    async def server_info() -> dict[str, Any]:
        return {"version": KAFKA_COMPAT_VERSION, "commit": f"python-connect-runtime-{__version__}",
                "kafka_cluster_id": herder.kafka_cluster_id}

    @app.get("/health", summary="Health check endpoint to verify worker readiness and liveness")
    async def health() -> JSONResponse:
        status, body = await call(herder.health)
        return JSONResponse(body, status_code=status)

    registry = metrics_registry(lambda: herder.worker)

    @app.get("/metrics", summary="The worker's metrics in Prometheus' text format (Strimzi's names)")
    def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    # ---- connectors ----------------------------------------------------------------------------

    @app.get("/connectors", summary="List all active connectors")
    async def list_connectors(request: Request) -> Any:
        expand = request.query_params.getlist("expand")
        if not expand:
            return await call(herder.connector_names)
        return await call(herder.connector_listing, "status" in expand, "info" in expand)

    @app.post("/connectors", status_code=201, summary="Create a new connector",
              openapi_extra=_body_schema(_model_schema(CreateConnectorRequest)))
    async def create_connector(request: Request) -> JSONResponse:
        body = await read_model(request, CreateConnectorRequest)
        if body.config is None:
            raise BadRequest("Connector config is missing: the request body needs a 'config' object")
        name = (body.name or "").strip()
        config = config_map(body.config)
        if "name" in config and config["name"] != name:
            raise BadRequest(f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({name})")
        config["name"] = name
        _, info = await leader_call(request, herder.put_connector_config, name, config, False, body.initial_state)
        return JSONResponse(info, status_code=201, headers={"Location": _location(request, name)})

    @app.get("/connectors/{connector}", summary="Get the details for the specified connector")
    async def get_connector(connector: str) -> Any:
        return await call(herder.connector_info, connector)

    @app.get("/connectors/{connector}/config", summary="Get the configuration for the specified connector")
    async def get_config(connector: str) -> Any:
        return await call(herder.connector_config, connector)

    @app.put("/connectors/{connector}/config", summary="Create or reconfigure the specified connector",
             openapi_extra=_body_schema(CONFIG_MAP_SCHEMA))
    async def put_config(connector: str, request: Request) -> JSONResponse:
        config = await read_config(request)
        if "name" in config and config["name"] != connector:
            raise BadRequest(f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({connector})")
        config["name"] = connector
        created, info = await leader_call(request, herder.put_connector_config, connector, config, True, None)
        if created:
            return JSONResponse(info, status_code=201, headers={"Location": _location(request, connector)})
        return JSONResponse(info, status_code=200)

    @app.patch("/connectors/{connector}/config", openapi_extra=_body_schema(CONFIG_MAP_SCHEMA))
    async def patch_config(connector: str, request: Request) -> Any:
        patch = await read_config(request)
        return await leader_call(request, herder.patch_connector_config, connector, patch)

    @app.delete("/connectors/{connector}", status_code=204, summary="Delete the specified connector")
    async def delete_connector(connector: str, request: Request) -> Response:
        await leader_call(request, herder.delete_connector, connector)
        return Response(status_code=204)

    @app.get("/connectors/{connector}/status", summary="Get the status for the specified connector")
    async def connector_status(connector: str) -> Any:
        return await call(herder.connector_status, connector)

    @app.get("/connectors/{connector}/tasks", summary="List all tasks and their configurations for the specified connector")
    async def tasks(connector: str) -> Any:
        return await call(herder.task_infos, connector)

    @app.get("/connectors/{connector}/tasks-config", deprecated=True,
             summary="Get the configuration of all tasks for the specified connector")
    async def tasks_config(connector: str) -> Any:
        return await call(herder.tasks_config, connector)

    @app.get("/connectors/{connector}/tasks/{task}/status", summary="Get the state of the specified task for the specified connector")
    async def task_status(connector: str, task: int) -> Any:
        return await call(herder.task_status, connector, task)

    @app.post("/connectors/{connector}/tasks/{task}/restart", status_code=204, summary="Restart the specified task for the specified connector")
    async def restart_task(connector: str, task: int, request: Request) -> Response:
        await leader_call(request, herder.restart_task, connector, task)
        return Response(status_code=204)

    @app.post("/connectors/{connector}/restart", summary="Restart the specified connector")
    async def restart_connector(connector: str, request: Request) -> Response:
        restart = RestartRequest(connector, flag(request, "onlyFailed"), flag(request, "includeTasks"))
        if restart.legacy:
            await leader_call(request, herder.restart_connector, connector)
            return Response(status_code=204)
        body = await leader_call(request, herder.restart_connector_and_tasks, restart)
        return JSONResponse(body, status_code=202)

    @app.put("/connectors/{connector}/pause", status_code=202, summary="Pause the specified connector")
    async def pause(connector: str) -> Response:
        await call(herder.pause_connector, connector)
        return Response(status_code=202)

    @app.put("/connectors/{connector}/resume", status_code=202, summary="Resume the specified connector")
    async def resume(connector: str) -> Response:
        await call(herder.resume_connector, connector)
        return Response(status_code=202)

    @app.put("/connectors/{connector}/stop", status_code=204, summary="Stop the specified connector")
    async def stop(connector: str, request: Request) -> Response:
        await leader_call(request, herder.stop_connector, connector)
        return Response(status_code=204)

    @app.get("/connectors/{connector}/topics", summary="Get the list of topics actively used by the specified connector")
    async def topics(connector: str) -> Any:
        return await call(herder.connector_topics, connector)

    @app.put("/connectors/{connector}/topics/reset", status_code=202, summary="Reset the list of topics actively used by the specified connector")
    async def reset_topics(connector: str) -> Response:
        await call(herder.reset_connector_topics, connector)
        return Response(status_code=202)

    @app.get("/connectors/{connector}/offsets", summary="Get the current offsets for the specified connector")
    async def get_offsets(connector: str) -> Any:
        return await call(herder.connector_offsets, connector)

    @app.patch("/connectors/{connector}/offsets", summary="Alter the offsets for the specified connector",
               openapi_extra=_body_schema(_model_schema(ConnectorOffsets)))
    async def alter_offsets(connector: str, request: Request) -> Any:
        data = await read_json(request)
        if not isinstance(data, dict):
            raise BadRequest("Cannot deserialize value: the request body must be a JSON object with an 'offsets' list")
        try:
            body = ConnectorOffsets.model_validate(data)
        except ValidationError as exc:
            raise BadRequest(describe(exc)) from None
        if not body.offsets:
            raise BadRequest(OFFSETS_REQUIRED_MESSAGE)
        entries = [entry.model_dump() for entry in body.offsets]
        message = await leader_call(request, herder.alter_offsets, connector, entries)
        return {"message": message}

    @app.delete("/connectors/{connector}/offsets", summary="Reset the offsets for the specified connector")
    async def reset_offsets(connector: str, request: Request) -> Any:
        message = await leader_call(request, herder.reset_offsets, connector)
        return {"message": message}

    # ---- internal (InternalClusterResource; standalone answers 500 to both) -----------------------

    async def read_raw(request: Request) -> bytes:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise HerderError(f"Request body is larger than {MAX_BODY_BYTES} bytes", 413)
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise HerderError(f"Request body is larger than {MAX_BODY_BYTES} bytes", 413)
        return raw

    @app.post("/connectors/{connector}/tasks", status_code=204, include_in_schema=False)
    async def put_task_configs(connector: str, request: Request) -> Response:
        raw = await read_raw(request)
        configs = parse_task_configs(raw)  # the body first, then the signature headers, as the reference
        signature = signature_from_headers(request.headers, raw)
        await leader_call(request, herder.put_task_configs, connector, configs, signature)
        return Response(status_code=204)

    @app.put("/connectors/{connector}/fence", status_code=204, include_in_schema=False)
    async def fence(connector: str, request: Request) -> Response:
        signature = signature_from_headers(request.headers, await read_raw(request))
        await leader_call(request, herder.fence_zombies, connector, signature)
        return Response(status_code=204)

    # ---- plugins -------------------------------------------------------------------------------

    @app.get("/connector-plugins", summary="List all connector plugins installed")
    async def plugins(request: Request) -> Any:
        connectors_only = request.query_params.get("connectorsOnly", "true").strip().lower() != "false"
        descs = herder.plugins.connectors() if connectors_only else herder.plugins.all()
        return [d.info() for d in descs]

    @app.get("/connector-plugins/{plugin}/config", summary="Get the configuration definition for the specified plugin")
    async def plugin_config(plugin: str) -> Any:
        return await call(herder.plugin_config, plugin)

    @app.put("/connector-plugins/{plugin}/config/validate", summary="Validate the provided configuration against the configuration definition for the specified plugin",
             openapi_extra=_body_schema(CONFIG_MAP_SCHEMA))
    async def validate(plugin: str, request: Request) -> Any:
        config = await read_config(request)
        class_name = config.get("connector.class")
        if class_name is not None:
            if not _matches_plugin(class_name, plugin):
                raise BadRequest(f"Included connector type {class_name} does not match request type {plugin}")
        return await call(herder.validate, config)

    # ---- loggers -------------------------------------------------------------------------------

    if admin_enabled:
        @app.get("/admin/loggers", summary="List the current loggers that have their levels explicitly set and their log levels")
        async def list_loggers() -> Any:
            return loggers.all()

        @app.get("/admin/loggers/{logger}", summary="Get the log level for the specified logger")
        async def get_logger(logger: str) -> Any:
            return loggers.get(logger)

        @app.put("/admin/loggers/{logger}", summary="Set the log level for the specified logger",
                 openapi_extra=_body_schema(_model_schema(LoggerLevel)))
        async def set_logger(logger: str, request: Request) -> Any:
            level = (await read_model(request, LoggerLevel)).level
            scope = request.query_params.get("scope", "worker")
            if scope.lower() not in ("worker", "cluster"):
                log.warning("Ignoring unknown logger scope %r; applying to this worker", scope)
            affected = await call(loggers.set_level, logger, level)  # a cluster scope writes to Kafka
            if scope.lower() == "cluster":
                return Response(status_code=204)
            return affected

    base_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        document = base_openapi()
        document.setdefault("components", {}).setdefault("schemas", {}).update(_COMPONENT_SCHEMAS)
        return document

    app.openapi = openapi  # type: ignore[method-assign]
    return app


class _Forward(Exception):
    """Carries the leader's answer back out of a route."""

    def __init__(self, response: Response) -> None:
        super().__init__("forwarded")
        self.response = response


FORWARD_CONFLICT = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
FORWARD_TIMEOUT_S = 90.0


class _Forwarder:
    """One HTTP client for every forwarded request, so hops to the leader reuse their connections."""

    def __init__(self, client_kwargs: dict[str, Any]) -> None:
        self.client_kwargs = client_kwargs
        self._client: Any = None

    def client(self) -> Any:
        import httpx

        if self._client is None or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=FORWARD_TIMEOUT_S, **self.client_kwargs)
        return self._client


async def forward_request(request: Request, leader_url: str | None,
                          client_kwargs: dict[str, Any] | None = None, forwarder: _Forwarder | None = None) -> Response:
    """Send the request on to the leader: `forward=true` on the first hop, `forward=false` on the
    second, and a 409 when a request that was already forwarded twice still is not at its target."""
    if leader_url is None:
        return error(409, "Cannot complete request momentarily due to no known leader URL, likely because a "
                          "rebalance was underway.")
    hop = request.query_params.get("forward")
    if hop is not None and hop.strip().lower() == "false":
        return error(409, FORWARD_CONFLICT)
    import httpx

    params = [(k, v) for k, v in request.query_params.multi_items() if k != "forward"]
    params.append(("forward", "false" if hop is not None else "true"))
    headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
    url = leader_url.rstrip("/") + request.url.path
    try:
        if forwarder is not None:
            answer = await forwarder.client().request(request.method, url, params=params, headers=headers,
                                                      content=await request.body())
        else:
            async with httpx.AsyncClient(timeout=FORWARD_TIMEOUT_S, **(client_kwargs or {})) as client:
                answer = await client.request(request.method, url, params=params, headers=headers,
                                              content=await request.body())
    except httpx.HTTPError as exc:
        return error(409, f"{FORWARD_CONFLICT}: could not reach the leader at {leader_url}: {exc}")
    passthrough = {k: v for k, v in answer.headers.items() if k.lower() in ("content-type", "location")}
    return Response(answer.content, status_code=answer.status_code, headers=passthrough)


def _location(request: Request, name: str) -> str:
    base = str(request.base_url).rstrip("/")
    return f"{base}/connectors/{quote(name, safe='')}"


def _matches_plugin(class_name: str, plugin: str) -> bool:
    def strip(text: str) -> str:
        return text[: -len("Connector")] if text.endswith("Connector") else text

    return strip(class_name.strip()).endswith(strip(plugin.strip()))
