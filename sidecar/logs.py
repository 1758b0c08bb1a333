"""Structured logs: JSON lines when not on a terminal, key=value on one. Event names are stable
dotted strings (``index.reconciled``, ``write.durable``, ``watcher.restarted`` ...)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, TextIO

import orjson
import structlog

__all__ = ["configure_logging"]


def configure_logging(fmt: str = "auto", level: str = "info", stream: TextIO | None = None) -> None:
    """Configure structlog once for the process; ``fmt`` is auto, json or console.

    JSON lines are encoded by orjson and written as bytes: every memory write logs twice, and the
    standard encoder and the text layer were a fifth of the event loop's time under a write load.
    Nothing binds context variables, so they are not merged into every line."""
    out = stream or sys.stderr
    use_json = fmt == "json" or (fmt == "auto" and not out.isatty())
    binary: BinaryIO | None = getattr(out, "buffer", None)
    factory: Callable[..., Any] = structlog.PrintLoggerFactory(out)
    if use_json:
        renderer: structlog.types.Processor = structlog.processors.JSONRenderer(serializer=_json_line)
        if binary is not None:
            factory = structlog.BytesLoggerFactory(binary)
        else:  # a text stream only (tests): the same line as text
            renderer = structlog.processors.JSONRenderer(serializer=lambda e, **kw: _json_line(e, **kw).decode())
    else:
        from structlog.dev import ConsoleRenderer  # only a terminal pays for its imports

        renderer = ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=factory,
        cache_logger_on_first_use=True,
    )


def _json_line(event: dict[str, Any], **kw: Any) -> bytes:
    """One event as JSON; what orjson refuses (a path with surrogate escapes from an undecodable
    file name, an integer over 64 bits) goes through the standard encoder, ASCII-escaped."""
    try:
        return orjson.dumps(event, default=kw.get("default"), option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(event, default=repr, skipkeys=True).encode()
