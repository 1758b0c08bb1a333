"""A generated, realistic-looking agent memory corpus for benchmarks (deterministic by seed).

Files look like real memory: AGENT.md-style evergreen files with headings and bullet facts,
daily/YYYY-MM-DD.md session notes, topics/*.md. Words follow a Zipf distribution over a
vocabulary of common English and engineering terms, so BM25 sees realistic term statistics.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
from pathlib import Path

__all__ = ["VOCAB", "make_corpus", "make_queries"]

_BASE = """the a to of and in is for on that with as it be this was are by we from at or not have an
deploy deployment rollback release staging production database postgres migration index table query
worker queue job retry timeout latency error incident outage alert pager oncall rotation runbook
review pull request commit branch merge conflict test suite coverage flaky ci pipeline build docker
image container kubernetes pod node cluster service api endpoint request response header token auth
user customer invoice payment billing export import report dashboard metric log trace span memory
cpu disk network dns certificate tls secret keeper vault config setting feature flag rollout canary
cache redis session cookie frontend backend react component style tailwind css layout page route
schema column foreign key constraint transaction lock deadlock vacuum replica failover backup restore
python go typescript rust java module package dependency upgrade version changelog readme docs
meeting decision architecture design proposal tradeoff estimate sprint ticket bug fix patch hotfix
monday tuesday wednesday thursday friday morning afternoon evening week month quarter year today
prefers likes wants asked noted decided agreed learned remembered suggested reported confirmed
slow fast large small new old first last next previous every always never sometimes usually""".split()

_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ar", "en", "il", "on", "us")]


def _pseudo_words(n: int, seed: int = 3) -> list[str]:
    """Made-up but pronounceable words: project names, people, services, identifiers."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        out["".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))] = None
    return list(out)


# Real memory has a long tail: ~20k distinct words in a few MB of notes (Heaps' law), Zipf-distributed.
VOCAB: list[str] = _BASE + _pseudo_words(20_000)


def _sentence(rng: random.Random, weights: list[float]) -> str:
    words = rng.choices(VOCAB, cum_weights=weights, k=rng.randint(8, 22))
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random, weights: list[float], chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        s = _sentence(rng, weights)
        out.append(s)
        size += len(s) + 1
    return " ".join(out)


def make_corpus(root: Path, chunks: int, seed: int = 7, para_chars: int = 600, files: int | None = None) -> int:
    """Write about ``chunks`` paragraphs (one chunk each) of memory under ``root``; return bytes."""
    rng = random.Random(seed)
    weights = list(itertools.accumulate(_zipf()))  # cumulative once: the same draws, not recomputed per call
    files = files or max(1, chunks // 12)
    per_file = max(1, chunks // files)
    start = dt.date(2025, 1, 1)
    total = 0
    for n in range(files):
        if n % 10 == 0:
            rel = f"topics/topic-{n:05d}.md"
        else:
            rel = f"daily/{start + dt.timedelta(days=n):%Y-%m-%d}.md"
        lines = [f"# {rel.rsplit('/', 1)[-1][:-3]}"]
        for p in range(per_file):
            if p % 3 == 0:
                lines.append(f"\n## {' '.join(rng.choices(VOCAB, cum_weights=weights, k=3)).title()}")
            lines.append("\n" + _paragraph(rng, weights, para_chars))
        text = "\n".join(lines) + "\n"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def _zipf() -> list[float]:
    """Zipf weights by vocabulary position: the common English words first, the long tail after."""
    return [1.0 / (rank + 1) ** 1.0 for rank in range(len(VOCAB))]


def make_queries(n: int, seed: int = 11) -> list[str]:
    """Agent-style queries: two to four content words, drawn by corpus frequency from ranks 50-5000
    (the very common words are stopword-like, the rarest ones are rarely asked about)."""
    rng = random.Random(seed)
    weights = list(itertools.accumulate(_zipf()[50:5000]))
    content = VOCAB[50:5000]
    return [" ".join(rng.choices(content, cum_weights=weights, k=rng.randint(2, 4))) for _ in range(n)]


#: The note sets ``benign_notes`` reads, named, so that a note set added later (a new held-out set)
#: leaves the tests and benches built on these 407 notes as they are.
BENIGN_NOTE_SETS = ("heldout", "heldout2", "heldout3", "heldout4", "heldout5", "tune", "tune2")

#: The note sets whose attacks a test may read, named for the same reason: the newest held-out set
#: (``heldout10``) is kept out of every test, so that no failure prints its texts to whoever tunes.
ATTACK_NOTE_SETS = (
    *("heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9"),
    *("tune", "tune2"),
)


#: The memory-notes sets the scanner's rules were written from or measured on; the tests that read
#: them leave each later held-out set alone.
SEEN_NOTE_SETS = (
    "tune",
    "tune2",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
)


def seen_notes() -> list[str]:
    """Every text of the ``SEEN_NOTE_SETS`` in ``tests/data/scanner_notes_*.jsonl``, malicious and
    benign, in file order."""
    data = Path(__file__).resolve().parents[1] / "data"
    out = []
    for name in SEEN_NOTE_SETS:
        lines = (data / f"scanner_notes_{name}.jsonl").read_text(encoding="utf-8").splitlines()
        out += [json.loads(line)["text"] for line in lines if line.strip()]
    return out


def benign_notes() -> list[str]:
    """The benign memory notes of the ``BENIGN_NOTE_SETS`` in ``tests/data/scanner_notes_*.jsonl``
    (each ending in a newline), in file order: ordinary text to append, chunk and read facts from."""
    notes = []
    data = Path(__file__).resolve().parents[1] / "data"
    for path in (data / f"scanner_notes_{name}.jsonl" for name in BENIGN_NOTE_SETS):
        for line in path.read_text(encoding="utf-8").splitlines():
            note = json.loads(line)
            if not note["malicious"]:
                notes.append(note["text"].rstrip("\n") + "\n")
    return notes
