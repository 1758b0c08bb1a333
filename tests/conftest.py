"""Shared fixtures: real memory dirs on disk, real settings, a real aiohttp server per test."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import structlog
from aiohttp.test_utils import TestClient

from sidecar.server.app import create_app
from sidecar.settings import Settings, load_settings
from tests.support.memory import AGENT_MD, DAILY_MD, ClientFactory, write


@pytest.fixture(autouse=True)
def _loggers_read_the_config_in_force() -> None:
    """Each test's module loggers follow the structlog configuration of the moment, so
    ``capture_logs`` sees what a test provokes. A command run in process (or ``tests/server/
    test_logs.py``) configures logging as the sidecar does, caching each logger on first use: a
    logger first used then would keep writing past every later capture in that worker."""
    if not structlog.get_config()["cache_logger_on_first_use"]:
        return  # nothing configured caching since the last test: no logger can be cached
    structlog.configure(cache_logger_on_first_use=False)
    lazy = structlog._config.BoundLoggerLazyProxy
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("sidecar"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, lazy) and "bind" in vars(value):
                del value.bind  # the cached logger: the class's bind reads the config again


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
