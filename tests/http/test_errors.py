"""Every error on every route has one JSON shape: {"error": {"code", "message"}}."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from tests.support.memory import ClientFactory

CASES: list[tuple[str, str, Any, int, str]] = [
    ("POST", "/memory/search", b"{not json", 400, "invalid_json"),
    ("POST", "/memory/search", b"", 400, "invalid_json"),
    ("POST", "/memory/search", b"[1, 2]", 400, "invalid_json"),
    ("POST", "/memory/search", b"\xff\xfe", 400, "invalid_json"),
    ("POST", "/memory/search", {}, 400, "missing_query"),
    ("POST", "/memory/search", {"query": ""}, 400, "empty_query"),
    ("POST", "/memory/search", {"query": "   \n"}, 400, "empty_query"),
    ("POST", "/memory/search", {"query": "a\x00b"}, 400, "invalid_query"),
    ("POST", "/memory/search", {"query": 5}, 400, "invalid_query"),
    ("POST", "/memory/search", {"query": "x", "scope": "team"}, 400, "invalid_scope"),
    ("POST", "/memory/search", {"query": "x", "limit": 0}, 400, "invalid_limit"),
    ("POST", "/memory/search", {"query": "x", "limit": "5"}, 400, "invalid_limit"),
    ("POST", "/memory/search", {"query": "x", "limit": True}, 400, "invalid_limit"),
    ("POST", "/memory/search", {"query": "x", "syntax": "regex"}, 400, "invalid_syntax"),
    ("POST", "/memory/search", {"query": "x", "after_seq": -1}, 400, "invalid_after_seq"),
    ("POST", "/memory/search", {"query": "x", "scope": "crew"}, 409, "no_crew_tier"),
    ("POST", "/memory/search", b"x" * (3 * 1024 * 1024), 413, "payload_too_large"),
    ("GET", "/memory/search", None, 405, "method_not_allowed"),
    ("GET", "/memory/status?scope=team", None, 400, "invalid_scope"),
    ("GET", "/memory/status?scope=crew", None, 409, "no_crew_tier"),
    ("POST", "/memory/reindex?scope=nope", None, 400, "invalid_scope"),
    ("POST", "/memory/reindex?scope=crew", None, 409, "no_crew_tier"),
    ("GET", "/memory/reindex", None, 405, "method_not_allowed"),
    ("POST", "/healthz", None, 405, "method_not_allowed"),
    ("GET", "/no/such/route", None, 404, "not_found"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"), CASES, ids=[f"{c[0]} {c[1]} {c[4]}" for c in CASES]
)
async def test_error_shape(
    sidecar_client: ClientFactory, memory_dir: Path, method: str, path: str, body: Any, status: int, code: str
) -> None:
    client = await sidecar_client()
    data = io.BytesIO(body) if isinstance(body, bytes) and len(body) > 1024 else body
    kwargs: dict[str, Any] = {"json": body} if isinstance(body, dict) else {"data": data}
    resp = await client.request(method, path, **kwargs)
    assert resp.status == status
    assert resp.content_type == "application/json"
    payload = await resp.json()
    assert set(payload) == {"error"}
    assert payload["error"]["code"] == code
    assert isinstance(payload["error"]["message"], str) and payload["error"]["message"]
