"""An OpenAI Agents SDK agent with memory-sidecar's tools over MCP.

    pip install openai-agents
    python memory_agent.py --memory-dir ~/.memory "When do deploys go out?"          # stdio
    python memory_agent.py --url http://127.0.0.1:9119/mcp "When do deploys go out?" # streamable HTTP

Over stdio the SDK starts ``memory-sidecar mcp`` itself (in process over the memory dir, or
forwarding to the sidecar that serves it); over streamable HTTP it talks to a running
``memory-sidecar serve``. The model is OpenAI's (``OPENAI_API_KEY``), or any server speaking its
API (``OPENAI_BASE_URL``); ``OPENAI_MODEL`` names it. A sidecar started with ``--api-token``
wants the same token: set ``MEMORY_SIDECAR_API_TOKEN`` (sent as ``Authorization: Bearer`` over
HTTP, passed on to ``memory-sidecar mcp`` over stdio).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from agents import Agent, Runner
from agents.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp

INSTRUCTIONS = (
    "You have a durable memory. Search it (memory_search) before answering from memory, and save "
    "what is worth keeping (memory_write, memory_remember)."
)


def memory_server(args: argparse.Namespace) -> MCPServer:
    token = os.environ.get("MEMORY_SIDECAR_API_TOKEN", "")
    if args.url:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return MCPServerStreamableHttp(
            {"url": args.url, "headers": headers}, name="memory", client_session_timeout_seconds=30
        )
    command = [*args.command.split(), "mcp", "--memory-dir", args.memory_dir]
    return MCPServerStdio(
        {"command": command[0], "args": command[1:], "env": dict(os.environ)},
        name="memory",
        client_session_timeout_seconds=30,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("question")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running sidecar's MCP endpoint, e.g. http://127.0.0.1:9119/mcp")
    where.add_argument("--memory-dir", help="the memory dir, served over stdio by memory-sidecar mcp")
    parser.add_argument("--command", default="memory-sidecar", help="how to run memory-sidecar (stdio)")
    args = parser.parse_args()
    async with memory_server(args) as memory:
        agent = Agent(
            name="assistant",
            instructions=INSTRUCTIONS,
            mcp_servers=[memory],
            model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
        )
        result = await Runner.run(agent, args.question)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
