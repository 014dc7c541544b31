"""Error answers in the reference's shape: `{"error_code", "message"}`."""

from __future__ import annotations

from fastapi.responses import JSONResponse

HTTP_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
}


def error(status: int, message: str | None) -> JSONResponse:
    return JSONResponse({"error_code": status, "message": message}, status_code=status)
