"""A chat model on loopback for the summariser's tests: a real aiohttp server answering both the
OpenAI-compatible and the Ollama chat routes with whatever handlers a test queues."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

from aiohttp import web
from pytest_aiohttp import AiohttpServer

__all__ = ["Handler", "Kind", "ModelServer", "answers", "chat_answer", "model_server"]

Kind = Literal["openai", "ollama"]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def chat_answer(kind: Kind, content: str, finish: str = "stop") -> dict[str, Any]:
    if kind == "openai":
        message = {"role": "assistant", "content": content}
        return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    return {"model": "m", "message": {"role": "assistant", "content": content}, "done": True, "done_reason": finish}


class ModelServer:
    """A real aiohttp server answering both chat routes with whatever handlers the test queues."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.handlers: list[Handler] = []
        self.release = asyncio.Event()
        self.url = ""

    async def route(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path, await request.json(), dict(request.headers)))
        handler = self.handlers.pop(0) if len(self.handlers) > 1 else self.handlers[0]
        return await handler(request)

    async def hang(self, request: web.Request) -> web.StreamResponse:
        await asyncio.wait_for(self.release.wait(), timeout=10)
        return web.json_response({})


async def model_server(aiohttp_server: AiohttpServer) -> AsyncIterator[ModelServer]:
    """The server, started; a fixture yields from it."""
    model = ModelServer()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", model.route)
    app.router.add_post("/api/chat", model.route)
    test_server = await aiohttp_server(app, host="127.0.0.1")
    model.url = str(test_server.make_url("")).rstrip("/")
    yield model
    model.release.set()


def answers(kind: Kind, content: str, finish: str = "stop") -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.json_response(chat_answer(kind, content, finish))

    return handler
