"""The tools as a client meets them over streamable HTTP, with the official client: names every
client accepts, dotted aliases, input schemas enforced with the HTTP API's codes, every result
matching the tool's output schema, memory off, and ``--mcp-tools``."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from aiohttp.test_utils import TestServer
from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Tool

from sidecar.errors import ConfigError
from sidecar.mcp import server as mcp_server
from sidecar.mcp.catalog import GROUPS, NAME_PATTERN, TOOLS
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.mcp import mcp_session
from tests.support.memory import AGENT_MD
from tests.support.sink import sink_ttl

ServerFactory = Callable[..., Awaitable[TestServer]]
ALL = [t.name for t in TOOLS]


@pytest.fixture
def start(aiohttp_server: Any, make_settings: Callable[..., Settings], memory_dir: Path) -> ServerFactory:
    async def go(**overrides: Any) -> TestServer:
        app = create_app(make_settings(**overrides))
        app.on_startup.append(sink_ttl(0.0))
        server: TestServer = await aiohttp_server(app)
        return server

    return go


async def listed(session: ClientSession) -> dict[str, Tool]:
    return {tool.name: tool for tool in (await session.list_tools()).tools}


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is True and result.structured_content is not None, result
    error: dict[str, Any] = result.structured_content["error"]
    return error


def conforms(tool: Tool, result: CallToolResult) -> dict[str, Any]:
    """The result's structured content, checked against the tool's output schema here (the client
    checks it too)."""
    assert result.is_error is False, result.content
    assert tool.output_schema is not None and result.structured_content is not None
    Draft202012Validator(tool.output_schema).validate(result.structured_content)
    return result.structured_content


async def test_names_are_valid_for_every_client_and_every_tool_declares_its_output(start: ServerFactory) -> None:
    async with mcp_session(await start()) as session:
        tools = await listed(session)
    assert list(tools) == ALL and len(ALL) == 24
    for name, tool in tools.items():
        assert NAME_PATTERN.fullmatch(name) and "." not in name, name
        assert tool.description and len(tool.description) > 40, name
        assert tool.input_schema["type"] == "object" and tool.input_schema.get("additionalProperties") is False, name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        Draft202012Validator.check_schema(tool.output_schema)
        Draft202012Validator.check_schema(tool.input_schema)
        assert not re.search(r"\b(memory|kg)\.[a-z]", tool.description), name  # no dotted tool names


async def test_dotted_names_are_still_called_but_never_listed(start: ServerFactory, memory_dir: Path) -> None:
    async with mcp_session(await start()) as session:
        wrote = await session.call_tool("memory.write", {"path": "topics/a.md", "content": "- Staging is otter."})
        found = await session.call_tool(
            "memory.search", {"query": "otter", "after_seq": wrote.structured_content["seq"]}
        )  # type: ignore[index]
        assert wrote.is_error is False and found.is_error is False
        assert [hit["path"] for hit in (found.structured_content or {})["results"]] == ["topics/a.md"]
        assert not [name for name in await listed(session) if "." in name]
        with pytest.raises(MCPError) as caught:
            await session.call_tool("memory_shred", {})
        assert caught.value.error.code == -32602


@pytest.mark.parametrize(
    ("tool", "args", "code", "field"),
    [
        ("memory_search", {"query": "postgres", "limt": 2}, "unknown_field", "limt"),
        ("memory_search", {"query": "postgres", "limit": "2"}, "invalid_limit", "limit"),
        ("memory_search", {"query": "postgres", "explain": True}, "unknown_field", "explain"),
        ("memory_write", {"path": "AGENT.md", "content": 5}, "invalid_content", "content"),
        ("memory_write", {"path": "AGENT.md", "content": "- x", "force": "yes"}, "invalid_force", "force"),
        ("memory_write", {"path": "AGENT.md", "content": "- x", "tags": ["a"]}, "unknown_field", "tags"),
        ("memory_read", {"path": "AGENT.md", "line_start": "1"}, "invalid_line_start", "line_start"),
        ("memory_remember", {"content": "Sprint 9", "priority": "urgent!"}, "invalid_priority", None),
        ("kg_add", {"subject": "we", "predicate": "use", "object": "x", "colour": "red"}, "unknown_field", "colour"),
        ("kg_query", {"entity": "we", "as_of": 20260101}, "invalid_as_of", "as_of"),
        ("memory_set_identity", {"identity": "x" * 3000}, "identity_too_long", None),
        ("memory_restore", {}, "missing_id", None),
        ("memory_restore", {"id": "e1", "workspace_id": "other"}, "unknown_field", "workspace_id"),
        ("memory_session", {"summary": "Shipped it."}, "missing_session_id", None),
        ("memory_session", {"session_id": "s1", "messages": "hello"}, "invalid_messages", None),
        ("memory_session", {"session_id": "s1", "summary": "x", "agent_id": "b"}, "unknown_field", "agent_id"),
        ("memory_diary_write", {"content": ["not", "text"]}, "invalid_content", None),
        ("memory_write", {"path": "AGENT.md", "content": "- a\x00b"}, "invalid_content", "content"),
        ("memory_search", {"query": "postgres", "limit": 2**70}, "invalid_limit", "limit"),
    ],
)
async def test_arguments_outside_the_schema_are_refused_with_the_http_codes(
    start: ServerFactory, memory_dir: Path, tool: str, args: dict[str, Any], code: str, field: str | None
) -> None:
    before = {p: p.read_bytes() for p in memory_dir.rglob("*.md")}
    async with mcp_session(await start()) as session:
        result = await session.call_tool(tool, args)
    error = error_of(result)
    assert error["code"] == code, error
    if field is not None:
        assert field in error["message"]
    assert "xxxxxxxxxx" not in error["message"]  # the rule broken is named, the value never echoed
    assert {p: p.read_bytes() for p in memory_dir.rglob("*.md")} == before  # nothing written


async def test_every_tool_answers_what_its_output_schema_says(start: ServerFactory, memory_dir: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_write", {"path": "topics/ops.md", "content": "## Billing\n- Billing closes on the 3rd."}),
        ("memory_write", {"path": "topics/ops.md", "content": "- Billing closes on the 3rd."}),  # a duplicate
        ("memory_read", {"path": "AGENT.md", "line_start": 1, "line_end": 2}),
        ("memory_search", {"query": "postgres", "context": "section"}),
        ("memory_search", {"query": "zebra crossings"}),
        ("memory_check_duplicate", {"content": "- Billing closes on the 3rd."}),
        ("memory_check_duplicate", {"content": "- Something new entirely."}),
        ("memory_remember", {"content": "Current sprint: Sprint 43", "topic_key": "sprint"}),
        ("memory_recall", {"query": "which sprint", "explain": True}),
        ("memory_feedback", {"topic_key": "sprint", "signal": "+"}),
        ("memory_session", {"session_id": "s-42", "summary": "Moved billing to the 3rd; Ana owns the export."}),
        ("memory_session", {"session_id": "s-42", "summary": "Moved billing to the 3rd; Ana owns the export."}),
        (
            "memory_session",
            {
                "session_id": "s-43",
                "messages": [
                    {"role": "user", "content": "We decided to run the invoice export at 02:00 UTC."},
                    {"role": "assistant", "content": "Noted: the export runs at 02:00 UTC from now on."},
                ],
            },
        ),
        ("kg_add", {"subject": "we", "predicate": "use", "object": "PostgreSQL 16", "valid_from": "2026-01-10"}),
        ("kg_query", {"entity": "we"}),
        ("kg_timeline", {"entity": "we"}),
        ("kg_traverse", {"entity": "we", "hops": 1}),
        ("kg_tunnels", {}),
        ("kg_stats", {}),
        ("memory_list", {}),
        ("memory_taxonomy", {}),
        ("memory_set_identity", {"identity": "I am Ledger, the billing agent."}),
        ("memory_diary_write", {"content": "Moved the report to 02:00 UTC."}),
        ("memory_diary_read", {"limit": 3}),
        ("memory_ingest", {"turns": [{"role": "user", "content": "We decided to ship on Fridays from now on."}]}),
        ("memory_delete", {"path": "topics/ops.md", "heading": "Billing"}),
        ("memory_forget", {"topic_key": "sprint"}),
    ]
    async with mcp_session(await start()) as session:
        tools = await listed(session)
        for name, args in calls:
            conforms(tools[name], await session.call_tool(name, args))
        fact = conforms(tools["kg_query"], await session.call_tool("kg_query", {"entity": "we"}))["facts"][0]
        conforms(tools["kg_invalidate"], await session.call_tool("kg_invalidate", {"fact_id": fact["id"]}))
        restored = await retire_and_restore(session, tools)
    assert {name for name, _ in calls} | {"kg_invalidate", "memory_restore"} == set(ALL)
    assert restored["status"] == "live" and restored["confidence"] >= 0.5


async def retire_and_restore(session: ClientSession, tools: dict[str, Tool]) -> dict[str, Any]:
    """A memory retired by three downvotes, served again by ``memory_restore``."""
    kept = conforms(
        tools["memory_remember"], await session.call_tool("memory_remember", {"content": "The VPN is Tailscale."})
    )
    votes = []
    while not votes or (votes[-1]["status"] != "retired" and len(votes) < 6):  # the third or fourth "-"
        vote = await session.call_tool("memory_feedback", {"id": kept["id"], "signal": "-"})
        votes.append(conforms(tools["memory_feedback"], vote))
    assert votes[-1]["status"] == "retired", votes
    gone = conforms(tools["memory_recall"], await session.call_tool("memory_recall", {"query": "VPN Tailscale"}))
    assert kept["id"] not in [hit["id"] for hit in gone["hits"]]  # retired: never recalled
    restored = conforms(tools["memory_restore"], await session.call_tool("memory_restore", {"id": kept["id"]}))
    back = conforms(tools["memory_recall"], await session.call_tool("memory_recall", {"query": "VPN Tailscale"}))
    assert kept["id"] in [hit["id"] for hit in back["hits"]]
    return restored


async def test_a_session_is_kept_once_and_recalled(start: ServerFactory) -> None:
    summary = "Moved the billing run to the 3rd of each month; Ana owns the invoice export."
    async with mcp_session(await start()) as session:
        tools = await listed(session)
        first = conforms(
            tools["memory_session"],
            await session.call_tool("memory_session", {"session_id": "s-9", "summary": summary}),
        )
        again = conforms(
            tools["memory_session"],
            await session.call_tool("memory_session", {"session_id": "s-9", "summary": summary}),
        )
        missing = error_of(await session.call_tool("memory_restore", {"id": "no-such-entry"}))
    assert first["replayed"] is False and again["replayed"] is True and again["id"] == first["id"]
    assert first["source_id"] == "s-9:0" and "billing" in first["l0_abstract"].lower()
    assert missing["code"] == "not_found"


async def test_memory_off_offers_nothing_and_refuses_every_call(start: ServerFactory, memory_dir: Path) -> None:
    async with mcp_session(await start(memory_enabled=False)) as session:
        assert await listed(session) == {}
        for name, args in [
            ("memory_search", {"query": "postgres"}),
            ("memory.write", {"path": "a.md", "content": "x"}),
            ("memory_restore", {"id": "e1"}),
            ("memory_session", {"session_id": "s1", "summary": "x"}),
        ]:
            error = error_of(await session.call_tool(name, args))
            assert error["code"] == "memory_disabled" and "memory is off" in error["message"]
        assert (await session.list_resources()).resources == []
        prompt = await session.get_prompt("memory_block", {"query": "postgres"})
    assert prompt.messages[0].content.text == ""  # type: ignore[union-attr]
    assert not (memory_dir / "a.md").exists()


async def test_mcp_tools_allowlist_narrows_the_list_and_the_calls(start: ServerFactory) -> None:
    async with mcp_session(await start(mcp_tools="core, kg_query memory.recall")) as session:
        assert list(await listed(session)) == [*GROUPS["core"], "memory_recall", "kg_query"]
        with pytest.raises(MCPError) as caught:
            await session.call_tool("memory_remember", {"content": "x"})
        assert caught.value.error.code == -32602 and "unknown tool" in caught.value.error.message
        assert (await session.call_tool("kg_query", {"entity": "we"})).is_error is True  # offered: answers


def test_an_unknown_allowlist_entry_stops_the_start(make_settings: Callable[..., Settings]) -> None:
    with pytest.raises(ConfigError, match="'memries'"):
        create_app(make_settings(mcp_tools="core,memries"))


async def test_the_files_are_resources_and_the_block_is_a_prompt(
    start: ServerFactory, aiohttp_client: Any, memory_dir: Path
) -> None:
    server = await start()
    async with mcp_session(server) as session:
        resources = (await session.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["memory://agent/AGENT.md", "memory://agent/daily/2026-05-14.md"]
        assert resources[0].mime_type == "text/markdown" and resources[0].size == len(AGENT_MD)
        read = await session.read_resource("memory://agent/AGENT.md")
        assert read.contents[0].text == AGENT_MD  # type: ignore[union-attr]
        with pytest.raises(MCPError):
            await session.read_resource("memory://agent/topics/none.md")
        with pytest.raises(MCPError):
            await session.read_resource("memory://agent/../escape.md")

        prompts = (await session.list_prompts()).prompts
        assert [p.name for p in prompts] == ["memory_block"]
        assert {a.name for a in prompts[0].arguments or []} == {"query", "budget", "role"}
        prompt = await session.get_prompt("memory_block", {"query": "which database", "budget": "3000"})
        with pytest.raises(MCPError):
            await session.get_prompt("memory_block", {"budget": "lots"})
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "[AGENT MEMORY]" in text and "PostgreSQL 16" in text
    client = await aiohttp_client(server)
    block = await (await client.post("/memory/block", json={"query": "which database", "budget": 3000})).json()
    assert text == block["text"]  # the route's own block, byte for byte


async def test_a_session_with_its_stream_open_is_told_when_its_tools_change(
    aiohttp_server: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """Over HTTP the client's stream (GET /mcp) carries the notice, once, when the tier goes past its
    cap by hand and the tools that only add go."""
    used = sum(len(p.read_bytes()) for p in memory_dir.rglob("*.md"))
    app = create_app(make_settings(tier_cap_bytes=used + 100))
    app.on_startup.append(sink_ttl(0.0))
    app[mcp_server.WATCH_EVERY] = 0.1
    server: TestServer = await aiohttp_server(app)
    notices: list[str] = []
    told = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            notices.append(message.method)
            told.set()

    url = str(server.make_url("/mcp"))
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        assert "memory_set_identity" in await listed(session)
        (memory_dir / "topics").mkdir(exist_ok=True)
        (memory_dir / "topics" / "copy.md").write_text(AGENT_MD)  # by hand: past the cap
        with anyio.fail_after(10):
            await told.wait()
        await anyio.sleep(0.5)  # several more looks: the same change is not told again
        after = await listed(session)
    assert notices == ["notifications/tools/list_changed"]
    assert "memory_set_identity" not in after and "memory_write" in after


def test_every_tool_runs_a_registry_operation_and_takes_only_what_its_route_takes() -> None:
    """The tools and the HTTP routes are two ways into the same operations: a tool's arguments are
    the route's fields or fewer (the agent's own identity is the sidecar's, not an argument)."""
    from sidecar.mcp.tools import tool_definitions
    from sidecar.ops.registry import OPERATIONS

    operations = {op.name: op for op in OPERATIONS}
    definitions = tool_definitions(Settings(role="lead"))
    for spec in TOOLS:
        op = operations[spec.operation]
        assert op.memory in ("read", "write"), spec.name  # memory off refuses every tool
        taken = (op.body or frozenset()) | (op.query or frozenset())
        if spec.name != "memory_check_duplicate":  # it shares search's admission, not its fields
            assert set(definitions[spec.name]["inputSchema"]["properties"]) <= taken, spec.name


def test_what_a_model_reads_of_the_tools_is_what_docs_mcp_says() -> None:
    """The figures docs/mcp.md gives for the tools' size (name, description and input schema as
    JSON, in characters), all of them and each group, are the measured ones, to within 5%."""
    import json

    from sidecar.mcp.tools import tool_definitions

    definitions = tool_definitions(Settings())

    def size(names: list[str] | tuple[str, ...]) -> int:
        return sum(
            len(n) + len(definitions[n]["description"]) + len(json.dumps(definitions[n]["inputSchema"])) for n in names
        )

    text = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()
    said = re.search(r"about ([\d,]+) characters for all (\d+), roughly ([\d,]+) tokens", text)
    assert said is not None
    total, count, tokens = (int(g.replace(",", "")) for g in said.groups())
    assert count == len(definitions) == len(ALL)
    assert abs(total - size(ALL)) <= 0.05 * size(ALL) and abs(tokens - total / 4) <= 0.05 * tokens
    for group, names in GROUPS.items():
        found = re.search(rf"`{group}`(?: alone is about)?\s+([\d,]+)", text)
        assert found is not None, group
        assert abs(int(found.group(1).replace(",", "")) - size(names)) <= 0.05 * size(names), group


async def test_every_tool_refuses_a_field_it_does_not_take_as_its_route_does(
    start: ServerFactory, memory_dir: Path
) -> None:
    """Walks the tool table: each tool, and the HTTP route of the operation it runs, refuse the
    same stray field with 400 unknown_field naming it, and nothing is written."""
    from aiohttp import ClientSession as HttpSession

    from sidecar.ops.registry import by_name

    server = await start()
    before = {p: p.read_bytes() for p in memory_dir.rglob("*.md")}
    async with mcp_session(server) as session, HttpSession(str(server.make_url("/"))) as http:
        for spec in TOOLS:
            error = error_of(await session.call_tool(spec.name, {"colour": "red"}))
            assert (error["code"], error.get("field")) == ("unknown_field", "colour"), (spec.name, error)
            op = by_name(spec.operation)
            if op.body is not None:
                resp = await http.request(op.method, op.path, json={"colour": "red"})
            else:
                resp = await http.request(op.method, op.path, params={"colour": "red"})
            routed = (await resp.json())["error"]
            assert resp.status == 400 and (routed["code"], routed["field"]) == ("unknown_field", "colour"), op.name
    assert {p: p.read_bytes() for p in memory_dir.rglob("*.md")} == before
