"""Merging near-duplicate typed memories clusters every live memory of the workspace (up to ten
thousand, a third of a second of CPU): it does so on a thread, so the event loop answers every other
route meanwhile. Observed on a real sidecar app and journal by wrapping the clustering, which still
does its work."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.consolidate import memories
from sidecar.server.app import create_app
from sidecar.settings import Settings


async def test_memories_are_clustered_off_the_event_loop(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client: TestClient[Any, Any] = await aiohttp_client(create_app(make_settings()))
    ids = []
    for text in (
        "Deploys go through make ship on the bastion host",
        "deploys go through `make ship` on the bastion host.",
    ):
        resp = await client.post("/memory/remember", json={"content": text, "memory_type": "fact"})
        assert resp.status == 201, await resp.text()
        ids.append((await resp.json())["id"])
    threads: list[threading.Thread] = []
    clustering = memories.cluster_lines

    def watched(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return clustering(*args, **kwargs)

    monkeypatch.setattr(memories, "cluster_lines", watched)
    resp = await client.post("/memory/consolidate", json={"dry_run": True})
    assert resp.status == 200, await resp.text()
    merged = (await resp.json())["memories_merged"]
    assert len(merged) == 1 and sorted([merged[0]["kept"], *merged[0]["merged"]]) == sorted(ids)
    assert threads and threading.main_thread() not in threads, threads
