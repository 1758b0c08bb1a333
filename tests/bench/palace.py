"""The palace on data: the relevance threshold of the block's recall, and the ingest of the
hand-labelled conversation.

    python -m tests.bench palace

**Threshold.** Each LoCoMo conversation is one agent's memory (the files and the real ``Tier``
of ``tests/bench/retrieval.py``), searched with BM25 as the block does without a model. For each
question, the top 10 chunks are scored by ``palace.relevance.Relevance`` (over the conversation's
own chunks). A question asked of its own conversation whose top 10 holds an evidence turn should
inject one: the threshold lets it through when an evidence turn scores at least the threshold.
The same question asked of another conversation (other people, other lives) should inject
nothing. The default (``inject_threshold``) is the threshold with the best mean of the two rates
on conversations 0-2 (``TUNING``); conversations 3-4 are the held-out figure. Also shown: the share
of injected chunks that are evidence turns.

**Ingest.** Precision and recall of the turns kept from ``tests/palace/data/conversation.txt``
(in-sample: the rules were written while reading it) and ``heldout.txt`` (written after them and
never used to change them), and the CPU per turn next to a bare
``SELECT 1`` on SQLite, the least a turn that touches storage costs.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sidecar.index.chunker import chunk_markdown
from sidecar.index.tier import Tier
from sidecar.logs import configure_logging
from sidecar.palace.ingest import Turn, plan_ingest
from sidecar.palace.relevance import Relevance
from sidecar.settings import Settings
from tests.bench.retrieval import DATA, repair_evidence, write_conversation
from tests.bench.util import report
from tests.support.palace import HELD_OUT as HELD_OUT_TURNS
from tests.support.palace import load_conversation, score

TUNING = (0, 1, 2)
HELD_OUT = (3, 4)
TOP = 10
THRESHOLDS = [round(0.05 * i, 2) for i in range(21)]
CROSS = 60  # questions of each other conversation asked of a conversation


@dataclass
class Asked:
    """One question asked of one memory: the relevance of each of its top chunks, and which are evidence."""

    own: bool
    scores: list[float]
    evidence: list[bool]


async def ask(conversations: Sequence[int], samples: list[dict[str, object]], base: Path) -> tuple[list[Asked], float]:
    """Every question of ``conversations`` asked of its own memory and, ``CROSS`` of them, of the
    others'; and the CPU seconds per relevance gate (scoring a query's top 10)."""
    asked: list[Asked] = []
    gate_cpu: list[float] = []
    for n in conversations:
        corpus = write_conversation(samples[n], base / f"c{n}")
        tier = Tier(f"c{n}", corpus.root)
        await tier.open()
        texts = {}
        for path in sorted(corpus.root.rglob("*.md")):
            rel = path.relative_to(corpus.root).as_posix()
            for chunk in chunk_markdown(path.read_text()):
                texts[rel, chunk.line_start] = f"{chunk.heading}\n{chunk.body}"
        for m in conversations:
            qas = samples[m]["qa"]
            assert isinstance(qas, list)
            turns = set(corpus.unit.values())
            for qa in qas if m == n else qas[:CROSS]:
                evidence, _, _ = repair_evidence(qa.get("evidence", []), turns) if m == n else ([], 0, 0)
                if m == n and not evidence:
                    continue
                hits = await tier.search(qa["question"], TOP)
                keys = [(h.path, h.line_start) for h in hits if (h.path, h.line_start) in texts]
                started = time.process_time()
                relevance = Relevance(qa["question"], texts.values())
                scores = [relevance.score(texts[k]) for k in keys]
                gate_cpu.append(time.process_time() - started)
                asked.append(Asked(m == n, scores, [corpus.unit.get(k) in evidence for k in keys]))
        await tier.close()
    return asked, sum(gate_cpu) / max(len(gate_cpu), 1)


@dataclass
class Rates:
    own: float  # own questions with evidence in the top 10 that inject an evidence turn
    cross: float  # other conversations' questions that inject nothing
    precision: float  # injected chunks that are evidence turns (own questions)

    @property
    def balanced(self) -> float:
        return (self.own + self.cross) / 2


def rates(asked: list[Asked], threshold: float) -> Rates:
    own = [a for a in asked if a.own and any(a.evidence)]
    cross = [a for a in asked if not a.own]
    through = sum(any(s >= threshold and e for s, e in zip(a.scores, a.evidence, strict=True)) for a in own)
    quiet = sum(all(s < threshold for s in a.scores) for a in cross)
    injected = [e for a in asked if a.own for s, e in zip(a.scores, a.evidence, strict=True) if s >= threshold]
    return Rates(through / max(len(own), 1), quiet / max(len(cross), 1), sum(injected) / max(len(injected), 1))


def sqlite_floor() -> float:
    """CPU seconds of a bare ``SELECT 1`` on SQLite: the least a step that touches storage costs."""
    conn = sqlite3.connect(":memory:")
    started = time.process_time()
    for _ in range(20_000):
        conn.execute("SELECT 1").fetchone()
    conn.close()
    return (time.process_time() - started) / 20_000


async def threshold_figures() -> None:
    samples = json.loads((DATA / "locomo-dev.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tuning, gate = await ask(TUNING, samples, Path(tmp) / "tune")
        held, _ = await ask(HELD_OUT, samples, Path(tmp) / "held")
    best = max(THRESHOLDS, key=lambda t: (rates(tuning, t).balanced, -t))
    shipped = Settings().inject_threshold
    report(
        "LoCoMo questions asked (conversations 0-2)",
        f"{sum(a.own for a in tuning)} own, {sum(not a.own for a in tuning)} cross",
    )
    for t in THRESHOLDS[::2]:
        r = rates(tuning, t)
        report(
            f"  threshold {t:.2f} (0-2)",
            f"evidence through {r.own:.3f}, unrelated kept out {r.cross:.3f}, injected precision {r.precision:.3f}",
        )
    report("best threshold on conversations 0-2", f"{best:.2f} (shipped default {shipped})", "= the default")
    for name, asked in (("0-2", tuning), ("3-4, held out", held)):
        r = rates(asked, shipped)
        report(
            f"at {shipped} on conversations {name}",
            f"evidence through {r.own:.3f}, unrelated kept out {r.cross:.3f}, precision {r.precision:.3f}",
        )
    report(
        "CPU per relevance gate (a query's top 10)",
        f"{gate * 1e6:.0f} µs",
        f"bare SELECT 1: {sqlite_floor() * 1e6:.1f} µs",
    )


def ingest_figures() -> None:
    turns = load_conversation()
    started = time.process_time()
    rounds = 20
    for _ in range(rounds):
        plan = plan_ingest([Turn(t.role, t.content) for t in turns])
    per_turn = (time.process_time() - started) / (rounds * len(turns))
    scores = score(turns, [(k.index, k.type) for k in plan.kept])
    report(
        "ingest of 200 hand-labelled turns (in-sample)", f"precision {scores.precision:.3f}, recall {scores.recall:.3f}"
    )
    report("  type accuracy of the kept turns", f"{scores.type_accuracy:.3f}")
    report(
        "  recall of decisions and preferences",
        f"{scores.recall_by_type['decision']:.2f}, {scores.recall_by_type['preference']:.2f}",
    )
    held = load_conversation(HELD_OUT_TURNS)
    out = score(held, [(k.index, k.type) for k in plan_ingest([Turn(t.role, t.content) for t in held]).kept])
    report("ingest of 60 held-out labelled turns", f"precision {out.precision:.3f}, recall {out.recall:.3f}")
    report(
        "  type accuracy; decisions, preferences",
        f"{out.type_accuracy:.3f}; {out.recall_by_type['decision']:.2f}, {out.recall_by_type['preference']:.2f}",
    )
    report(
        "CPU per turn (filter + classifier + dedup)",
        f"{per_turn * 1e6:.0f} µs",
        f"bare SELECT 1: {sqlite_floor() * 1e6:.1f} µs",
    )


def main(argv: Sequence[str] = ()) -> None:
    configure_logging("console", "warning")
    ingest_figures()
    asyncio.run(threshold_figures())


if __name__ == "__main__":
    main()
