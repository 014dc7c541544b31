"""`/connectors/{c}/tasks...`: a connector's tasks, their configs and statuses, and task restarts."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from ...herder.interface import Herder
from ..auto_restart_view import StatusAnnotator
from ..forwarding import LeaderCalls


def router(herder: Herder, leader_call: LeaderCalls, annotate: StatusAnnotator) -> APIRouter:
    """`annotate` adds self-healing's view to the status bodies of connectors that ask for it."""
    routes = APIRouter()

    @routes.get(
        "/connectors/{connector}/tasks", summary="List all tasks and their configurations for the specified connector"
    )
    async def tasks(connector: str) -> Any:
        return await run_in_threadpool(herder.task_infos, connector)

    @routes.get(
        "/connectors/{connector}/tasks-config",
        deprecated=True,
        summary="Get the configuration of all tasks for the specified connector",
    )
    async def tasks_config(connector: str) -> Any:
        return await run_in_threadpool(herder.tasks_config, connector)

    @routes.get(
        "/connectors/{connector}/tasks/{task}/status",
        summary="Get the state of the specified task for the specified connector",
    )
    async def task_status(connector: str, task: int) -> Any:
        body = await run_in_threadpool(herder.task_status, connector, task)
        return await run_in_threadpool(annotate.task_status, connector, body)

    @routes.post(
        "/connectors/{connector}/tasks/{task}/restart",
        status_code=204,
        summary="Restart the specified task for the specified connector",
    )
    async def restart_task(connector: str, task: int, request: Request) -> Response:
        await leader_call(request, herder.restart_task, connector, task)
        return Response(status_code=204)

    return routes
