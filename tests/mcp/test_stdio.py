"""``memory-sidecar mcp`` over stdio, driven by the official client in a real subprocess (in process
over a memory dir, and forwarding to a running sidecar), and the same checks over streamable HTTP
against a real ``memory-sidecar serve``: names every client accepts, write then search, an argument
outside the schema refused, every result matching its output schema, resources and the prompt."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from sidecar.mcp.catalog import NAME_PATTERN, TOOLS
from tests.support.memory import AGENT_MD, DAILY_MD, write
from tests.support.procs import SidecarProcess, start_sidecar
from tests.support.served import ServedApp, served_app

ENV = {"MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_WATCH": "false", "ORT_DISABLE_TELEMETRY": "1"}


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "sidecar", "mcp", *args], env=ENV)


@asynccontextmanager
async def over_stdio(*args: str, **session: Any) -> AsyncIterator[ClientSession]:
    async with stdio_client(stdio(*args)) as (read, write), ClientSession(read, write, **session) as client:
        await client.initialize()
        yield client


def a_memory_dir(root: Path) -> Path:
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-14.md", DAILY_MD)
    return root


@pytest.fixture(scope="module")
def served_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return a_memory_dir(tmp_path_factory.mktemp("served") / "memory")


@pytest.fixture(scope="module")
def sidecar(served_dir: Path) -> Iterator[SidecarProcess]:
    """One sidecar for the tests that reach it through a client: each writes a note of its own
    (``the_checks``' ``cat``) and reads only that one back."""
    side = start_sidecar(served_dir)
    yield side
    side.stop()


async def the_checks(session: ClientSession, memory_dir: Path, cat: str = "Miso") -> None:
    """What a client of any transport gets: the same tools, schemas, results, resources and prompt.
    ``cat`` names the note this run writes (``topics/<cat>.md``): tests sharing a sidecar each
    write and find their own."""
    note, text = f"topics/{cat.lower()}.md", f"- The office cat is {cat}."
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert list(tools) == [t.name for t in TOOLS]
    assert all(NAME_PATTERN.fullmatch(name) for name in tools)

    def conforms(name: str, result: Any) -> dict[str, Any]:
        assert result.is_error is False, result.content
        schema = tools[name].output_schema
        assert schema is not None and result.structured_content is not None
        Draft202012Validator(schema).validate(result.structured_content)
        return dict(result.structured_content)

    wrote = conforms(
        "memory_write",
        await session.call_tool("memory_write", {"path": note, "content": text}),
    )
    found = conforms(
        "memory_search", await session.call_tool("memory_search", {"query": cat.lower(), "after_seq": wrote["seq"]})
    )
    assert [hit["path"] for hit in found["results"]] == [note]
    assert (memory_dir / note).read_text() == text
    conforms("memory_read", await session.call_tool("memory_read", {"path": "AGENT.md"}))
    conforms(
        "memory_remember",
        await session.call_tool("memory_remember", {"content": "Deploys on Tuesdays", "topic_key": "deploy-day"}),
    )
    conforms("kg_stats", await session.call_tool("kg_stats", {}))
    conforms("memory_list", await session.call_tool("memory_list", {}))

    refused = await session.call_tool("memory_search", {"query": "office cat", "limt": 2})
    assert refused.is_error is True and refused.structured_content is not None
    assert (
        refused.structured_content["error"]["code"] == "unknown_field"
        and "limt" in refused.structured_content["error"]["message"]
    )
    typed = await session.call_tool("memory_write", {"path": note, "content": 7})
    assert typed.is_error is True and typed.structured_content is not None
    assert typed.structured_content["error"]["code"] == "invalid_content"
    assert (memory_dir / note).read_text() == text

    uris = [str(r.uri) for r in (await session.list_resources()).resources]
    assert "memory://agent/AGENT.md" in uris and f"memory://agent/{note}" in uris
    read = await session.read_resource("memory://agent/AGENT.md")
    assert read.contents[0].text == AGENT_MD  # type: ignore[union-attr]
    assert [p.name for p in (await session.list_prompts()).prompts] == ["memory_block"]
    block = await session.get_prompt("memory_block", {"query": f"office cat {cat}"})
    assert text[2:] in block.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.slow
async def test_stdio_in_process_over_a_memory_dir(memory_dir: Path) -> None:
    async with over_stdio("--memory-dir", str(memory_dir)) as session:
        assert session.server_capabilities is not None
        tools = session.server_capabilities.tools
        assert tools is not None and tools.list_changed is True  # this transport can say so
        await the_checks(session, memory_dir)


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_stdio_forwards_to_a_running_sidecar(sidecar: SidecarProcess, served_dir: Path) -> None:
    async with over_stdio("--url", sidecar.url) as session:
        await the_checks(session, served_dir, "Tofu")
    found = httpx.post(f"{sidecar.url}/memory/search", json={"query": "tofu"}).json()
    assert [hit["path"] for hit in found["results"]] == ["topics/tofu.md"]  # the running sidecar wrote it


async def test_streamable_http_against_a_real_sidecar(sidecar: SidecarProcess, served_dir: Path) -> None:
    async with (
        streamable_http_client(f"{sidecar.url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.capabilities.tools is not None and init.capabilities.tools.list_changed is True
        await the_checks(session, served_dir, "Nori")


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_on_a_dir_a_sidecar_serves_it_forwards_to_that_sidecar(sidecar: SidecarProcess, served_dir: Path) -> None:
    async with over_stdio("--memory-dir", str(served_dir), "--port", str(sidecar.port)) as session:
        await the_checks(session, served_dir, "Yuzu")
    found = httpx.post(f"{sidecar.url}/memory/search", json={"query": "yuzu"}).json()
    assert [hit["path"] for hit in found["results"]] == ["topics/yuzu.md"]  # the running sidecar wrote it


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
def test_a_dir_served_elsewhere_is_refused_naming_the_url_to_give(sidecar: SidecarProcess, served_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "mcp", "--memory-dir", str(served_dir), "--port", "9"],
        input=b"",
        capture_output=True,
        timeout=60,
        env={**ENV, "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 1, done.stderr
    assert b"already serves" in done.stderr and b"memory-sidecar mcp --url http://" in done.stderr
    assert done.stdout == b""  # stdout is the protocol: nothing else on it


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_a_changed_tool_list_is_announced_once_listed(tmp_path: Path, memory_dir: Path) -> None:
    """Past the tier's cap the tools that only add go; a client that listed the tools is told."""
    used = sum(len(p.read_bytes()) for p in memory_dir.rglob("*.md"))
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    args = ("--memory-dir", str(memory_dir), "--tier-cap-bytes", str(used + 100))
    async with over_stdio(*args, message_handler=on_message) as session:
        before = [tool.name for tool in (await session.list_tools()).tools]
        assert "memory_set_identity" in before
        (memory_dir / "topics").mkdir(exist_ok=True)
        shutil.copy(memory_dir / "AGENT.md", memory_dir / "topics" / "copy.md")  # by hand: past the cap
        with anyio.fail_after(30):
            await changed.wait()
        after = [tool.name for tool in (await session.list_tools()).tools]
    assert "memory_set_identity" not in after and "memory_write" in after and "memory_delete" in after


TOKEN = "stdio-forwarding-token"


@pytest.fixture(scope="module")
def guarded_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return a_memory_dir(tmp_path_factory.mktemp("guarded") / "memory")


@pytest.fixture(scope="module")
def guarded(guarded_dir: Path) -> Iterator[ServedApp]:
    """A sidecar that wants ``Authorization: Bearer TOKEN`` on every request, shared as ``sidecar`` is:
    the application served from this process (the forwarding ``memory-sidecar mcp`` process is what
    these tests are about; ``sidecar`` is a real ``serve`` process)."""
    with served_app(guarded_dir, api_token=TOKEN) as side:
        yield side


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_forwarding_sends_the_api_token_from_the_flag(guarded: ServedApp, guarded_dir: Path) -> None:
    assert httpx.get(f"{guarded.url}/memory/status").status_code == 401  # the token is needed
    async with over_stdio("--url", guarded.url, "--api-token", TOKEN) as session:
        await the_checks(session, guarded_dir, "Soba")


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_forwarding_to_the_sidecar_serving_the_dir_sends_the_token_from_the_environment(
    guarded: ServedApp, guarded_dir: Path
) -> None:
    params = stdio("--memory-dir", str(guarded_dir), "--port", str(guarded.port))
    params.env = {**ENV, "MEMORY_SIDECAR_API_TOKEN": TOKEN}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await the_checks(session, guarded_dir, "Udon")


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_forwarding_without_the_token_says_which_one_to_give(guarded: ServedApp) -> None:
    async with over_stdio("--url", guarded.url) as session:
        with pytest.raises(Exception, match="wants its API token: give --api-token or set MEMORY_SIDECAR_API_TOKEN"):
            await session.list_tools()


@pytest.mark.slow  # a memory-sidecar mcp process: ~1.6-2.2 s of CPU
async def test_memory_off_over_stdio_offers_no_memory_tool_and_refuses_one(memory_dir: Path) -> None:
    """The stdio way in keeps the rule too: with the agent's memory off, no memory tool is listed
    and one called by name is refused, reading and writing nothing."""
    (memory_dir / "memory.toml").write_text("memory = false\n")
    before = {p: p.read_bytes() for p in memory_dir.rglob("*.md")}
    async with over_stdio("--memory-dir", str(memory_dir)) as session:
        assert (await session.list_tools()).tools == []
        for name, arguments in (("memory_search", {"query": "postgres"}), ("memory_remember", {"content": "Go"})):
            result = await session.call_tool(name, arguments)
            assert result.is_error is True and "memory_disabled" in str(result.content), (name, result.content)
    assert {p: p.read_bytes() for p in memory_dir.rglob("*.md")} == before  # nothing written
    with closing(sqlite3.connect(memory_dir / "index.sqlite")) as index:  # the stores open empty: nothing indexed
        assert index.execute("SELECT count(*) FROM files").fetchone() == (0,)
        assert index.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
