"""Serving the agent API beyond loopback takes an explicit --allow-remote and a token, and then
every request but /healthz carries it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from sidecar.errors import ConfigError
from sidecar.settings import load_settings
from tests.support.procs import start_sidecar


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "lead.internal"])
def test_a_non_loopback_host_needs_allow_remote_and_a_token(host: str) -> None:
    with pytest.raises(ConfigError, match="--allow-remote"):
        load_settings({"host": host}, environ={})
    with pytest.raises(ConfigError, match="--api-token"):
        load_settings({"host": host, "allow_remote": True}, environ={})
    assert load_settings({"host": host, "allow_remote": True, "api_token": "s3cret"}, environ={}).allow_remote


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_needs_nothing(host: str) -> None:
    assert load_settings({"host": host}, environ={}).host == host


def test_with_a_token_every_request_but_healthz_carries_it(memory_dir: Path) -> None:
    side = start_sidecar(memory_dir, "--api-token", "s3cret")
    try:
        assert httpx.get(f"{side.url}/healthz").status_code == 200
        refused = httpx.post(f"{side.url}/memory/search", json={"query": "postgres"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        wrong = httpx.post(f"{side.url}/memory/search", json={"query": "x"}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = httpx.post(
            f"{side.url}/memory/search", json={"query": "postgres"}, headers={"Authorization": "bearer s3cret"}
        )
        assert ok.status_code == 200 and ok.json()["results"]
    finally:
        side.stop()


def test_an_open_tier_dir_is_tightened_at_start(memory_dir: Path) -> None:
    memory_dir.chmod(0o755)
    side = start_sidecar(memory_dir)
    try:
        assert memory_dir.stat().st_mode & 0o777 == 0o700
        assert "tier.mode_tightened" in side.log_text()
    finally:
        side.stop()
