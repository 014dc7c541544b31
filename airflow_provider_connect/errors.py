"""Exceptions raised by the hooks, operators and sensors: they carry what the server said, redacted."""

from __future__ import annotations

from typing import Any

from airflow.sdk.exceptions import AirflowException

MESSAGE_LIMIT = 2000
TRACE_LIMIT = 1500


class ConnectApiError(AirflowException):
    """A REST call failed: HTTP status, the server's `error_code` and `message` (secrets scrubbed)."""

    def __init__(
        self,
        method: str,
        path: str,
        status_code: int | None,
        message: str | None,
        error_code: int | None = None,
    ) -> None:
        self.method = method
        self.path = path
        # AirflowException's own `status_code` is the status Airflow's API would answer with; this is the Connect
        # server's answer, and None when no answer came
        self.status_code = status_code  # type: ignore[assignment]
        self.error_code = error_code
        self.server_message = message
        where = f"{method} {path}"
        if status_code is None:
            text = f"{where} failed: {message}"
        else:
            code = f", error_code {error_code}" if error_code is not None else ""
            text = f"{where} failed with HTTP {status_code}{code}: {message}"
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.method, self.path, self.status_code, self.server_message, self.error_code))


class ConnectNotFoundError(ConnectApiError):
    """HTTP 404: the connector (or task, plugin, logger) does not exist."""


class ConnectorStateError(AirflowException):
    """A connector or task is in a state the caller cannot accept (FAILED, or an unexpected one)."""


class ConnectorConflictError(AirflowException):
    """A connector exists with a different configuration than requested."""


class InitialOffsetsUnsupportedError(AirflowException):
    """The cluster refused a create's `initial_offsets` (KIP-995) as a field it does not know: nothing was
    created (Apache Kafka Connect up to 3.9 answers 500 `Unrecognized field "initial_offsets"`)."""


def refuses_initial_offsets(error: ConnectApiError) -> bool:
    """Whether an answer to a create says the server does not know `initial_offsets` (Jackson's message in
    Apache Kafka Connect, pydantic's in a runtime of this project from before KIP-995)."""
    message = error.server_message or ""
    return "Unrecognized field" in message and "initial_offsets" in message
