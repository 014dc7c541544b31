"""Forwarding to the leader (runtime/rest/forwarding.py) without workers: a request forwarded to a leader that
stopped answering is routed again as soon as this worker follows another leader."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from fastapi import Request

from runtime.control.errors import NotLeader
from runtime.rest.forwarding import Forwarded, Forwarder, LeaderCalls

OLD, NEW = "http://old-leader:8083", "http://new-leader:8083"


class Herder:
    """The herder as the REST layer sees it: every call is for the leader, whichever it is now."""

    def __init__(self) -> None:
        self.leader = OLD
        self.settled: list[str] = []

    def leader_url(self) -> str | None:
        return self.leader

    def create(self) -> None:
        raise NotLeader(self.leader)

    def settle_forwarded(self, name: str) -> None:
        self.settled.append(name)


def request(body: bytes) -> Request:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/connectors",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
    }
    return Request(scope, receive)


def test_a_forward_to_a_leader_that_stopped_answering_follows_the_new_leader() -> None:
    herder = Herder()
    reached: list[str] = []

    async def handler(sent: httpx.Request) -> httpx.Response:
        reached.append(f"{sent.url.host} forward={sent.url.params['forward']}")
        if sent.url.host == "old-leader":
            herder.leader = NEW  # the group elects another leader while the old one is frozen
            await asyncio.Event().wait()  # never answers
        return httpx.Response(201, json={"name": "c"}, headers={"content-type": "application/json"})

    calls = LeaderCalls(herder, Forwarder({"transport": httpx.MockTransport(handler)}))  # type: ignore[arg-type]

    async def create() -> Any:
        try:
            await calls(request(b'{"name": "c"}'), herder.create, settle="c")
        except Forwarded as answer:
            return answer.response
        raise AssertionError("not forwarded")

    response = asyncio.run(asyncio.wait_for(create(), timeout=30))
    assert response.status_code == 201 and response.body == b'{"name":"c"}'
    assert reached == ["old-leader forward=true", "new-leader forward=true"]
    assert herder.settled == ["c"]


def test_a_forward_to_the_leader_waits_for_it_while_it_stays_the_leader() -> None:
    herder = Herder()
    release = asyncio.Event()

    async def handler(sent: httpx.Request) -> httpx.Response:
        await release.wait()  # slow, but still the leader: the request is not sent anywhere else
        return httpx.Response(409, json={"error_code": 409, "message": "Connector c already exists"})

    calls = LeaderCalls(herder, Forwarder({"transport": httpx.MockTransport(handler)}))  # type: ignore[arg-type]

    async def create() -> Any:
        asyncio.get_running_loop().call_later(0.5, release.set)
        try:
            await calls(request(b"{}"), herder.create)
        except Forwarded as answer:
            return answer.response

    response = asyncio.run(asyncio.wait_for(create(), timeout=30))
    assert response.status_code == 409 and b"already exists" in response.body
