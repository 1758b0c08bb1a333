"""One request to a running sidecar, for the commands that ask one and exit (the CLI's search and
status, the Claude Code hook): plain HTTP/1.0 on a socket, which the server answers whole and then
closes. A short-lived process pays for what it imports: httpx builds a TLS context from the CA
bundle even for a loopback ``http://`` call, and the standard library's HTTP client imports its
e-mail parser and ssl; this needs neither.
"""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Unanswered", "call"]


class Unanswered(Exception):
    """The sidecar at the address could not be asked (nothing listens, no answer in time, or an
    answer that is not its JSON)."""


def call(
    url: str, method: str, path: str, body: dict[str, Any] | None, *, token: str | None, timeout: float
) -> tuple[int, dict[str, Any]]:
    """``method path`` at the sidecar at ``url`` (``token``: its API token, if it has one), with the
    JSON ``body``: (HTTP status, its JSON answer). Raises ``Unanswered``."""
    where = urlsplit(url)
    data = json.dumps(body).encode() if body is not None else b""
    head = [f"{method} {path} HTTP/1.0", f"Host: {where.netloc}", "Accept: application/json"]
    if body is not None:
        head += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    received = []
    try:
        with socket.create_connection((where.hostname or "127.0.0.1", where.port or 80), timeout=timeout) as sock:
            sock.sendall("\r\n".join([*head, "", ""]).encode("latin-1") + data)
            while chunk := sock.recv(1 << 16):
                received.append(chunk)
    except OSError as exc:  # refused, reset, timed out
        raise Unanswered(str(exc) or type(exc).__name__) from None
    status_line, _, rest = b"".join(received).partition(b"\r\n")
    _, _, raw = rest.partition(b"\r\n\r\n")
    parts = status_line.split()
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise Unanswered("not an HTTP answer")
    status = int(parts[1])
    try:
        answer = json.loads(raw)
    except ValueError:
        raise Unanswered(f"HTTP {status}, not a JSON answer") from None
    if not isinstance(answer, dict):
        raise Unanswered(f"HTTP {status}, not a JSON object")
    return status, answer
