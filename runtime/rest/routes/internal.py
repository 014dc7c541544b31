"""The internal endpoints workers call on each other (the reference's InternalClusterResource); the
standalone herder answers 500 to both."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...herder.interface import Herder
from ...herder.signatures import signature_from_headers
from ..forwarding import LeaderCalls
from ..internal_requests import parse_task_configs
from ..request_bodies import read_raw


def router(herder: Herder, leader_call: LeaderCalls) -> APIRouter:
    routes = APIRouter(include_in_schema=False)

    @routes.post("/connectors/{connector}/tasks", status_code=204)
    async def put_task_configs(connector: str, request: Request) -> Response:
        raw = await read_raw(request)
        configs = parse_task_configs(raw)  # the body first, then the signature headers, as the reference
        signature = signature_from_headers(request.headers, raw)
        await leader_call(request, herder.put_task_configs, connector, configs, signature)
        return Response(status_code=204)

    @routes.put("/connectors/{connector}/fence", status_code=204)
    async def fence(connector: str, request: Request) -> Response:
        signature = signature_from_headers(request.headers, await read_raw(request))
        await leader_call(request, herder.fence_zombies, connector, signature)
        return Response(status_code=204)

    return routes
