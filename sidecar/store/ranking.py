"""A server store's crew answer from its candidates, ranked exactly as the embedded index ranks
(``retrieval.hybrid``'s fusions, the same earned-place rule and neighbour lending, the same turns
of a dialogue lending to each other, ``retrieval.vectors.dialogue_turns``, the same standing: a
line a newer line restates with another value below it, and of two shown hits saying one thing a
value apart, the newer first) and shaped as
its hits (``RankedChunk.as_json``: snippet window, highlights, rounded score, ``explain`` on request)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sidecar.index.snippet import query_tokens, window
from sidecar.index.tier_index import RankedChunk
from sidecar.retrieval.hybrid import DENSE_MATCH, SHORT_SENTENCE, Scored, fuse_rrf, fuse_weighted, sentences
from sidecar.retrieval.lift import BoostPlan, Candidate, mark, pick, wanted
from sidecar.retrieval.standing import (
    SLACK,
    newest_first,
    one_place_shown,
    restated_first,
    restated_first_picked,
    standing,
)
from sidecar.retrieval.vectors import dialogue_turns

__all__ = ["Candidates", "mark_flagged", "rank"]


@dataclass
class Candidates:
    """What one search read from the store: the BM25 leg's rows (best first), and with a query
    vector the dense leg, every candidate's cosine, the earned chunks' neighbours (offset -> id in
    their file), the headings of those chunks and neighbours (which of them are a dialogue's turns)
    and the rows of chunks only the dense leg found."""

    bm25: list[Any]
    dense: list[tuple[int, float]] = field(default_factory=list)
    cosines: dict[int, float] = field(default_factory=dict)
    neighbours: dict[int, dict[int, int]] = field(default_factory=dict)
    headings: dict[int, str] = field(default_factory=dict)
    rows: dict[int, Any] = field(default_factory=dict)
    qvec: Any = None

    @property
    def dense_used(self) -> bool:
        return bool(self.cosines) or bool(self.dense)

    def earned(self) -> list[int]:
        """Chunks that earned a place: every BM25 hit and each dense one above the match floor."""
        ids = [r["id"] for r in self.bm25] + [cid for cid, c in self.dense if c > DENSE_MATCH]
        return list(dict.fromkeys(ids))

    def turns(self) -> dict[int, dict[int, int]]:
        """The earned chunks that are turns of a dialogue, with the turns around them, from their
        neighbours and headings, as the embedded index finds them."""
        window = {
            cid: (self.headings[cid], {o: (n, self.headings[n]) for o, n in near.items() if n in self.headings})
            for cid, near in self.neighbours.items()
            if cid in self.headings
        }
        return dialogue_turns(window)


def rank(
    cands: Candidates, words: list[str], limit: int, *, fusion: str, explain: bool, plan: BoostPlan | None = None
) -> list[dict[str, Any]]:
    """The ranked hits (``fusion``: ``weighted``, ``rrf``, or ``bm25`` for the BM25 leg alone);
    ``plan``: the lift for this query, which picks ``limit`` of its ``candidates`` best hits."""
    want = wanted(plan, limit)
    tokens = query_tokens(words)
    rows = {r["id"]: r for r in cands.bm25} | cands.rows
    bm25 = [(r["id"], float(r["score"])) for r in cands.bm25]
    if fusion == "bm25":
        ranked = [Scored(cid, s, 0.0, i, s, None, None) for i, (cid, s) in enumerate(bm25, start=1)]
    elif fusion == "rrf":
        ranked = fuse_rrf(bm25, cands.dense, cands.cosines)
    else:
        ranked = fuse_weighted(bm25, cands.dense, cands.cosines, cands.neighbours, turns=cands.turns())
    # Archived or superseded text ranks below current text (retrieval.standing), as in the index.
    weighed = []
    for scored in ranked[: want + SLACK]:
        row = rows.get(scored.id)
        weighed.append(scored if row is None else scored.with_standing(standing(row["path"], row["heading"])))
    weighed.sort(key=lambda s: -s.score)  # stable: ties keep the fused order
    if cands.bm25:  # a line a newer line restates with another value ranks below it (retrieval.standing)
        weighed = restated_first(weighed, lambda s: _view(rows.get(s.id)), tokens)
    bm_ids = {cid for cid, _ in bm25}
    picked = []  # the first ``want`` with rows, then those read below them (``one_place``)
    for scored in weighed:
        row = rows.get(scored.id)
        if row is None:
            continue  # a neighbour that lent nothing it was asked for, or a chunk gone meanwhile
        picked.append((scored, row))
    picked, below = picked[:want], picked[want:]
    out = []
    chosen = pick(plan, picked, lambda p: _candidate(p[1], round(p[0].score, 6)), limit)
    if plan is not None and cands.bm25:  # the lift orders by score: a restated line stays below its restatement
        chosen = restated_first_picked(chosen, picked, lambda p: _view(p[1]), tokens, limit)
    if cands.bm25:  # of the shown hits that say one thing a value apart, the newest first (retrieval.standing)
        chosen = newest_first(chosen, lambda c: _view(c[0][1]), tokens)
        chosen = one_place_shown(chosen, [*picked, *below], lambda p: _view(p[1]), tokens)
    for (scored, row), lifted in chosen:
        result = _hit(row, tokens).as_json("crew")
        result["score"] = round(scored.score, 6)
        if scored.id not in bm_ids:
            _closest_sentence(result, row, words, cands.qvec)
        if explain:
            result["explain"] = scored.explain(fusion)
        mark(result, lifted, explain)
        out.append(result)
    return out


def _view(row: Any) -> tuple[str, str, str]:
    """A stored chunk's path, heading and text, as ``restated_first`` reads them."""
    if row is None:
        return "", "", ""
    return row["path"], row["heading"], _text(row)


def _text(row: Any) -> str:
    """A stored chunk's text: its body, or its heading when it has none (a heading-only section)."""
    text: str = row["body"] or row["heading"]
    return text


def _candidate(row: Any, score: float) -> Candidate:
    """A stored chunk as the lift reads it, shown with ``score``."""
    return Candidate(row["path"], row["heading"], row["line_start"], row["line_end"], _text(row), score)


def _hit(row: Any, tokens: list[str]) -> RankedChunk:
    text = _text(row)
    return RankedChunk(
        row["id"], row["path"], row["heading"], row["line_start"], row["line_end"], text, 0.0, row["hash"],
        row["plain"], tokens,
    )  # fmt: skip


def _closest_sentence(result: dict[str, Any], row: Any, words: list[str], qvec: Any) -> None:
    """A dense-only hit shows its sentence closest to the query, from the sentence vectors the lead
    stored with the chunk (no model call); without them it keeps its window."""
    blob = row.get("sentences")
    if qvec is None or not blob:
        return
    found = sentences(_text(row))
    query = np.asarray(qvec, dtype=np.float32)
    stored = np.frombuffer(blob, dtype="<f2").astype(np.float32)
    if len(found) < 2 or stored.size != len(found) * len(query):
        return
    cosines = stored.reshape(len(found), len(query)) @ query
    best = int(np.argmax(cosines))
    text = found[best]
    if len(text) < SHORT_SENTENCE and best + 1 < len(found):
        text = f"{text} {found[best + 1]}"
    shown = window(text, words)
    result["snippet"] = shown.text
    result["highlights"] = [[a, b] for a, b in shown.highlights]


def mark_flagged(hits: list[dict[str, Any]], flags: dict[str, list[dict[str, Any]]]) -> None:
    """Give each hit from a flagged section that section's mark (``flagged``), as the lead's own
    crew search does (``retrieval.flags``): the sections were judged on the lead."""
    for hit in hits:
        for section in flags.get(hit["path"], []):
            if section["line_start"] <= hit["line_start"] <= section["line_end"]:
                hit["flagged"] = section
                break
