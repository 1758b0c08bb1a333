"""An ordinary hybrid search's query model run computes on threads whose nice value is raised
(``hybrid.ORDINARY_NICE``), so that when the cores are short the write path, the event loop and
urgent work (a search with ``after_seq``) get them first; the urgent search's model run stays at the
process's own priority. Over HTTP with the real model."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from sidecar.retrieval import hybrid as hybrid_module
from tests.support.embedding import all_embedded, needs_model
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


async def _embedded(client: Any) -> bool:
    return all_embedded((await (await client.get("/memory/status")).json())["embedder"])


@needs_model
@pytest.mark.slow
async def test_an_ordinary_searchs_model_run_is_niced_and_an_urgent_ones_is_not(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    write(memory_dir, "topics/work.md", "# Work\n\nThe deploy pipeline runs nightly once the smoke tests are green.\n")
    client = await sidecar_client(embedder="onnx", after_seq_timeout=HANG_S)
    await async_wait_until(lambda: _embedded(client), timeout=HANG_S)
    embedder = client.server.app[SIDECAR].hybrid.embedder
    runs: list[tuple[str, int]] = []  # (the texts' first, the nice value of the thread that ran them)
    compute = embedder._embed_foreground

    def recorded(texts: list[str]) -> Any:
        runs.append((texts[0], _nice()))
        return compute(texts)

    embedder._embed_foreground = recorded
    own = _nice()  # the process's own, which the loop's threads keep
    resp = await client.post("/memory/search", json={"query": "nightly deploy pipeline"})
    assert resp.status == 200, await resp.text()
    wrote = await client.post(
        "/memory/write", json={"path": "topics/garden.md", "content": "- the quince tree flowers"}
    )
    assert wrote.status == 201, await wrote.text()
    resp = await client.post(
        "/memory/search", json={"query": "quince tree flowers", "after_seq": (await wrote.json())["seq"]}
    )
    assert resp.status == 200, await resp.text()
    assert [r["path"] for r in (await resp.json())["results"]][:1] == ["topics/garden.md"]
    assert dict(runs) == {
        "nightly deploy pipeline": min(19, own + hybrid_module.ORDINARY_NICE),
        "quince tree flowers": own,
    }
