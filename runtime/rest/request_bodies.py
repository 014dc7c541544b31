"""Reading request bodies and query flags as the reference does: JSON documents read by hand (size limit,
content type, readable 400s), config maps of scalars, and the bodies' schemas for the OpenAPI document."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from ..control.errors import BadRequest, HerderError
from .models import config_map, describe

M = TypeVar("M", bound=BaseModel)

MAX_BODY_BYTES = 8 * 1024 * 1024

# nested models of request bodies, added to the OpenAPI document's components (see app.create_app)
COMPONENT_SCHEMAS: dict[str, Any] = {}


def flag(request: Request, name: str) -> bool:
    """Kafka's boolean query parameters: case-insensitive `true`, anything else is false."""
    return request.query_params.get(name, "").strip().lower() == "true"


async def read_raw(request: Request) -> bytes:
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise HerderError(f"Request body is larger than {MAX_BODY_BYTES} bytes", 413)
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise HerderError(f"Request body is larger than {MAX_BODY_BYTES} bytes", 413)
    return raw


async def read_json(request: Request) -> Any:
    content_type = request.headers.get("content-type", "")
    if content_type and "json" not in content_type.lower():
        raise HerderError("HTTP 415 Unsupported Media Type", 415)
    raw = await read_raw(request)
    if not raw.strip():
        raise BadRequest("Request body is missing: a JSON document is required")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"Request body is not valid JSON: {exc}") from None


async def read_model(request: Request, model: type[M]) -> M:
    data = await read_json(request)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(describe(exc)) from None


async def read_config(request: Request) -> dict[str, str | None]:
    data = await read_json(request)
    if not isinstance(data, dict):
        raise BadRequest("Cannot deserialize value: the request body must be a JSON object of config strings")
    bad = [k for k, v in data.items() if isinstance(v, (dict, list))]
    if bad:
        raise BadRequest(
            f"Cannot deserialize value of config key {bad[0]!r}: config values must be strings, numbers or booleans"
        )
    return config_map(data)


def body_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`openapi_extra` for a route whose JSON body is read by hand."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A request body's JSON schema; nested models go to COMPONENT_SCHEMAS."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    COMPONENT_SCHEMAS.update(schema.pop("$defs", {}))
    return schema
