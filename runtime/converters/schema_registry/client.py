"""Schema Registry clients for the converters: confluent-kafka's client, shared and classified.

One client per distinct configuration serves every converter of the worker (its caches of ids and
schemas are thread-safe), so a thousand tasks do not ask the registry a thousand times for one schema.
`mock://scope` URLs get confluent-kafka's in-memory registry, one per scope and process, as Confluent's
`MockSchemaRegistry` scopes them: a source and a sink in one worker share what they register.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
from confluent_kafka.schema_registry import SchemaRegistryClient, SchemaRegistryError

from ...api.errors import DataError, RetriableError
from .config import RegistrySettings

# What the registry client raises when the registry cannot be reached: the transport errors of the HTTP
# library it uses (httpx2 where installed, httpx otherwise: confluent-kafka chooses) and the OS's.
_UNREACHABLE: tuple[type[Exception], ...] = (httpx.TransportError, OSError, TimeoutError)
try:
    import httpx2
except ImportError:
    pass
else:
    _UNREACHABLE += (httpx2.TransportError,)

T = TypeVar("T")

_lock = threading.Lock()
_clients: dict[tuple[tuple[str, Any], ...], SchemaRegistryClient] = {}

# Registry answers that no retry can change (Confluent's error codes: 40401 subject, 40402 version,
# 40403 schema not found; 409 incompatible; 422 invalid schema; 401/403 credentials).
_PERMANENT_STATUSES = {400, 401, 403, 404, 405, 409, 415, 422}


def registry_client(settings: RegistrySettings) -> SchemaRegistryClient:
    key = settings.client_conf
    if settings.url.startswith("mock://"):
        key = (("url", settings.url),)  # one in-process registry per scope, whatever the other settings
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = SchemaRegistryClient.new_client(dict(key))
            _clients[key] = client
        return client


def call_registry(what: str, operation: Callable[[], T]) -> T:
    """Run one registry request: unreachable or failing registries are retriable, refusals are data errors."""
    try:
        return operation()
    except SchemaRegistryError as exc:
        status = exc.http_status_code
        if status in _PERMANENT_STATUSES or (status is not None and 400 <= status < 500 and status not in (408, 429)):
            raise DataError(
                f"Failed to {what}: {exc.error_message} (HTTP {status}, error code {exc.error_code})"
            ) from None
        raise RetriableError(f"Failed to {what}: Schema Registry answered HTTP {status}: {exc.error_message}") from None
    except _UNREACHABLE as exc:
        raise RetriableError(
            f"Failed to {what}: Schema Registry is unreachable ({type(exc).__name__}: {exc})"
        ) from None
