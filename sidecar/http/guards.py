"""The HTTP edge's guards: DNS rebinding, browser origins and slow clients.

The sidecar listens on loopback, but a web page the agent opens can still reach it: a DNS name
rebound to 127.0.0.1 sends requests with the page's ``Host``, and any cross-site request carries
an ``Origin``. ``host_origin_guard`` refuses both before a handler runs (421
``misdirected_request``, 403 ``origin_refused``).

Slow clients, and what bounds them (aiohttp 3.x):

- headers sent byte by byte: aiohttp has no header timeout of its own, but its keep-alive timer
  starts when the connection opens (and again after each response) and is not moved by incoming
  bytes, so a connection whose request headers are not complete ``keepalive_timeout`` seconds
  later is closed. ``server_limits`` sets that to ``HEADER_TIMEOUT_S``; header size is bounded by
  ``max_line_size``, ``max_field_size`` and ``max_headers``.
- a body sent byte by byte: ``body_deadline`` reads the body of a routed request within
  ``BODY_TIMEOUT_S`` or answers 408 ``request_timeout`` and closes the connection; the body size
  stays bounded by the Application's ``client_max_size`` (413 ``payload_too_large``).
- too many connections: ``max_connections`` (``server_limits``) answers a connection past the
  cap 503 ``too_many_connections`` and closes it at once, so idle sockets cannot take every file
  descriptor the process has (a write that lands would then find none for its answer).
- a client that never reads its response: not bounded here (the kernel's send buffer and TCP
  keep-alive are all there is); every response of this API is small.

Bodies are JSON as sent, or gzip or deflate compressed (aiohttp decodes those); any other
``Content-Encoding`` is a 415 ``unsupported_encoding`` and a body that is not what its
``Content-Encoding`` says is a 400 ``invalid_encoding``, both before a handler runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, ContentEncodingError
from aiohttp.typedefs import Handler, Middleware

from sidecar.http.connections import BodyCut, client_done
from sidecar.http.errors import error_response
from sidecar.settings import Settings

__all__ = [
    "ACCEPTED_CODINGS",
    "BODY_TIMEOUT_S",
    "HEADER_TIMEOUT_S",
    "LINGERING_S",
    "allowed_hosts",
    "allowed_origins",
    "body_deadline",
    "host_origin_guard",
    "server_limits",
]

HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 10.0
LINGERING_S = 2.0  # after an early answer, how long aiohttp drains an unread body before closing
_SHOWN = 80  # characters of a refused header value repeated in the message
ACCEPTED_CODINGS = ("identity", "gzip", "deflate")  # Content-Encoding of a request body


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def allowed_hosts(settings: Settings, port: int | None = None) -> frozenset[str]:
    """``Host`` values that name this sidecar on ``port`` (default: the configured one)."""
    names = ("127.0.0.1", "localhost", "::1", settings.host.lower())
    return frozenset(_authority(name, port or settings.port) for name in names)


def allowed_origins(settings: Settings, port: int | None = None) -> frozenset[str]:
    """The only ``Origin`` values accepted: the sidecar's own loopback origins."""
    return frozenset(f"http://{name}:{port or settings.port}" for name in ("127.0.0.1", "localhost"))


def _local_port(request: web.Request) -> int | None:
    sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
    return int(sockname[1]) if isinstance(sockname, tuple) and len(sockname) >= 2 else None


def host_origin_guard(settings: Settings) -> Middleware:
    """Middleware refusing a foreign ``Host`` (421) or any foreign browser ``Origin`` (403).

    The sidecar's own address is a loopback name or the configured host, on the configured port or
    the port the connection actually arrived on (tests and ``--port 0`` bind elsewhere). A missing
    ``Host`` is accepted only from HTTP/1.0 clients, which may omit it.

    Every request passes through here, so the common case (one ``Host`` naming the configured
    address, no ``Origin``) is decided from the headers alone; the sets for another local port
    are built once per port, not per request."""
    configured_hosts = allowed_hosts(settings)
    configured_origins = allowed_origins(settings)
    by_port: dict[int | None, tuple[frozenset[str], frozenset[str]]] = {
        None: (configured_hosts, configured_origins),
        settings.port: (configured_hosts, configured_origins),
    }

    def own(port: int | None) -> tuple[frozenset[str], frozenset[str]]:
        found = by_port.get(port)
        if found is None:  # a port this server listens on: a handful per process, never client-chosen
            found = (
                configured_hosts | allowed_hosts(settings, port),
                configured_origins | allowed_origins(settings, port),
            )
            by_port[port] = found
        return found

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        headers = request.headers
        given = headers.getall("Host", ())
        if len(given) == 1 and "Origin" not in headers and given[0].strip().lower() in configured_hosts:
            return await handler(request)  # configured_hosts is in the allowed set of every port
        hosts, origins = own(_local_port(request))
        if len(given) > 1 or (not given and request.version >= (1, 1)):
            return error_response(421, "misdirected_request", "exactly one Host header naming this sidecar is required")
        if given and given[0].strip().lower() not in hosts:
            return error_response(
                421,
                "misdirected_request",
                f"Host {given[0][:_SHOWN]!r} is not this sidecar (use one of {', '.join(sorted(hosts))})",
            )
        for origin in headers.getall("Origin", ()):
            if origin not in origins:
                return error_response(
                    403,
                    "origin_refused",
                    f"requests from origin {origin[:_SHOWN]!r} are refused (browsers may not call the sidecar)",
                )
        return await handler(request)

    return guard


def body_deadline(seconds: float = BODY_TIMEOUT_S) -> Middleware:
    """Middleware reading a routed request's body within ``seconds`` (else 408, connection closed).

    The body is cached on the request, so handlers read it again for free. Over the Application's
    ``client_max_size`` it is a 413 here, in the same shape the handlers would give; a
    ``Content-Encoding`` other than gzip or deflate is a 415, and a body that does not decode a
    400. A body that already arrived whole (every small request: it comes in the packet with the
    headers) is read without arming a timer, which would cost more than the read itself."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.body_exists and request.match_info.http_exception is None:
            refused = _unsupported_coding(request) or await _read_body(request, seconds)
            if refused is not None:
                return refused
        return await handler(request)

    return guard


def _unsupported_coding(request: web.Request) -> web.Response | None:
    codings = request.headers.getall("Content-Encoding", ())
    if all(c.strip().lower() in ("", *ACCEPTED_CODINGS) for c in codings) and len(codings) <= 1:
        return None
    shown = ", ".join(codings)[:_SHOWN]
    response = error_response(
        415,
        "unsupported_encoding",
        f"Content-Encoding {shown!r} is not supported; send the body as is, or gzip or deflate compressed",
    )
    response.headers["Accept-Encoding"] = "gzip, deflate"
    response.force_close()  # the body is never read
    return response


async def _read_body(request: web.Request, seconds: float) -> web.Response | None:
    """Read the body into the request's cache; a refusal if it cannot be read."""
    try:
        if request.content.is_eof():
            await request.read()  # all buffered: returns without waiting
        elif client_done(request):  # gone before the whole body: the rest will never come
            raise BodyCut("the client closed its side of the connection before the whole body")
        else:
            async with asyncio.timeout(seconds):
                await request.read()
    except TimeoutError:
        response = error_response(408, "request_timeout", f"the request body did not arrive within {seconds:g} s")
    except BodyCut:  # nobody reads this answer; it is counted in the metrics
        response = error_response(499, "client_closed", "the client closed the connection before the whole body")
    except web.HTTPRequestEntityTooLarge:
        return error_response(413, "payload_too_large", f"request body is over {request.client_max_size} bytes")
    except (web.RequestPayloadError, BadHttpMessage) as exc:  # the parser's error, or it as the cause
        response = _unreadable(request, exc)
    else:
        return None
    response.force_close()
    return response


def _unreadable(request: web.Request, exc: Exception) -> web.Response:
    """The 400 for a body the parser could not read: not what its Content-Encoding says, or a
    broken chunked encoding and the like."""
    if isinstance(exc, ContentEncodingError) or isinstance(exc.__cause__, ContentEncodingError):
        coding = request.headers.get("Content-Encoding", "")[:_SHOWN]
        return error_response(400, "invalid_encoding", f"the body is not valid {coding} data")
    return error_response(400, "bad_request", "the body could not be read (a broken transfer encoding?)")


def server_limits(settings: Settings, *, header_timeout: float = HEADER_TIMEOUT_S) -> dict[str, Any]:
    """Keyword arguments for ``SidecarRunner`` that bound slow, oversized and too many clients.

    ``keepalive_timeout`` is both the idle keep-alive limit and the request-header deadline (see
    the module docstring); ``max_connections`` is the agent API's connection cap (the
    ``max_connections`` setting: past it a new connection is answered 503
    ``too_many_connections``, before the process runs out of file descriptors). ``TCPSite`` has no
    slow-client knobs, and the body cap is ``client_max_size``."""
    return {
        "keepalive_timeout": header_timeout,
        "lingering_time": LINGERING_S,
        "max_line_size": 8190,
        "max_field_size": 8190,
        "max_headers": 64,
        "max_connections": settings.max_connections,
    }
