"""`GET /`, `/health` and `/metrics`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ...herder.auto_restart import AutoRestarter
from ...herder.interface import Herder
from ...metrics import metrics_registry
from ...version import KAFKA_COMPAT_VERSION, __version__


def router(herder: Herder, auto_restarts: AutoRestarter | None = None) -> APIRouter:
    routes = APIRouter()

    @routes.get("/", summary="Get details about this Connect worker and the ID of the Kafka cluster it is connected to")
    async def server_info() -> dict[str, Any]:
        return {
            "version": KAFKA_COMPAT_VERSION,
            "commit": f"python-connect-runtime-{__version__}",
            "kafka_cluster_id": herder.kafka_cluster_id,
        }

    @routes.get("/health", summary="Health check endpoint to verify worker readiness and liveness")
    async def health() -> JSONResponse:
        status, body = await run_in_threadpool(herder.health)
        return JSONResponse(body, status_code=status)

    registry = metrics_registry(
        lambda: herder.worker,
        herder.assigned_counts,
        None if auto_restarts is None else lambda: dict(auto_restarts.restarted),
    )

    @routes.get("/metrics", summary="The worker's metrics in Prometheus' text format (Strimzi's names)")
    def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return routes
