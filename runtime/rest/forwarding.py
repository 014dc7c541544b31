"""Leader-only operations: run on this worker, or forwarded to the leader (or the owner) when the herder
raises NotLeader, with the reference's `forward=true|false` hops.

A forward to the leader is bounded by what this worker knows: a leader that stopped answering (frozen past
its session, say) is replaced by the group within a session timeout and a rebalance, and the moment this
worker follows the new leader, the request is routed again (run here, or forwarded to the new leader)
instead of waiting the whole forward timeout for the old one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from ..control.errors import NotLeader
from ..herder.interface import Herder
from .responses import error

T = TypeVar("T")

FORWARD_CONFLICT = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
FORWARD_TIMEOUT_S = 90.0
ROUTE_CHECK_S = 0.1  # how often a pending forward looks whether the leader changed (an in-memory read)
MAX_ROUTES = 3  # a request follows the leader this many times at most


class Forwarded(Exception):
    """Carries the leader's answer back out of a route (app.py answers it as is)."""

    def __init__(self, response: Response) -> None:
        super().__init__("forwarded")
        self.response = response


class Forwarder:
    """Sends requests on to the leader over one HTTP client, so hops reuse their connections."""

    def __init__(self, client_kwargs: dict[str, Any] | None = None) -> None:
        self.client_kwargs = client_kwargs or {}
        self._client: Any = None

    def _http(self) -> Any:
        import httpx

        if self._client is None or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=FORWARD_TIMEOUT_S, **self.client_kwargs)
        return self._client

    async def forward(
        self, request: Request, leader_url: str | None, moved: Callable[[], bool] | None = None
    ) -> Response | None:
        """`forward=true` on the first hop, `forward=false` on the second, and a 409 when a request that was
        already forwarded twice still is not at its target. None when `moved()` said, before the answer came,
        that the target is no longer where the request belongs (the request is abandoned)."""
        if leader_url is None:
            return error(
                409,
                "Cannot complete request momentarily due to no known leader URL, likely because a "
                "rebalance was underway.",
            )
        hop = request.query_params.get("forward")
        if hop is not None and hop.strip().lower() == "false":
            return error(409, FORWARD_CONFLICT)
        import httpx

        params = [(k, v) for k, v in request.query_params.multi_items() if k != "forward"]
        params.append(("forward", "false" if hop is not None else "true"))
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
        url = leader_url.rstrip("/") + request.url.path
        sending = asyncio.ensure_future(
            self._http().request(request.method, url, params=params, headers=headers, content=await request.body())
        )
        try:
            while not sending.done():
                await asyncio.wait({sending}, timeout=ROUTE_CHECK_S)
                if not sending.done() and moved is not None and moved():
                    sending.cancel()
                    return None
            answer = sending.result()
        except httpx.HTTPError as exc:
            return error(409, f"{FORWARD_CONFLICT}: could not reach the leader at {leader_url}: {exc}")
        passthrough = {k: v for k, v in answer.headers.items() if k.lower() in ("content-type", "location")}
        return Response(answer.content, status_code=answer.status_code, headers=passthrough)


class LeaderCalls:
    """Runs a herder call off the event loop; when the herder says another worker must run it, forwards the
    request there and raises Forwarded with the answer (contract 1.9)."""

    def __init__(self, herder: Herder, forwarder: Forwarder) -> None:
        self.herder = herder
        self.forwarder = forwarder

    async def __call__(self, request: Request, fn: Callable[..., T], *args: Any, settle: str | None = None) -> T:
        """`settle`: the connector a create, config change, delete or stop changes; after the leader's success
        this worker waits until it has read the change too, so a status read here right after the answer
        shows it (best effort)."""
        for _ in range(MAX_ROUTES):
            try:
                return await run_in_threadpool(fn, *args)
            except NotLeader as exc:
                answer = await self.forwarder.forward(request, exc.leader_url, self._leader_moved(exc.leader_url))
            if answer is not None:
                if settle is not None and answer.status_code < 300:
                    await run_in_threadpool(self.herder.settle_forwarded, settle)
                raise Forwarded(answer)
        raise Forwarded(error(409, FORWARD_CONFLICT))

    def _leader_moved(self, target: str | None) -> Callable[[], bool] | None:
        """For a forward to the leader this worker follows: whether it follows another one now. (A forward
        to the owner of a connector or task is not routed again: running a restart twice is not harmless.)"""
        if target is None or target != self.herder.leader_url():
            return None

        def moved() -> bool:
            current = self.herder.leader_url()
            return current is not None and current != target

        return moved
