"""The rule layers' CPU per KB and a digest of every verdict, over three corpora of ordinary memory files.

    .venv/bin/python -m tests.bench.scan_speed                   # every corpus, three timed rounds each
    .venv/bin/python -m tests.bench.scan_speed --rounds=5 --only=locomo
    .venv/bin/python -m tests.bench.scan_speed --fresh           # each round a fresh process's first pass

Each file is judged as a tier's warm-up judges it (``flagged_sections``: every heading section, with
its seam to the one before). Corpora:

- ``tier10k``: the generated 10,000-chunk tier (``tests.support.corpus.make_corpus``, 833 files).
- ``locomo``: every LoCoMo session as a daily note, one line per turn (as ``bench_scan``'s ``dialogue``).
- ``consolidation``: the daily notes of a few consolidation histories, each as the bench writes it
  (``# day``, ``## Log``, a bullet per line, the lines the write path refuses appended by hand).

The digest is a SHA-256 over every file's flagged sections (``as_json`` with the finding's excerpt
and sentence): two versions of the scanner that print the same digests gave every file the same
verdicts. CPU is this process's CPU time over the kilobytes judged, the median of ``--rounds`` rounds
after one untimed round (which also computes the digest and compiles the patterns the files need).
With ``--fresh``, each round is instead the first pass of a process that has judged nothing yet (the
patterns compiled as the files need them, nothing remembered): what a server pays to judge a tier
once after it starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from sidecar.scanner.scan import SectionFinding, flagged_sections
from tests.bench.bench_scan import dialogue
from tests.support.corpus import make_corpus

#: Histories written by a few different generators (the base phrasing set and four of their own).
HISTORIES = ("tuning", "fresh3", "fresh11", "h15a", "hooklog", "sessions")
_TODAY = date(2026, 6, 1)  # the day the histories end before: fixed, so their notes are always the same


def tier10k() -> list[str]:
    """The generated 10,000-chunk tier's files, in path order."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_corpus(root, 10_000)
        return [path.read_text(encoding="utf-8") for path in sorted(root.rglob("*.md"))]


def locomo() -> list[str]:
    """Every LoCoMo session as a daily note."""
    return [case["text"] for case in dialogue("tune") + dialogue("heldout")]


def consolidation() -> list[str]:
    """The daily notes of ``HISTORIES``, as the consolidation bench writes them."""
    from tests.bench.consolidation import _direct, _history, _markdown

    out = []
    for kind in HISTORIES:
        history = _history(kind, 1, _TODAY)
        direct = _direct(kind)
        for n, lines in enumerate(history.notes):
            day = history.start + timedelta(days=n)
            body = "".join(_markdown(line) for line in lines if line not in direct)
            edited = "".join(f"- {line}\n" for line in lines if line in direct)
            out.append(f"# {day}\n\n## Log\n{body}{edited}")
    return out


CORPORA = {"tier10k": tier10k, "locomo": locomo, "consolidation": consolidation}


def _shown(found: SectionFinding) -> dict[str, object]:
    return {**found.as_json(), "excerpt": found.finding.excerpt, "sentence": found.finding.sentence}


def digest(texts: list[str]) -> tuple[str, int, int]:
    """The digest of every file's flagged sections, the files with one and the sections flagged."""
    hashed = hashlib.sha256()
    files = sections = 0
    for index, text in enumerate(texts):
        found = flagged_sections(text)
        files += bool(found)
        sections += len(found)
        hashed.update(f"{index}\t{json.dumps([_shown(f) for f in found], sort_keys=True)}\n".encode())
    return hashed.hexdigest()[:16], files, sections


def cpu_per_kb(texts: list[str], rounds: int) -> list[float]:
    """Milliseconds of CPU per KB of each round's judging every file."""
    kb = sum(len(text.encode("utf-8")) for text in texts) / 1024
    out = []
    for _ in range(rounds):
        started = time.process_time()
        for text in texts:
            flagged_sections(text)
        out.append((time.process_time() - started) * 1000 / kb)
    return out


def first_pass(name: str) -> float:
    """Milliseconds of CPU per KB of this process's first pass over corpus ``name``."""
    texts = CORPORA[name]()
    return cpu_per_kb(texts, 1)[0]


def fresh_passes(name: str, rounds: int) -> list[float]:
    """``first_pass`` in ``rounds`` new processes (this file run again, on this process's import path:
    the same scanner)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    out = []
    for _ in range(rounds):
        done = subprocess.run(
            [sys.executable, __file__, f"--first-pass={name}"], capture_output=True, text=True, check=True, env=env
        )
        out.append(float(done.stdout.split()[-1]))
    return out


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    first = next((a.removeprefix("--first-pass=") for a in args if a.startswith("--first-pass=")), None)
    if first is not None:
        print(f"{first_pass(first):.6f}")
        return
    rounds = next((int(a.removeprefix("--rounds=")) for a in args if a.startswith("--rounds=")), 3)
    only = {a.removeprefix("--only=") for a in args if a.startswith("--only=")}
    fresh = "--fresh" in args
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    for name, make in CORPORA.items():
        if only and name not in only:
            continue
        texts = make()
        kb = sum(len(text.encode("utf-8")) for text in texts) / 1024
        sha, files, sections = digest(texts)
        times = fresh_passes(name, rounds) if fresh else cpu_per_kb(texts, rounds)
        shown = " ".join(f"{t:.3f}" for t in times)
        print(
            f"{name:<14} {len(texts):>5} files {kb:>8,.0f} KB  flagged {files} files {sections} sections"
            f"  digest {sha}  cpu {statistics.median(times):.3f} ms/KB ({'fresh processes, ' if fresh else ''}"
            f"median; rounds {shown})"
        )


if __name__ == "__main__":
    main()
