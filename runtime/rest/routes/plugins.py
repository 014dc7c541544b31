"""`/connector-plugins`: installed plugins, their config definitions, and config validation."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool

from ...control.errors import BadRequest
from ...herder.interface import Herder
from ..models import CONFIG_MAP_SCHEMA
from ..request_bodies import body_schema, read_config


def router(herder: Herder) -> APIRouter:
    routes = APIRouter()

    @routes.get("/connector-plugins", summary="List all connector plugins installed")
    async def plugins(request: Request) -> Any:
        connectors_only = request.query_params.get("connectorsOnly", "true").strip().lower() != "false"
        descs = await run_in_threadpool(herder.plugins.connectors if connectors_only else herder.plugins.all)
        return [d.info() for d in descs]

    @routes.get(
        "/connector-plugins/{plugin}/config", summary="Get the configuration definition for the specified plugin"
    )
    async def plugin_config(plugin: str) -> Any:
        return await run_in_threadpool(herder.plugin_config, plugin)

    @routes.put(
        "/connector-plugins/{plugin}/config/validate",
        summary="Validate the provided configuration against the configuration definition for the specified plugin",
        openapi_extra=body_schema(CONFIG_MAP_SCHEMA),
    )
    async def validate(plugin: str, request: Request) -> Any:
        config = await read_config(request)
        class_name = config.get("connector.class")
        if class_name is not None:
            if not _matches_plugin(class_name, plugin):
                raise BadRequest(f"Included connector type {class_name} does not match request type {plugin}")
        return await run_in_threadpool(herder.validate, config)

    return routes


def _matches_plugin(class_name: str, plugin: str) -> bool:
    def strip(text: str) -> str:
        return text[: -len("Connector")] if text.endswith("Connector") else text

    return strip(class_name.strip()).endswith(strip(plugin.strip()))
