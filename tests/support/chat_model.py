"""A stand-in chat model on loopback that speaks OpenAI's real wire protocols (``POST
/v1/chat/completions`` and ``POST /v1/responses``, JSON or server-sent events), so an agent
framework (the OpenAI Agents SDK, LangGraph with ``langchain-openai``) runs unchanged against it,
with no network.

It is a model with one habit, enough to show an agent uses memory: given a question and a tool
named ``memory_search`` it calls that tool with the question as the query; given the tool's
answer it replies "From memory: " and the answer's text. Every request is kept, so a test can see
which tools the framework offered the model and what the tool gave back.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["ChatModel", "chat_model"]

SEARCH_TOOL = "memory_search"
MODEL = "stand-in-1"


@dataclass
class ChatModel:
    """The server's record: each request's path and body, and where it listens."""

    url: str = ""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def offered_tools(self) -> list[str]:
        """The tool names the framework offered in its first request."""
        _, body = self.requests[0]
        return [_tool_name(tool) for tool in body.get("tools") or []]

    def tool_outputs(self) -> list[str]:
        """The tool results the framework sent back to the model, in order."""
        outputs = []
        for path, body in self.requests:
            if path.endswith("/responses"):
                items = body.get("input")
                outputs += [
                    str(i["output"])
                    for i in (items if isinstance(items, list) else [])
                    if i.get("type") == "function_call_output"
                ]
            else:
                outputs += [_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]
        return outputs


def _tool_name(tool: dict[str, Any]) -> str:
    return str(tool["function"]["name"] if "function" in tool else tool["name"])


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _decide(question: str, tool_output: str | None, tools: list[str]) -> tuple[str, dict[str, Any] | str]:
    """("call", arguments) or ("say", text): the model's one habit."""
    if tool_output is not None:
        return "say", f"From memory: {tool_output}"
    if SEARCH_TOOL in tools:
        return "call", {"query": question}
    return "say", "I have no memory tool."


# -- chat completions ------------------------------------------------------------------------------
def _chat(body: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
    tool_output = _text(last.get("content")) if last.get("role") == "tool" else None
    question = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    return _decide(question, tool_output, [_tool_name(t) for t in body.get("tools") or []])


def _chat_answer(decision: tuple[str, dict[str, Any] | str], n: int) -> dict[str, Any]:
    kind, value = decision
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if kind == "call":
        message["tool_calls"] = [
            {"id": f"call_{n}", "type": "function", "function": {"name": SEARCH_TOOL, "arguments": json.dumps(value)}}
        ]
        finish = "tool_calls"
    else:
        message["content"], finish = value, "stop"
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chat_chunks(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The same answer as ``stream: true`` sends it: a delta, then the finish."""
    choice = answer["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if "tool_calls" in choice["message"]:
        delta["tool_calls"] = [{"index": 0, **call} for call in choice["message"]["tool_calls"]]
    base = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    return [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        base | {"choices": [], "usage": answer["usage"]},
    ]


# -- responses ---------------------------------------------------------------------------------------
def _responses(body: dict[str, Any]) -> tuple[str, dict[str, Any] | str]:
    items = body.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else list(items or [])
    last = items[-1] if items else {}
    tool_output = str(last["output"]) if last.get("type") == "function_call_output" else None
    question = next((_text(i.get("content")) for i in reversed(items) if i.get("role") == "user"), "")
    return _decide(question, tool_output, [_tool_name(t) for t in body.get("tools") or []])


def _response_answer(decision: tuple[str, dict[str, Any] | str], n: int) -> dict[str, Any]:
    kind, value = decision
    if kind == "call":
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": SEARCH_TOOL,
            "arguments": json.dumps(value),
            "status": "completed",
        }
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": value, "annotations": []}],
        }
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "model": MODEL,
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "text": {"format": {"type": "text"}},
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }


def _response_events(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The same answer as ``stream: true`` sends it: created, the item done, completed."""
    started = answer | {"status": "in_progress", "output": []}
    item = answer["output"][0]
    return [
        {"type": "response.created", "sequence_number": 0, "response": started},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": item},
        {"type": "response.completed", "sequence_number": 3, "response": answer},
    ]


async def _sse(request: web.Request, events: list[dict[str, Any]], *, done: bool) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for event in events:
        name = f"event: {event['type']}\n" if "type" in event and not done else ""
        await response.write(f"{name}data: {json.dumps(event)}\n\n".encode())
    if done:
        await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


@asynccontextmanager
async def chat_model() -> AsyncIterator[ChatModel]:
    """The server, listening on a free loopback port, until the block ends."""
    model = ChatModel()

    async def completions(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model.requests.append((request.path, body))
        answer = _chat_answer(_chat(body), len(model.requests))
        if body.get("stream"):
            return await _sse(request, _chat_chunks(answer), done=True)
        return web.json_response(answer)

    async def responses(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        model.requests.append((request.path, body))
        answer = _response_answer(_responses(body), len(model.requests))
        if body.get("stream"):
            return await _sse(request, _response_events(answer), done=False)
        return web.json_response(answer)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/v1/responses", responses)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    model.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield model
    finally:
        await runner.cleanup()
