"""The memory block as an MCP prompt: ``memory_block``, for a client to put in the system prompt.

The block is what ``POST /memory/block`` answers, built by that route's own handler: the route
holds the whole assembly (search rankings, recalled memories, the journal's essentials and nudges,
the graph's facts), and this module hands it the prompt's arguments as a request body, so the
prompt and the route cannot drift apart. With memory off the route answers an empty block, and so
does the prompt.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from sidecar.errors import BadRequest, NotFound

__all__ = ["PROMPT", "get", "listed"]

PROMPT = "memory_block"
_ARGUMENTS = (
    ("query", "what the conversation is about now: memory relevant to it is recalled into the block"),
    ("budget", "the block's size in characters (default: the sidecar's prompt budget)"),
    ("role", "the agent's role, for the crew's memory"),
)


def listed(app: web.Application) -> list[dict[str, Any]]:
    return [
        {
            "name": PROMPT,
            "title": "Memory block",
            "description": "This agent's memory for its system prompt: identity and pins, the evergreen "
            "facts, today's notes, the crew's shared memory, and with a query what memory recalls about it. "
            "Sections the injection scanner flags are withheld.",
            "arguments": [{"name": name, "description": text, "required": False} for name, text in _ARGUMENTS],
        }
    ]


async def get(app: web.Application, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The prompt: the block's text as one user message, described by what it holds."""
    if name != PROMPT:
        raise NotFound(f"no such prompt: {name!r} (there is {PROMPT})", code="no_such_prompt")
    body = _body(arguments)
    answer = await _block(app, body)
    text = str(answer["text"])
    described = f"Memory block: {answer['used']} of {answer['budget']} characters"
    if answer.get("omitted"):
        described += f", {len(answer['omitted'])} parts left out for the budget"
    return {
        "description": described,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }


def _body(arguments: dict[str, Any]) -> dict[str, Any]:
    """The block request for the prompt's arguments (MCP gives them as strings)."""
    unknown = sorted(set(arguments) - {name for name, _ in _ARGUMENTS})
    if unknown:
        raise BadRequest(f"unknown argument: {unknown[0]}", code="unknown_field", field=unknown[0])
    body: dict[str, Any] = {k: v for k, v in arguments.items() if v not in (None, "")}
    if "budget" in body:
        try:
            body["budget"] = int(body["budget"])
        except (TypeError, ValueError):
            raise BadRequest("budget must be a whole number of characters", code="invalid_budget") from None
    return body


async def _block(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /memory/block``'s answer for ``body``: the same function the route runs."""
    from sidecar.contract import BlockRequest
    from sidecar.http.state import SIDECAR
    from sidecar.ops.block import block

    sc = app[SIDECAR]
    return dict(await block(sc, BlockRequest.from_json(body, sc.settings)))
