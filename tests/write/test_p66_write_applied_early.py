"""An append that leaves its file's flagged sections as they were is handed to the index by the
write thread itself, as soon as the file is in place: the reindex worker does not apply it again,
and the search with its ``after_seq`` finds it. A write the flag cache must hear of first (a
replace) is applied by the worker, as before."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from tests.support.applies import applied_by_worker
from tests.support.memory import ClientFactory

PATH = "topics/early.md"


async def written_and_found(client: Any, body: dict[str, Any], token: str) -> None:
    resp = await client.post("/memory/write", json=body)
    assert resp.status == 201, await resp.text()
    seq = (await resp.json())["seq"]
    resp = await client.post("/memory/search", json={"query": token, "limit": 10, "after_seq": seq})
    assert resp.status == 200
    assert PATH in [r["path"] for r in (await resp.json())["results"]]


async def test_an_append_is_applied_from_the_write_thread(
    sidecar_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await sidecar_client()
    await written_and_found(client, {"path": PATH, "content": "- the first line zqone"}, "zqone")
    calls = applied_by_worker(client.app[SIDECAR].queue.tiers["agent"], monkeypatch)
    for n in range(3):
        await written_and_found(client, {"path": PATH, "content": f"- another line zqmore{n}x"}, f"zqmore{n}x")
    assert calls == []


async def test_a_replace_is_applied_by_the_worker(
    sidecar_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await sidecar_client()
    await written_and_found(client, {"path": PATH, "content": "- the first line zqone"}, "zqone")
    calls = applied_by_worker(client.app[SIDECAR].queue.tiers["agent"], monkeypatch)
    await written_and_found(client, {"path": PATH, "content": "- all new zqreplaced", "mode": "replace"}, "zqreplaced")
    assert calls == [[PATH]]
