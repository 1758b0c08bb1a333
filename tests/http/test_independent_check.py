"""An independent check of the rules on every way in, against a real ``memory-sidecar serve``
process: the routes are those of the OpenAPI document the server publishes (``GET /openapi.json``)
and the tools those its MCP endpoint lists, not the registry the server is built from, so a route
or tool the document or the list offers cannot escape a rule.

- memory off (here from the environment: ``MEMORY_SIDECAR_MEMORY_ENABLED=false``) refuses every
  route on memory with 403 ``memory_disabled``, over HTTP, MCP and the command line; the block is
  empty, nothing is indexed, no file changes, and no memory tool is offered;
- a field an operation does not take is 400 ``unknown_field`` naming it, on every route that reads
  a body or a query and on every tool;
- a read in another workspace, namespace or agent never shows what this one keeps;
- a client that closes its connection mid-request never makes a server error.
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from sidecar.cli import main
from tests.support.memory import write
from tests.support.procs import SidecarProcess, start_sidecar
from tests.support.waiting import wait_until

#: What a sidecar answers whatever memory says: the service itself (health, metrics, this
#: document, the tools and MCP's endpoint, the settings file's report, the index state) and the
#: block, which answers empty. Every other route of the document is on memory.
SERVICE = {
    ("get", "/healthz"),
    ("get", "/metrics"),
    ("get", "/openapi.json"),
    ("get", "/memory/tools"),
    ("post", "/mcp"),
    ("get", "/mcp"),
    ("delete", "/mcp"),
    ("get", "/memory/agent-settings"),
    ("get", "/memory/status"),
    ("post", "/memory/block"),
}
SECRET = "zebrafish"


def _tier(root: Path) -> None:
    write(root, "AGENT.md", f"# Agent\n\nThe build uses the {SECRET} runner.\n")
    write(root, "daily/2026-05-14.md", f"## Ops\n- Rotated the {SECRET} keys.\n")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.md") if p.is_file()}


@pytest.fixture
def started(tmp_path: Path) -> Iterator[list[SidecarProcess]]:
    sidecars: list[SidecarProcess] = []
    yield sidecars
    for side in sidecars:
        side.stop()


def _serve(started: list[SidecarProcess], memory: Path, env: dict[str, str] | None = None) -> SidecarProcess:
    side = start_sidecar(memory, env=env, wait=120)
    started.append(side)
    return side


def _routes(side: SidecarProcess) -> list[tuple[str, str, dict[str, Any]]]:
    document = httpx.get(f"{side.url}/openapi.json", timeout=30).json()
    return [(method, path, spec) for path, ops in document["paths"].items() for method, spec in ops.items()]


def _call(side: SidecarProcess, method: str, path: str, spec: dict[str, Any], extra: dict[str, Any]) -> httpx.Response:
    """``path`` asked with ``extra`` as its JSON body (a route that reads one) or its query."""
    if "requestBody" in spec:
        return httpx.request(method, f"{side.url}{path}", json=extra, timeout=60)
    return httpx.request(method, f"{side.url}{path}", params=extra, timeout=60)


class Mcp:
    """A JSON-RPC session on the server's /mcp, as any MCP client opens one."""

    def __init__(self, side: SidecarProcess) -> None:
        self.url = f"{side.url}/mcp"
        self.headers = {"Accept": "application/json, text/event-stream"}
        self.next_id = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "check", "version": "0"}}
        resp = self._post("initialize", hello)
        self.headers["Mcp-Session-Id"] = resp.headers["Mcp-Session-Id"]
        self.headers["MCP-Protocol-Version"] = "2025-06-18"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(self.url, json=note, headers=self.headers, timeout=30).status_code == 202

    def _post(self, method: str, params: dict[str, Any]) -> httpx.Response:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        resp = httpx.post(self.url, json=message, headers=self.headers, timeout=60)
        assert resp.status_code == 200, resp.text
        return resp

    def tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self._post("tools/list", {}).json()["result"]["tools"]
        return tools

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._post("tools/call", {"name": name, "arguments": arguments}).json()["result"]
        return result


@pytest.mark.slow
def test_memory_off_from_the_environment_holds_on_every_route_tool_and_command(
    started: list[SidecarProcess], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    _tier(memory)
    before = _tree(memory)
    side = _serve(started, memory, env={"MEMORY_SIDECAR_MEMORY_ENABLED": "false"})
    routes = _routes(side)
    on_memory = [(m, p, s) for m, p, s in routes if (m, p) not in SERVICE]
    assert len(on_memory) >= 40  # the document's memory routes, the memory browser's pages among them
    for method, path, spec in on_memory:
        resp = _call(side, method, path, spec, {})
        assert resp.status_code == 403, (method, path, resp.status_code, resp.text)
        assert resp.json()["error"]["code"] == "memory_disabled", (method, path, resp.text)
    block = httpx.post(f"{side.url}/memory/block", json={"query": SECRET}, timeout=30).json()
    assert block["text"] == "" and block["used"] == 0
    status = httpx.get(f"{side.url}/memory/status", timeout=30).json()
    assert status["files"] == 0 and status["chunks"] == 0  # nothing was indexed
    assert httpx.get(f"{side.url}/memory/tools", timeout=30).json()["tools"] == []
    # MCP: no memory tool is listed, and one asked for by name is refused.
    session = Mcp(side)
    assert [t["name"] for t in session.tools()] == []
    called = session.call("memory_search", {"query": SECRET})
    assert called["isError"] is True and SECRET not in json.dumps(called)
    # The command line, memory off from the same environment variable.
    monkeypatch.setenv("MEMORY_SIDECAR_MEMORY_ENABLED", "false")
    for argv in (
        ["search", SECRET, "-p", str(memory)],
        ["reindex", "-p", str(memory)],
        ["remember", "Using Go", "--memory-dir", str(memory)],
        ["recall", "Go", "--memory-dir", str(memory)],
        ["forget", "--topic-key", "api", "--memory-dir", str(memory)],
        ["decay", "--memory-dir", str(memory)],
        ["kg", "add", "--subject", "we", "--predicate", "use", "--object", "Go", "--memory-dir", str(memory)],
        ["kg", "query", "--entity", "we", "--memory-dir", str(memory)],
        ["palace", "list", "--memory-dir", str(memory)],
        ["palace", "diary", "write", "A note.", "--memory-dir", str(memory)],
        ["consolidate", "run", "--memory-dir", str(memory)],
    ):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, out=out, err=err) == 2, (argv, out.getvalue(), err.getvalue())
        assert "memory is off" in err.getvalue() and SECRET not in out.getvalue(), argv
    assert _tree(memory) == before  # nothing written, moved or archived
    assert "Traceback" not in side.log_text()


@pytest.mark.slow
def test_a_field_no_operation_takes_is_refused_on_every_route_and_tool(
    started: list[SidecarProcess], tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    _tier(memory)
    side = _serve(started, memory)
    asked = 0
    for method, path, spec in _routes(side):
        if path == "/mcp":
            continue  # JSON-RPC: its tools are asked below
        resp = _call(side, method, path, spec, {"limt": 2})
        body = resp.json()
        assert resp.status_code == 400 and body["error"]["code"] == "unknown_field", (method, path, resp.text)
        assert body["error"]["field"] == "limt", (method, path, resp.text)
        asked += 1
    assert asked >= 40
    session = Mcp(side)
    tools = session.tools()
    assert len(tools) >= 20
    for tool in tools:
        result = session.call(tool["name"], {"limt": 2})
        assert result["isError"] is True, (tool["name"], result)
        assert "unknown_field" in json.dumps(result) and "limt" in json.dumps(result), (tool["name"], result)
    assert _tree(memory) == {
        "AGENT.md": f"# Agent\n\nThe build uses the {SECRET} runner.\n".encode(),
        "daily/2026-05-14.md": f"## Ops\n- Rotated the {SECRET} keys.\n".encode(),
    }


#: The reads that take a workspace, an agent or a namespace, and a valid request of each.
READS: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/memory/block"): {"query": "what does the billing service use", "budget": 15000},
    ("post", "/memory/recall"): {"query": "billing API language"},
    ("get", "/memory/memories"): {},
    ("get", "/journal"): {},
    ("post", "/episodic/recall"): {"query_text": "billing API language", "agent_id": "agent-a"},
    ("post", "/kg/query"): {"entity": "billing service"},
    ("post", "/kg/timeline"): {"entity": "billing service"},
    ("post", "/kg/traverse"): {"entity": "billing service"},
    ("post", "/kg/tunnels"): {},
    ("get", "/kg/stats"): {},
    ("get", "/memory/health"): {},
}


@pytest.mark.slow
def test_no_read_shows_another_workspace_agent_or_namespace(started: list[SidecarProcess], tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    _tier(memory)
    side = _serve(started, memory)
    url = side.url
    kept = {"workspace_id": "default", "agent_id": "agent-a", "namespace": "project-alpha"}
    remembered = httpx.post(
        f"{url}/memory/remember", json={**kept, "content": "The billing API is written in Gleam", "topic_key": "api"}
    )
    assert remembered.status_code == 201, remembered.text
    # The journal and the graph are the workspace's (every agent in it reads them): another word.
    entry = {"workspace_id": "default", "agent_id": "agent-a", "entry_type": "decision", "summary": "Billing in Zig"}
    assert httpx.post(f"{url}/journal", json=entry).status_code == 201
    fact = {"subject": "billing service", "predicate": "uses", "object": "Zig", "workspace_id": "default"}
    assert httpx.post(f"{url}/kg/add", json=fact).status_code == 201
    assert httpx.post(f"{url}/memory/health", params={"workspace_id": "default", "recompute": "1"}).status_code == 200
    # Each read, asked as someone else where the read takes them, shows nothing of theirs: another
    # workspace sees neither; another agent of the workspace, or agent A in another namespace, not
    # agent A's memory.
    components = httpx.get(f"{url}/openapi.json", timeout=30).json()["components"]["schemas"]
    routes = {(m, p): s for m, p, s in _routes(side)}
    strangers: list[tuple[dict[str, str], tuple[str, ...]]] = [
        ({"workspace_id": "orca"}, ("Gleam", "Zig")),
        ({"workspace_id": "default", "agent_id": "agent-b"}, ("Gleam",)),
        ({"workspace_id": "default", "agent_id": "agent-a", "namespace": "project-beta"}, ("Gleam",)),
    ]
    checked = 0
    for (method, path), request in READS.items():
        spec = routes[method, path]
        takes = _fields(spec, components)
        for stranger, unseen in strangers:
            if not set(stranger) <= takes:
                continue  # this read is not asked this way
            resp = _call(side, method, path, spec, {**request, **stranger})
            assert resp.status_code in (200, 404), (method, path, stranger, resp.text)
            assert not [word for word in unseen if word in resp.text], (method, path, stranger, resp.text)
            checked += 1
    assert checked >= 15
    # ... while the one who kept it sees it, and the workspace's agents see the workspace's.
    recalled = httpx.post(f"{url}/memory/recall", json={**READS["post", "/memory/recall"], **kept}).json()
    assert "Gleam" in json.dumps(recalled["hits"])
    block = httpx.post(f"{url}/memory/block", json={**READS["post", "/memory/block"], "agent_id": "agent-b"}).json()
    assert "Zig" in block["text"]
    mine = httpx.get(f"{url}/memory/memories", params=kept).json()["memories"]
    assert [m["summary"] for m in mine] == ["The billing API is written in Gleam"]


def _fields(spec: dict[str, Any], components: dict[str, Any]) -> set[str]:
    """The fields a route of the document reads: its body's properties or its query parameters."""
    body = spec.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in body:
        body = components[body["$ref"].removeprefix("#/components/schemas/")]
    names = {p["name"] for p in spec.get("parameters", []) if p["in"] == "query"}
    return names | set(body.get("properties", {}))


def _errors(side: SidecarProcess, code: str) -> float:
    """How many answers ``side`` counted with the error ``code`` (its ``/metrics``)."""
    text = httpx.get(f"{side.url}/metrics", timeout=30).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "memory_sidecar_errors_total" and sample.labels.get("code") == code:
                return float(sample.value)
    return 0.0


@pytest.mark.slow
def test_a_client_that_goes_mid_request_never_makes_a_server_error(
    started: list[SidecarProcess], tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    _tier(memory)
    side = _serve(started, memory)
    host = f"127.0.0.1:{side.port}"
    sent = cut = 0
    for method, path, spec in _routes(side):
        if path == "/mcp":
            continue
        body = json.dumps({"query": SECRET} if "requestBody" in spec else {}).encode() if method != "get" else b""
        head = f"{method.upper()} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        for part in (b"", body):  # gone before the body, and gone before the answer
            sock = socket.create_connection(("127.0.0.1", side.port))
            sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + part)
            sock.close()  # a normal close (FIN)
            sent += 1
            cut += len(part) < len(body)
    assert sent >= 80 and cut >= 20
    # A body cut short is given up as soon as the client is gone (499 client_closed, counted),
    # not after the body deadline with the connection's slot held: none waits that out.
    wait_until(lambda: _errors(side, "client_closed") >= cut, timeout=60, interval=0.1, message="every cut body")
    assert _errors(side, "request_timeout") == 0
    # The server is whole: it answers, and nothing it logged is a failure of its own.
    found = httpx.post(f"{side.url}/memory/search", json={"query": SECRET}, timeout=30).json()["results"]
    assert {hit["path"] for hit in found} == {"AGENT.md", "daily/2026-05-14.md"}
    events = [json.loads(line) for line in side.log_text().splitlines() if line.startswith("{")]
    assert [e for e in events if e.get("event") in ("http.unhandled", "http.error")] == []
    assert "Traceback" not in side.log_text()


#: A valid value for each field a request may require, so that a refusal is the crew field's.
FILLERS: dict[str, Any] = {
    "query": "postgres",
    "query_text": "postgres",
    "entity": "billing",
    "path": "topics/x.md",
    "content": "A fact.",
    "subject": "billing",
    "predicate": "uses",
    "object": "Stripe",
    "fact_id": 1,
    "workspace_id": "default",
    "signal": "+",
    "topic_key": "api",
    "entry_type": "decision",
    "summary": "A fact.",
}


@pytest.mark.slow
def test_a_crew_scope_or_tier_on_a_solo_sidecar_is_a_client_error_on_every_route(
    started: list[SidecarProcess], tmp_path: Path
) -> None:
    """A configuration mistake (the crew on a sidecar without one) is the client's: 409
    ``no_crew_tier`` or 400 naming the field, which a client does not retry, never a 503."""
    memory = tmp_path / "memory"
    _tier(memory)
    side = _serve(started, memory)
    components = httpx.get(f"{side.url}/openapi.json", timeout=30).json()["components"]["schemas"]
    asked = []
    for method, path, spec in _routes(side):
        takes, required = _fields(spec, components), _required(spec, components)
        for field in ("scope", "tier"):
            if field not in takes or not required <= set(FILLERS) | {field}:
                continue
            given = required | ({"topic_key", "query"} & takes)  # one of two names a memory; a page searches
            request = {**{name: FILLERS[name] for name in given if name != field}, field: "crew"}
            resp = _call(side, method, path, spec, request)
            code = resp.json()["error"]["code"] if resp.status_code >= 400 else None
            assert resp.status_code in (400, 409), (method, path, request, resp.status_code, resp.text)
            assert code in ("no_crew_tier", f"invalid_{field}"), (method, path, request, resp.text)
            asked.append(f"{method} {path} {field}")
    assert len(asked) >= 15, asked


def _required(spec: dict[str, Any], components: dict[str, Any]) -> set[str]:
    body = spec.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in body:
        body = components[body["$ref"].removeprefix("#/components/schemas/")]
    names = {p["name"] for p in spec.get("parameters", []) if p["in"] == "query" and p.get("required")}
    return names | set(body.get("required", []))
