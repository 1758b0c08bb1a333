"""Structured logs: JSON lines when not on a terminal, key=value on one. Event names are stable
dotted strings (``index.reconciled``, ``write.durable``, ``watcher.restarted`` ...)."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

__all__ = ["configure_logging"]


def configure_logging(fmt: str = "auto", level: str = "info", stream: TextIO | None = None) -> None:
    """Configure structlog once for the process; ``fmt`` is auto, json or console."""
    out = stream or sys.stderr
    use_json = fmt == "json" or (fmt == "auto" and not out.isatty())
    if use_json:
        renderer: structlog.types.Processor = structlog.processors.JSONRenderer()
    else:
        from structlog.dev import ConsoleRenderer  # only a terminal pays for its imports

        renderer = ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=True,
    )
