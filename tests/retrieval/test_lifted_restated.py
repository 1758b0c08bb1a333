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


def test_a_promoted_line_the_lift_picks_is_joined_by_the_newer_line_it_passed_over() -> None:
    """The lift picks by the graph's names: a newer line naming the subject otherwise is passed over
    while the promoted line it changes is picked. It comes in above that line; the last pick makes room."""
    terms = query_tokens(["who", "owns", "the", "ledger-recon", "service"])
    kept = RankedChunk(
        1,
        "AGENT.md",
        "Consolidated > Tomasz owns the ledger-recon",
        1,
        1,
        f"- Tomasz owns the ledger-recon service and keeps its runbook current. <!-- from daily/{TODAY - timedelta(days=90)}.md, daily/{TODAY - timedelta(days=80)}.md -->",
        9.0,
        "h1",
        True,
        terms,
    )
    other = RankedChunk(
        2,
        f"daily/{TODAY - timedelta(days=30)}.md",
        "Log",
        1,
        1,
        "- The ledger-recon service runbook was reviewed.",
        6.0,
        "h2",
        True,
        terms,
    )
    newer = RankedChunk(
        3,
        f"daily/{TODAY - timedelta(days=5)}.md",
        "Log",
        1,
        1,
        "- Came up on the call: Amara took over ledger-recon when Tomasz moved to the card-issuing team.",
        5.0,
        "h3",
        True,
        terms,
    )
    plan = BoostPlan(["ledger-recon service"], names=["ledger-recon service"])  # the newer line does not name it
    answer = _bm25_only("agent", [kept, other, newer], 2, False, plan)
    assert [hit["path"] for hit in answer] == [newer.path, kept.path]
