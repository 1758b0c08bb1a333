"""Every palace tool through MCP with the official client, against a real sidecar on real files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestServer
from mcp_types import CallToolResult, TextContent

from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.mcp import mcp_session
from tests.support.memory import write
from tests.support.palace import load_conversation, score

PALACE_TOOLS = {
    "memory_list",
    "memory_taxonomy",
    "memory_delete",
    "memory_set_identity",
    "memory_diary_write",
    "memory_diary_read",
    "memory_ingest",
}


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


def body_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def test_every_palace_tool_round_trips(
    aiohttp_server: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    write(memory_dir, "topics/deploy.md", "# Deploy\n## Staging\nStaging first.\n## Legacy\nFTP uploads.\n")
    server: TestServer = await aiohttp_server(create_app(make_settings()))
    async with mcp_session(server) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) >= PALACE_TOOLS
        assert tools["memory_delete"].annotations is not None and tools["memory_delete"].annotations.destructive_hint
        assert tools["memory_list"].annotations is not None and tools["memory_list"].annotations.read_only_hint
        assert tools["memory_delete"].input_schema["properties"]["tier"]["enum"] == ["agent"]  # solo

        listed = await session.call_tool("memory_list", {"room": "topics"})
        assert [f["path"] for f in body_of(listed)["files"]] == ["topics/deploy.md"]
        assert "agent/topics/deploy.md (topics)" in text_of(listed)

        taxonomy = body_of(await session.call_tool("memory_taxonomy", {}))
        rooms = {r["room"] for w in taxonomy["wings"] if w["wing"] == "agent" for r in w["rooms"]}
        assert rooms == {"evergreen", "daily", "topics"}

        deleted = await session.call_tool("memory_delete", {"path": "topics/deploy.md", "heading": "Legacy"})
        assert body_of(deleted)["deleted"] == "section" and "Deleted the section 'Legacy'" in text_of(deleted)
        assert "FTP" not in (memory_dir / "topics/deploy.md").read_text()
        missing = await session.call_tool("memory_delete", {"path": "topics/nope.md"})
        assert missing.is_error is True and "file_not_found" in text_of(missing)

        identity = await session.call_tool("memory_set_identity", {"identity": "I am Ledger, the billing agent."})
        assert body_of(identity)["path"] == "identity.md"
        assert (memory_dir / "identity.md").read_text() == "I am Ledger, the billing agent.\n"
        too_long = await session.call_tool("memory_set_identity", {"identity": "x" * 3000})
        assert too_long.is_error is True and "identity_too_long" in text_of(too_long)

        wrote = body_of(await session.call_tool("memory_diary_write", {"content": "Moved the report to 02:00 UTC."}))
        assert wrote["path"].startswith("daily/") and wrote["agent_id"] == "agent"
        read = await session.call_tool("memory_diary_read", {"limit": 5})
        assert [e["content"] for e in body_of(read)["entries"]] == ["Moved the report to 02:00 UTC."]
        assert "Moved the report" in text_of(read)

        turns = load_conversation()
        args = {"turns": [{"role": t.role, "content": t.content} for t in turns]}
        ingested = await session.call_tool("memory_ingest", args)
        report = body_of(ingested)
        scores = score(turns, [(k["index"], k["type"]) for k in report["kept"]])
        assert scores.precision >= 0.95 and scores.recall >= 0.9
        assert text_of(ingested).startswith(f"Kept {report['counts']['kept']} turns")
        bad = await session.call_tool("memory_ingest", {"turns": []})
        assert bad.is_error is True and json.loads(json.dumps(bad.structured_content))["error"]["code"] == (
            "invalid_turns"
        )
