"""Clustering with the real in-process embedding model: the same fact in other words is merged,
lines that name someone else or another number are not; a whole consolidation clusters with the
model when it has one and by words alone when the model fails."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Sequence
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from sidecar.consolidate.cluster import cluster_lines
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.periods import Line
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.base import EmbedderUnavailable
from tests.support.embedding import needs_model

pytestmark = needs_model

SAME = ("- Deploys go through make ship on the bastion host.", "- We deploy with make ship from the bastion host.")
NAMES = ("- Talked with Alice about the retry budget.", "- Talked with Bob about the retry budget.")
NUMBERS = ("- The billing service listens on port 8080.", "- The billing service listens on port 8081.")


@pytest.fixture
async def model() -> AsyncIterator[OnnxEmbedder]:
    embedder = OnnxEmbedder()
    yield embedder
    await embedder.aclose()


async def test_the_model_merges_a_paraphrase_and_nothing_else(model: OnnxEmbedder) -> None:
    texts = [*SAME, *NAMES, *NUMBERS]
    lines = [Line(text, f"daily/2026-03-0{n + 1}.md", "Notes") for n, text in enumerate(texts)]
    by_words = cluster_lines(lines)
    with_model = cluster_lines(lines, vectors=await model.embed(texts))
    assert len(by_words) == 6  # words alone see six facts (a name or a number that differs keeps lines apart)
    assert [[m.text for m in c.members] for c in with_model] == [
        list(SAME),
        [NAMES[0]],
        [NAMES[1]],
        [NUMBERS[0]],
        [NUMBERS[1]],
    ]


def _tier(root: Path) -> None:
    monday = date(2026, 3, 2)
    for n, text in enumerate([*SAME, *NAMES]):
        note = root / "daily" / f"{(monday + timedelta(days=n)).isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"## Notes\n{text}\n")


async def test_a_consolidation_clusters_with_the_model_and_without_it_when_it_fails(
    model: OnnxEmbedder, tmp_path: Path
) -> None:
    async def failing(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise EmbedderUnavailable("down")

    with_model, failed = tmp_path / "model", tmp_path / "failed"
    _tier(with_model)
    shutil.copytree(with_model, failed)
    until = date(2026, 3, 16)
    run = consolidate(
        with_model, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False, embed=model.embed
    )
    report = await run
    assert [s.clustered_by for s in report.summaries] == ["words+embeddings"]
    assert [(d.text, d.reason, d.kept_as) for d in report.dropped] == [(SAME[1], "duplicate", SAME[0])]
    fallback = await consolidate(
        failed, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False, embed=failing
    )
    assert [s.clustered_by for s in fallback.summaries] == ["words"]
    assert fallback.dropped == []
    summary = (failed / "daily/summaries/2026-W10.md").read_text()
    assert SAME[0] in summary and SAME[1] in summary
