"""The knowledge graph's lift reorders an answer's hits by their lifted scores; a line that a newer
line restates with another value still ranks below that newer line (``standing.restated_first``),
whatever the lift gave it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.bm25 import RankedChunk
from sidecar.index.snippet import query_tokens
from sidecar.kg.boost import BoostPlan
from sidecar.retrieval.hybrid import _bm25_only

TODAY = datetime.now(UTC).date()
TERMS = query_tokens(["boiler", "service"])


def _hit(at: int, ago: int, text: str, score: float) -> RankedChunk:
    return RankedChunk(at, f"daily/{TODAY - timedelta(days=ago)}.md", "Log", 1, 1, text, score, f"h{at}", True, TERMS)


def test_a_lifted_line_stays_below_the_newer_line_that_restates_it() -> None:
    old = _hit(1, 70, "- The annual boiler service is done by Alder Heating.", 5.0)
    new = _hit(2, 10, "- The boiler service went to Birchway when Alder Heating retired.", 4.0)
    plan = BoostPlan(["annual"], names=["annual"])  # a name only the older line holds
    answer = _bm25_only("agent", [old, new], 2, False, plan)
    assert [hit["path"] for hit in answer] == [new.path, old.path]
    unlifted = _bm25_only("agent", [old, new], 2, False, None)
    assert [hit["path"] for hit in unlifted] == [new.path, old.path]
