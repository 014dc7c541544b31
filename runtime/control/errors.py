"""Errors the herder, the group member and the worker raise, each carrying the HTTP status the REST layer
answers with."""

from __future__ import annotations


class HerderError(Exception):
    status = 500

    def __init__(self, message: str | None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class BadRequest(HerderError):
    status = 400


class Forbidden(HerderError):
    status = 403


class NotFound(HerderError):
    status = 404


class Conflict(HerderError):
    status = 409


class ServerError(HerderError):
    status = 500


class RequestTimeout(HerderError):
    """The herder did not answer within the request timeout (reference: 500 with a stage summary)."""

    status = 500


class NotLeader(HerderError):
    """A leader-only operation reached another worker: the REST layer forwards it (contract 1.9)."""

    status = 409

    def __init__(self, leader_url: str | None) -> None:
        super().__init__(
            "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
            if leader_url is None
            else f"This worker is not the leader; the leader is {leader_url}"
        )
        self.leader_url = leader_url


class RebalanceNeeded(HerderError):
    status = 409

    def __init__(self) -> None:
        super().__init__(
            "Cannot complete request momentarily due to stale configuration (typically caused by a "
            "concurrent config change)"
        )
