"""`/connectors` and `/connectors/{c}`: listing, creating, configuring, deleting, statuses, target states
(pause, resume, stop), restarts and active topics."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from ...control.errors import BadRequest
from ...control.restart import RestartRequest
from ...herder.interface import Herder
from ..auto_restart_view import StatusAnnotator
from ..forwarding import LeaderCalls
from ..models import CONFIG_MAP_SCHEMA, CreateConnectorRequest, config_map
from ..request_bodies import body_schema, flag, model_schema, read_config, read_model


def router(herder: Herder, leader_call: LeaderCalls, annotate: StatusAnnotator) -> APIRouter:
    """`annotate` adds self-healing's view to the status bodies of connectors that ask for it."""
    routes = APIRouter()

    @routes.get("/connectors", summary="List all active connectors")
    async def list_connectors(request: Request) -> Any:
        expand = request.query_params.getlist("expand")
        if not expand:
            return await run_in_threadpool(herder.connector_names)
        listing = await run_in_threadpool(herder.connector_listing, "status" in expand, "info" in expand)
        return await run_in_threadpool(annotate.listing, listing) if "status" in expand else listing

    @routes.post(
        "/connectors",
        status_code=201,
        summary="Create a new connector",
        openapi_extra=body_schema(model_schema(CreateConnectorRequest)),
    )
    async def create_connector(request: Request) -> JSONResponse:
        body = await read_model(request, CreateConnectorRequest)
        if body.config is None:
            raise BadRequest("Connector config is missing: the request body needs a 'config' object")
        name = (body.name or "").strip()
        config = config_map(body.config)
        if "name" in config and config["name"] != name:
            raise BadRequest(
                f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({name})"
            )
        config["name"] = name
        # KIP-995: offsets written before any task starts; the answer then carries `offsets_status`
        offsets = None if body.initial_offsets is None else [entry.model_dump() for entry in body.initial_offsets]
        _, info = await leader_call(
            request, herder.put_connector_config, name, config, False, body.initial_state, offsets, settle=name
        )
        return JSONResponse(info, status_code=201, headers={"Location": _location(request, name)})

    @routes.get("/connectors/{connector}", summary="Get the details for the specified connector")
    async def get_connector(connector: str) -> Any:
        return await run_in_threadpool(herder.connector_info, connector)

    @routes.get("/connectors/{connector}/config", summary="Get the configuration for the specified connector")
    async def get_config(connector: str) -> Any:
        return await run_in_threadpool(herder.connector_config, connector)

    @routes.put(
        "/connectors/{connector}/config",
        summary="Create or reconfigure the specified connector",
        openapi_extra=body_schema(CONFIG_MAP_SCHEMA),
    )
    async def put_config(connector: str, request: Request) -> JSONResponse:
        config = await read_config(request)
        if "name" in config and config["name"] != connector:
            raise BadRequest(
                f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({connector})"
            )
        config["name"] = connector
        created, info = await leader_call(
            request, herder.put_connector_config, connector, config, True, None, settle=connector
        )
        if created:
            return JSONResponse(info, status_code=201, headers={"Location": _location(request, connector)})
        return JSONResponse(info, status_code=200)

    @routes.patch("/connectors/{connector}/config", openapi_extra=body_schema(CONFIG_MAP_SCHEMA))
    async def patch_config(connector: str, request: Request) -> Any:
        patch = await read_config(request)
        return await leader_call(request, herder.patch_connector_config, connector, patch, settle=connector)

    @routes.delete("/connectors/{connector}", status_code=204, summary="Delete the specified connector")
    async def delete_connector(connector: str, request: Request) -> Response:
        await leader_call(request, herder.delete_connector, connector, settle=connector)
        return Response(status_code=204)

    @routes.get("/connectors/{connector}/status", summary="Get the status for the specified connector")
    async def connector_status(connector: str) -> Any:
        body = await run_in_threadpool(herder.connector_status, connector)
        return await run_in_threadpool(annotate.connector_status, body)

    @routes.post("/connectors/{connector}/restart", summary="Restart the specified connector")
    async def restart_connector(connector: str, request: Request) -> Response:
        restart = RestartRequest(connector, flag(request, "onlyFailed"), flag(request, "includeTasks"))
        if restart.legacy:
            await leader_call(request, herder.restart_connector, connector)
            return Response(status_code=204)
        body = await leader_call(request, herder.restart_connector_and_tasks, restart)
        return JSONResponse(body, status_code=202)

    @routes.put("/connectors/{connector}/pause", status_code=202, summary="Pause the specified connector")
    async def pause(connector: str) -> Response:
        await run_in_threadpool(herder.pause_connector, connector)
        return Response(status_code=202)

    @routes.put("/connectors/{connector}/resume", status_code=202, summary="Resume the specified connector")
    async def resume(connector: str) -> Response:
        await run_in_threadpool(herder.resume_connector, connector)
        return Response(status_code=202)

    @routes.put("/connectors/{connector}/stop", status_code=204, summary="Stop the specified connector")
    async def stop(connector: str, request: Request) -> Response:
        await leader_call(request, herder.stop_connector, connector, settle=connector)
        return Response(status_code=204)

    @routes.get(
        "/connectors/{connector}/topics", summary="Get the list of topics actively used by the specified connector"
    )
    async def topics(connector: str) -> Any:
        return await run_in_threadpool(herder.connector_topics, connector)

    @routes.put(
        "/connectors/{connector}/topics/reset",
        status_code=202,
        summary="Reset the list of topics actively used by the specified connector",
    )
    async def reset_topics(connector: str) -> Response:
        await run_in_threadpool(herder.reset_connector_topics, connector)
        return Response(status_code=202)

    return routes


def _location(request: Request, name: str) -> str:
    base = str(request.base_url).rstrip("/")
    return f"{base}/connectors/{quote(name, safe='')}"
