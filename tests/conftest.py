"""Shared fixtures: real memory dirs on disk, real settings, a real aiohttp server per test."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.server.app import create_app
from sidecar.settings import Settings, load_settings
from tests.support.memory import AGENT_MD, DAILY_MD, ClientFactory, write

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-14.md", DAILY_MD)
    return root


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "memory_dir": str(tmp_path / "memory"),
            "crew_dir": str(tmp_path / "crew"),
            "embedder": "none",
            "watch": "false",
            "reconcile_interval": "0",
            "crew_reindex_interval": "0",
        }
        values.update({k: str(v) for k, v in overrides.items()})
        return load_settings(values, environ={})

    return make


@pytest.fixture
def sidecar_client(aiohttp_client: Any, make_settings: Callable[..., Settings]) -> ClientFactory:
    """A real sidecar app on a real loopback server, configured by keyword overrides."""

    async def start(**overrides: Any) -> TestClient[Any, Any]:
        client: TestClient[Any, Any] = await aiohttp_client(create_app(make_settings(**overrides)))
        return client

    return start
