"""Bodies that once cost the server more than they should, or answered outside the one error
shape: a 1 MB query, integers of thousands of digits, a Content-Encoding the body does not have.

Each runs against the real app on a real loopback server (in process)."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.query import MAX_QUERY_BYTES, MAX_QUERY_TOKENS
from tests.support.memory import ClientFactory

JSON_ROUTES = ["/memory/search", "/memory/write", "/memory/block", "/journal", "/episodic/recall"]
HUGE_INT = b"1" * 5000  # Python refuses to turn more than 4300 digits into an int


def assert_error(body: Any, code: str) -> None:
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


# -- integers of thousands of digits --------------------------------------------------------------
@pytest.mark.parametrize("route", JSON_ROUTES)
async def test_an_integer_of_5000_digits_is_400_invalid_json(
    sidecar_client: ClientFactory, memory_dir: Path, route: str
) -> None:
    client = await sidecar_client()
    for raw in (b'{"limit": ' + HUGE_INT + b"}", b"[" + HUGE_INT + b"]", b"-" + HUGE_INT):
        resp = await client.post(route, data=raw, headers={"Content-Type": "application/json"})
        assert resp.status == 400, (route, await resp.text())
        assert_error(await resp.json(), "invalid_json")


async def test_an_integer_of_5000_digits_on_mcp_is_a_json_rpc_parse_error(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    raw = b'{"jsonrpc": "2.0", "id": ' + HUGE_INT + b', "method": "ping"}'
    resp = await client.post(
        "/mcp", data=raw, headers={"Content-Type": "application/json", "Accept": "application/json"}
    )
    assert resp.status == 400
    body = await resp.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32700 and "digits" in body["error"]["message"]


# -- Content-Encoding ------------------------------------------------------------------------------
SEARCH = json.dumps({"query": "postgres"}).encode()


@pytest.mark.parametrize("coding", ["gzip", "deflate", "GZIP"])
async def test_a_body_that_is_not_what_its_content_encoding_says_is_400(
    sidecar_client: ClientFactory, memory_dir: Path, coding: str
) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/search", data=SEARCH, headers={"Content-Encoding": coding})
    assert resp.status == 400 and resp.content_type == "application/json"
    assert_error(await resp.json(), "invalid_encoding")


@pytest.mark.parametrize("coding", ["compress", "x-gzip", "identity, gzip", "gzip, gzip", "made-up"])
async def test_a_content_encoding_the_sidecar_does_not_decode_is_415(
    sidecar_client: ClientFactory, memory_dir: Path, coding: str
) -> None:
    client = await sidecar_client()
    before = (memory_dir / "AGENT.md").read_bytes()
    for route, body in (("/memory/search", SEARCH), ("/memory/write", b'{"path": "AGENT.md", "content": "- z"}')):
        resp = await client.post(route, data=body, headers={"Content-Encoding": coding})
        assert resp.status == 415, (route, coding, await resp.text())
        assert_error(await resp.json(), "unsupported_encoding")
        assert resp.headers["Accept-Encoding"] == "gzip, deflate"
    assert (memory_dir / "AGENT.md").read_bytes() == before


@pytest.mark.parametrize(
    ("coding", "encode"), [("gzip", gzip.compress), ("deflate", zlib.compress), ("identity", lambda b: b)]
)
async def test_bodies_really_in_gzip_deflate_or_identity_are_read(
    sidecar_client: ClientFactory, memory_dir: Path, coding: str, encode: Any
) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/search", data=encode(SEARCH), headers={"Content-Encoding": coding})
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["results"]


# -- query length ----------------------------------------------------------------------------------
TOO_LONG = [
    "word " * 200_000,  # the megabyte that held the event loop
    "x" * (MAX_QUERY_BYTES + 1),
    "é" * (MAX_QUERY_BYTES // 2 + 1),  # few characters, too many bytes
    "a " * (MAX_QUERY_TOKENS + 1),
]


@pytest.mark.parametrize("query", TOO_LONG, ids=["1MB", "bytes", "utf8-bytes", "tokens"])
async def test_a_query_over_its_caps_is_400_query_too_long_on_every_way_in(
    sidecar_client: ClientFactory, memory_dir: Path, query: str
) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": query})
    assert resp.status == 400
    assert_error(await resp.json(), "query_too_long")
    resp = await client.post("/memory/block", json={"query": query})
    assert resp.status == 400
    assert_error(await resp.json(), "query_too_long")


async def test_a_query_at_its_caps_is_searched(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    for query in ("postgres " + "x" * (MAX_QUERY_BYTES - 9), "postgres " + "a " * (MAX_QUERY_TOKENS - 1)):
        resp = await client.post("/memory/search", json={"query": query})
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["results"]
