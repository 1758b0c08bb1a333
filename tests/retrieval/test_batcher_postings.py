"""With an embedder the tiers' BM25 postings are held in numpy's layout (numpy is loaded for the
dense leg anyway); without one they stay in arrays, and a BM25-only sidecar never imports numpy."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sidecar.index.postings import SmallSnapshot
from sidecar.index.tier import Tier
from sidecar.retrieval.batcher import open_embedding
from sidecar.retrieval.embed import Vectors
from sidecar.settings import Settings
from tests.support.waiting import async_wait_until


class Zeros:
    """An embedder that answers at once (what it answers does not matter here)."""

    model_id = "zeros"
    dim = 4

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ones((len(texts), self.dim), dtype=np.float32) / 2

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("embedder", [Zeros(), None], ids=["embedder", "bm25 only"])
async def test_the_postings_follow_the_embedder(tmp_path: Path, embedder: Zeros | None) -> None:
    (tmp_path / "note.md").write_text("# Note\n\nThe deploy pipeline runs nightly.\n")
    tier = Tier("agent", tmp_path)
    await tier.open()
    try:
        await tier.reconcile()
        tier.start_postings()
        async with open_embedding(Settings(), {"agent": tier}, embedder):
            await tier.reconcile()  # queued behind the writer thread's work, the rebuild included
            await async_wait_until(lambda: tier.index.postings.snapshot is not None, timeout=60)
            built = tier.index.postings.snapshot
            assert tier.index.postings.numpy is (embedder is not None)
            assert isinstance(built, SmallSnapshot) is (embedder is None)
            assert [h.path for h in await tier.search("deploy pipeline", 5)] == ["note.md"]
    finally:
        await tier.close()
