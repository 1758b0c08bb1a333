"""Typed application state keys: every resource the app holds lives under one of these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.embed.base import Embedder

__all__ = ["EMBEDDER", "SETTINGS"]

SETTINGS = web.AppKey("settings", Settings)
# Set by the embedder's cleanup_ctx; None when no embedding model is configured or installed.
EMBEDDER: web.AppKey[Embedder | None] = web.AppKey("embedder")
