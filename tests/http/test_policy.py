"""The registry's rules hold on every route: the tests walk ``sidecar.ops.registry.OPERATIONS`` and
the application's routes, so an operation added later cannot skip them.

- every route the application serves is an operation of the registry, and the other way round;
  the routes are made by walking the registry, and a handler without an operation (or an
  operation without a handler) stops the application being built;
- the fields each operation takes are the fields the OpenAPI document gives it;
- memory off refuses every operation on memory with 403 ``memory_disabled``, empties the block,
  indexes nothing and changes no file;
- a field an operation does not take is 400 ``unknown_field`` naming it, in the body or the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from sidecar.http.openapi import DOCUMENT
from sidecar.http.routes import add_operations, routed
from sidecar.ops.registry import OPERATIONS, Operation, by_name, find
from sidecar.server.app import HANDLERS, create_app
from sidecar.settings import load_settings
from tests.support.memory import AGENT_MD, DAILY_MD, ClientFactory, settings_in, write
from tests.support.schema_walk import string_values

MEMORY_OPS = [op for op in OPERATIONS if op.memory in ("read", "write")]
BODY_OPS = [op for op in OPERATIONS if op.body is not None]
QUERY_OPS = [op for op in OPERATIONS if op.query is not None]

# Valid requests, so that a refusal with memory off is the rule's and not the input's.
VALID: dict[str, dict[str, Any]] = {
    "search": {"query": "postgres"},
    "write": {"path": "daily/2026-05-20.md", "content": "## Note\nA fact.\n"},
    "read": {"path": "AGENT.md"},
    "journal_append": {"workspace_id": "default", "entry_type": "decision", "summary": "Chose Go for the API"},
    "episodic_recall": {"query_text": "API"},
    "remember": {"content": "Using Go for the API", "topic_key": "api-language"},
    "recall": {"query": "API language"},
    "feedback": {"topic_key": "api-language", "signal": "+"},
    "forget": {"topic_key": "api-language"},
    "consolidate": {},
    "kg_add": {"subject": "billing", "predicate": "uses", "object": "Stripe"},
    "kg_query": {"entity": "billing"},
    "kg_invalidate": {"subject": "billing", "predicate": "uses", "object": "Stripe"},
    "kg_timeline": {"entity": "billing"},
    "kg_traverse": {"entity": "billing"},
    "kg_tunnels": {},
    "delete": {"path": "daily/2026-05-14.md"},
    "identity": {"identity": "I am a test agent."},
    "diary_write": {"content": "Worked on the API."},
    "ingest": {"turns": [{"role": "user", "content": "We use Go for the API now."}]},
}


def _app_routes(**options: Any) -> set[tuple[str, str]]:
    app = create_app(load_settings({"memory_dir": "/nonexistent", "embedder": "none", **options}, environ={}))
    return {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD"
    }


def test_every_route_is_an_operation_of_the_registry() -> None:
    routes = _app_routes()
    served = {(op.method, op.path) for op in OPERATIONS}
    # /mcp takes any method (JSON-RPC over POST, its stream over GET, its session closed by DELETE).
    mcp = {("POST", "/mcp"), ("DELETE", "/mcp"), ("GET", "/mcp")}
    routes = {(m, p) for m, p in routes if (m, p) != ("*", "/mcp")} | mcp
    assert routes - served == set(), "a route the registry does not know skips its rules"
    assert served - routes == set(), "an operation of the registry no route serves"
    assert find("GET", "/nowhere") is None


def test_the_memory_browser_off_serves_every_other_operation() -> None:
    served = {(op.method, op.path) for op in OPERATIONS if not op.path.startswith("/ui")}
    served = (served - {("POST", "/mcp"), ("DELETE", "/mcp"), ("GET", "/mcp")}) | {("*", "/mcp")}
    assert _app_routes(ui=False) == served


def test_a_handler_without_an_operation_stops_the_build() -> None:
    async def stray(request: web.Request) -> web.Response:
        return web.Response()

    with pytest.raises(ValueError, match="handlers without an operation: \\['memory_stray'\\]"):
        add_operations(web.Application().router, {**HANDLERS, "memory_stray": stray}, ui=True)


def test_an_operation_without_a_handler_stops_the_build() -> None:
    handlers = {name: h for name, h in HANDLERS.items() if name not in ("search", "kg_stats")}
    with pytest.raises(ValueError, match="operations without a handler: \\['search', 'kg_stats'\\]"):
        add_operations(web.Application().router, handlers, ui=True)


def test_each_route_runs_the_handler_named_for_its_operation() -> None:
    app = create_app(load_settings({"memory_dir": "/nonexistent", "embedder": "none"}, environ={}))
    pairs = {op.name: handler for op, handler in routed(HANDLERS)}
    for route in app.router.routes():
        assert route.resource is not None
        if route.method in ("HEAD", "*"):
            continue
        op = find(route.method, route.resource.canonical)
        assert op is not None and route.handler is pairs[op.name], (route.method, route.resource.canonical)
    mcp = [by_name(name) for name in ("mcp", "mcp_close", "mcp_stream")]
    assert {op.path for op in mcp} == {"/mcp"} and pairs["mcp"] is pairs["mcp_close"] is pairs["mcp_stream"]


def _documented(op: Operation) -> tuple[set[str] | None, set[str]]:
    """The body fields and query parameters the OpenAPI document gives ``op``."""
    spec = DOCUMENT["paths"][op.path][op.method.lower()]
    query = {p["name"] for p in spec.get("parameters", []) if p.get("in") == "query"}
    body = spec.get("requestBody")
    if body is None:
        return None, query
    schema = body["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return set(schema.get("properties", {})), query


@pytest.mark.parametrize("op", [op for op in OPERATIONS if op.query is not None], ids=lambda op: op.name)
def test_the_registry_takes_the_fields_the_document_gives(op: Operation) -> None:
    body, query = _documented(op)
    assert (set(op.body) if op.body is not None else None) == body
    assert set(op.query or ()) == query


async def _call(client: TestClient[Any, Any], op: Operation, fields: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    if op.body is None:
        resp = await client.request(op.method, op.path, params={k: str(v) for k, v in fields.items()})
    else:
        resp = await client.request(op.method, op.path, json=fields)
    if resp.content_type != "application/json":  # /metrics
        return resp.status, {}
    return resp.status, await resp.json()


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.md") if p.is_file()}


async def test_memory_off_refuses_every_operation_on_memory(
    sidecar_client: ClientFactory, memory_dir: Path, tmp_path: Path
) -> None:
    write(memory_dir, "memory.toml", "memory = false\n")
    before = _tree(memory_dir)
    client = await sidecar_client(role="lead")
    refused = []
    for op in MEMORY_OPS:
        status, body = await _call(client, op, VALID.get(op.name, {}))
        assert status == 403 and body["error"]["code"] == "memory_disabled", (op.name, status, body)
        refused.append(op.name)
    assert {"remember", "journal_append", "kg_add", "consolidate", "search", "read", "recall"} <= set(refused)
    status, block = await _call(client, find("POST", "/memory/block"), {"query": "postgres"})  # type: ignore[arg-type]
    assert status == 200 and block["text"] == "" and block["used"] == 0
    status, state = await _call(client, find("GET", "/memory/status"), {})  # type: ignore[arg-type]
    assert status == 200 and state["files"] == 0 and state["chunks"] == 0  # nothing was indexed
    assert _tree(memory_dir) == before  # nothing written, nothing archived
    for op in OPERATIONS:
        if op.memory == "none" and op.method == "GET":
            status, _ = await _call(client, op, {})
            assert status != 403, op.name  # the service itself still answers


async def test_memory_on_answers_the_same_requests(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    for name in ("search", "read", "remember", "recall", "kg_add", "journal_append"):
        op = next(op for op in OPERATIONS if op.name == name)
        status, body = await _call(client, op, VALID[name])
        assert status in (200, 201), (name, status, body)


async def _lead(tmp: Path) -> AsyncIterator[TestClient[Any, Any]]:
    """A lead's sidecar app (``sidecar_client(role="lead")``) on a real loopback server, its tiers in
    ``tmp``; its tree (memory and crew) is the same when the module's tests are done."""
    client: TestClient[Any, Any] = TestClient(TestServer(create_app(settings_in(tmp, role="lead"))))
    await client.start_server()
    before = _tree(tmp)
    try:
        yield client
    finally:
        await client.close()
    assert _tree(tmp) == before, "a request refused before anything ran changed a file"


# The tests of a request refused before anything runs share one app per module (each app costs
# some 30 ms of CPU to start and stop, and these are some 150 tests): a refusal changes nothing,
# which the tests of text no store keeps check per request, and each module's app checks once
# they are done.
@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lead_client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TestClient[Any, Any]]:
    """A lead's app over an empty tier (``memory_dir`` not made), as ``sidecar_client(role="lead")``
    alone starts it."""
    async for client in _lead(tmp_path_factory.mktemp("lead")):
        yield client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lead_client_on_demo(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[TestClient[Any, Any], Path]]:
    """A lead's app over the demo tier (``memory_dir``), and that tier's dir."""
    tmp = tmp_path_factory.mktemp("lead-demo")
    memory = tmp / "memory"
    write(memory, "AGENT.md", AGENT_MD)
    write(memory, "daily/2026-05-14.md", DAILY_MD)
    async for client in _lead(tmp):
        yield client, memory


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("op", BODY_OPS, ids=lambda op: op.name)
async def test_an_unknown_body_field_is_refused_by_name(lead_client: TestClient[Any, Any], op: Operation) -> None:
    client = lead_client
    fields = {**VALID.get(op.name, {}), "limt": 2}
    status, body = await _call(client, op, fields)
    assert status == 400, (status, body)
    assert body["error"]["code"] == "unknown_field" and "limt" in body["error"]["message"], body


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("op", [op for op in QUERY_OPS if op.body is None], ids=lambda op: op.name)
async def test_an_unknown_query_parameter_is_refused_by_name(lead_client: TestClient[Any, Any], op: Operation) -> None:
    client = lead_client
    resp = await client.request(op.method, op.path, params={**VALID.get(op.name, {}), "limt": "2"})
    body = await resp.json()
    assert resp.status == 400 and body["error"]["code"] == "unknown_field", (op.name, resp.status, body)


async def test_a_misspelt_search_limit_no_longer_returns_ten_hits(sidecar_client: ClientFactory) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": "postgres", "limt": 2})
    assert resp.status == 400 and (await resp.json())["error"]["field"] == "limt"


def _first_text_field(op: Operation) -> str:
    valid = VALID.get(op.name, {})
    texts = [name for name, value in valid.items() if isinstance(value, str)]
    return texts[0] if texts else sorted(op.body or ())[0]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("op", BODY_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize(
    "bad", ["a\\ud800b", "a\\u0000b", "a\\u0000", "\\u0000a"], ids=["lone-surrogate", "nul", "nul-last", "nul-first"]
)
async def test_text_no_store_keeps_is_refused_by_field_before_anything_runs(
    lead_client_on_demo: tuple[TestClient[Any, Any], Path], op: Operation, bad: str
) -> None:
    client, memory_dir = lead_client_on_demo
    name = _first_text_field(op)
    fields = {**VALID.get(op.name, {}), name: "PLACEHOLDER"}
    raw = json.dumps(fields).replace("PLACEHOLDER", bad)
    before = _tree(memory_dir)
    resp = await client.request(op.method, op.path, data=raw, headers={"Content-Type": "application/json"})
    body = await resp.json()
    assert resp.status == 400 and body["error"]["code"] == f"invalid_{name}", (op.name, resp.status, body)
    assert _tree(memory_dir) == before


async def test_an_integer_wider_than_64_bits_is_a_400_not_a_500(sidecar_client: ClientFactory) -> None:
    client = await sidecar_client()
    resp = await client.post("/kg/invalidate", json={"fact_id": 2**63})
    body = await resp.json()
    assert resp.status == 400 and body["error"]["code"] == "invalid_fact_id", body
    resp = await client.post("/memory/search", json={"query": "x", "limit": -(2**64)})
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_limit"


def test_every_documented_text_pattern_refuses_a_nul_where_the_server_does() -> None:
    """The server refuses a NUL anywhere in a text field (above); a client validating against the
    OpenAPI document must find the same: a NUL first, inside and last is refused by every pattern
    that refuses one at all, and text that is only white space by the patterns that ask for some."""
    nul_patterns = {p for p in string_values(DOCUMENT, "pattern") if "\\u0000" in p}
    assert len(nul_patterns) >= 2
    for pattern in nul_patterns:
        assert re.fullmatch(pattern, "plain text") is not None, pattern
        for text in ("a\x00", "\x00a", "a\x00b"):
            assert re.fullmatch(pattern, text) is None, (pattern, text)
    some_text = [p for p in nul_patterns if re.fullmatch(p, "") is None]
    assert some_text and all(re.fullmatch(p, " \t\n") is None and re.fullmatch(p, "  x ") for p in some_text)
