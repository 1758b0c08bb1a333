"""The one place errors become responses.

Every error on every route leaves as ``{"error": {"code": ..., "message": ...}}`` with the
status its exception type carries. An unexpected exception is logged with its traceback and
answered with a 500 ``internal_error`` that leaks no internals.
"""

from __future__ import annotations

from typing import Any

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.errors import SidecarError

__all__ = ["error_for_status", "error_middleware", "error_response"]

log = structlog.get_logger("sidecar.http")

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    421: "misdirected_request",
    503: "unavailable",
}


def error_response(status: int, code: str, message: str, **extra: Any) -> web.Response:
    body = {"error": {"code": code, "message": message, **extra}}
    return web.json_response(body, status=status)


def error_for_status(status: int, message: str) -> web.Response:
    """The error answer for a bare HTTP status (what aiohttp itself refuses), in the one shape."""
    return error_response(status, _HTTP_CODES.get(status, f"http_{status}"), message)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except SidecarError as exc:
        if exc.status >= 500:
            log.warning("http.error", path=request.path, code=exc.code, message=exc.message)
        return web.json_response(exc.body(), status=exc.status)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = exc.text if exc.text and not exc.text.startswith(f"{exc.status}:") else exc.reason
        response = error_for_status(exc.status, message)
        if exc.status == 405 and "Allow" in exc.headers:
            response.headers["Allow"] = exc.headers["Allow"]
        return response
    except Exception:
        log.exception("http.unhandled", path=request.path, method=request.method)
        return error_response(500, "internal_error", "internal error; see the sidecar log")
