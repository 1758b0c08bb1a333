"""The composition root wires each tier's index to the search's flag cache: every commit tells it
which bytes the files it changed hold, so a hit is never marked with the verdicts on a file's
former bytes (the window itself: tests/retrieval/test_p79_flag_windows.py). Seen through the app:
a write committed by the index leaves the cache told of the file's new bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sidecar.http.state import SIDECAR
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.waiting import async_wait_until


async def test_every_tier_tells_the_flag_cache_what_its_index_holds(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client = await aiohttp_client(create_app(make_settings()))
    sidecar = client.server.app[SIDECAR]
    for tier in sidecar.tiers.values():
        assert sidecar.search.flags.held in tier.index.sync.on_held, tier.name
    resp = await client.post(
        "/memory/write", json={"path": "topics/wired.md", "content": "The wombat cluster deploys on Thursdays.\n"}
    )
    assert resp.status in (200, 201), await resp.text()
    digest = hashlib.blake2b((memory_dir / "topics/wired.md").read_bytes(), digest_size=16).digest()
    await async_wait_until(lambda: sidecar.search.flags._held.get(("agent", "topics/wired.md")) == digest, 30, 0.02)
