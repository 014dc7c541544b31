"""`/admin/loggers` (KIP-495, KIP-976): log levels of this worker, or of the cluster."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from ...herder.interface import Herder
from ..loggers import LoggerAdmin
from ..models import LoggerLevel
from ..request_bodies import body_schema, model_schema, read_model

log = logging.getLogger("runtime.rest.app")


def router(loggers: LoggerAdmin, herder: Herder) -> APIRouter:
    routes = APIRouter()

    @routes.get(
        "/admin/loggers", summary="List the current loggers that have their levels explicitly set and their log levels"
    )
    async def list_loggers() -> Any:
        return loggers.all()

    @routes.get("/admin/loggers/{logger}", summary="Get the log level for the specified logger")
    async def get_logger(logger: str) -> Any:
        return loggers.get(logger)

    @routes.put(
        "/admin/loggers/{logger}",
        summary="Set the log level for the specified logger",
        openapi_extra=body_schema(model_schema(LoggerLevel)),
    )
    async def set_logger(logger: str, request: Request) -> Any:
        level = (await read_model(request, LoggerLevel)).level
        scope = request.query_params.get("scope", "worker")
        if scope.lower() not in ("worker", "cluster"):
            log.warning("Ignoring unknown logger scope %r; applying to this worker", scope)
        if scope.lower() == "cluster":
            # distributed: a record in the config topic every worker applies; standalone: this worker
            await run_in_threadpool(herder.set_cluster_log_level, logger, loggers.level(level))
            return Response(status_code=204)
        return await run_in_threadpool(loggers.set_level, logger, level)  # task processes hear it through pipes

    return routes
