"""`/connectors/{c}/offsets` (KIP-875): read, alter and reset a connector's offsets."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import ValidationError

from ...control.errors import BadRequest
from ...control.offset_requests import OFFSETS_REQUIRED_MESSAGE
from ...herder.interface import Herder
from ..forwarding import LeaderCalls
from ..models import ConnectorOffsets, describe
from ..request_bodies import body_schema, model_schema, read_json


def router(herder: Herder, leader_call: LeaderCalls) -> APIRouter:
    routes = APIRouter()

    @routes.get("/connectors/{connector}/offsets", summary="Get the current offsets for the specified connector")
    async def get_offsets(connector: str) -> Any:
        return await run_in_threadpool(herder.connector_offsets, connector)

    @routes.patch(
        "/connectors/{connector}/offsets",
        summary="Alter the offsets for the specified connector",
        openapi_extra=body_schema(model_schema(ConnectorOffsets)),
    )
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

    @routes.delete("/connectors/{connector}/offsets", summary="Reset the offsets for the specified connector")
    async def reset_offsets(connector: str, request: Request) -> Any:
        message = await leader_call(request, herder.reset_offsets, connector)
        return {"message": message}

    return routes
