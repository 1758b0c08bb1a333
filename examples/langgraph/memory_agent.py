"""A LangGraph agent with memory-sidecar's tools over MCP, loaded by ``langchain-mcp-adapters``.

    pip install langgraph langchain-mcp-adapters langchain-openai    # in the agent's own venv
    python memory_agent.py --url http://127.0.0.1:9119/mcp "When do deploys go out?"    # streamable HTTP
    python memory_agent.py --memory-dir ~/.memory "When do deploys go out?"             # stdio

``langchain-mcp-adapters`` needs the MCP SDK 1.x and the sidecar runs on 2.x, so the agent lives
in a venv of its own and reaches the sidecar as any MCP client does: over streamable HTTP, or by
starting ``memory-sidecar mcp`` (``--command``, the sidecar's venv) over stdio. The model is
OpenAI's (``OPENAI_API_KEY``) or any server speaking its chat completions API
(``OPENAI_BASE_URL``); ``OPENAI_MODEL`` names it. A sidecar started with ``--api-token`` wants the
same token in ``MEMORY_SIDECAR_API_TOKEN``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

INSTRUCTIONS = (
    "You have a durable memory. Search it (memory_search) before answering from memory, and save "
    "what is worth keeping (memory_write, memory_remember)."
)


def connection(args: argparse.Namespace) -> dict[str, Any]:
    token = os.environ.get("MEMORY_SIDECAR_API_TOKEN", "")
    if args.url:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return {"transport": "streamable_http", "url": args.url, "headers": headers}
    command = [*args.command.split(), "mcp", "--memory-dir", args.memory_dir]
    return {"transport": "stdio", "command": command[0], "args": command[1:], "env": dict(os.environ)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("question")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running sidecar's MCP endpoint, e.g. http://127.0.0.1:9119/mcp")
    where.add_argument("--memory-dir", help="the memory dir, served over stdio by memory-sidecar mcp")
    parser.add_argument("--command", default="memory-sidecar", help="how to run memory-sidecar (stdio)")
    args = parser.parse_args()

    tools = await MultiServerMCPClient({"memory": connection(args)}).get_tools()
    model = ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")).bind_tools(tools)

    async def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke([SystemMessage(INSTRUCTIONS), *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    result = await graph.compile().ainvoke({"messages": [("user", args.question)]})
    print(result["messages"][-1].content)


if __name__ == "__main__":
    asyncio.run(main())
