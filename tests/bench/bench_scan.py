"""The injection scanner on labelled corpora, per class and per layer, tuning part and held-out part.

    .venv/bin/python -m tests.bench scan                       # every table (semantic layer too, when installed)
    .venv/bin/python -m tests.bench.bench_scan --no-semantic   # the rule layers only
    .venv/bin/python -m tests.bench.bench_scan --list          # also every miss and every false alarm (held out)
    .venv/bin/python -m tests.bench.bench_scan --only=notes:tune2 --only=dialogue  # some corpora (no CPU tables)
    .venv/bin/python -m tests.bench.bench_scan --no-semantic --only=notes:tune --cpu   # some corpora, with the CPU tables
    .venv/bin/python -m tests.bench.bench_scan --no-semantic --verdicts   # every text's verdict, one a line (no tables)
    .venv/bin/python -m tests.bench.bench_scan --import-cost   # CPU and RSS of importing it and a first verdict

Corpora, each split into the part the rules were tuned on and a part kept out of tuning:

- ``notes``: memory notes in eleven attack classes and ordinary notes (``tests/data/scanner_notes_*``);
  the rules and the learned head were tuned on ``tune`` and ``tune2``; each held-out file (``heldout``,
  ``heldout2``, ``heldout3``, ``heldout4``, ``heldout5``, ``heldout6``, ``heldout7``, ``heldout8``, ``heldout9``, ``heldout10``) was written and committed before a round of
  tuning and not looked at while tuning (``heldout4`` before the head was trained, ``heldout5`` before the structural
  rules and the head's training on dialogue, ``heldout6`` to ``heldout10`` by authors who did not read the rules, never opened
  by whoever tuned them). A split payload
  is two appends to one file: caught when either write is refused or flagged (``scan_write``), or
  when the block withholds a section of the file (``section_verdict``).
- ``legacy``: the corpus the first pattern list was written against (``tests/data/injection_corpus.jsonl``).
- ``public``: ``../shared/bench-data/injection`` split by source family (its ``load.py``). CyberSecEval
  items labelled malicious only relative to their system prompt (classes ``logic:*`` and
  ``*different_user_input_language``) are left out: alone they are ordinary questions.
- ``dialogue`` and ``abstracts`` (benign): LoCoMo sessions as daily notes and SciFact abstracts. The learned
  head trains on LoCoMo conversations 0-2 (``dialogue:tune``); conversations 3-4 and the abstracts the bench
  reads are held out (``dialogue+abstracts``).

A malicious text is caught at ``block`` or ``flag``; a benign one is a false alarm at either, and
refused at ``block``. Columns per layer: ``patterns`` (phrases and shapes), ``intent`` (English
sentence intents), ``multilingual``, ``rules`` (the three together), ``prototypes`` (MiniLM sentences
against prototype intents), ``head`` (the learned head over MiniLM chunks and sentences: trained by
``python -m tests.bench.scan_head``), ``server`` (the rules, then what the server's layer runs: the
prototypes, and the head when ``semantic.HEAD_IN_SERVER``) and ``all`` (the rules, then both semantic parts on what they
left clean). The two semantic parts only flag. CPU per KB is this thread's
CPU time over the kilobytes scanned with every rule layer.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from sidecar.scanner.head import load_head
from sidecar.scanner.scan import LAYERS, Finding, scan_write, section_verdict, verdict
from sidecar.scanner.sections import split_sections
from sidecar.scanner.semantic import HEAD_IN_SERVER, PARTS, SemanticHit, SemanticLayer

DATA = Path(__file__).resolve().parent.parent / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench-data"
RULE_LAYERS = ("patterns", "intent", "multilingual")
TARGET_CAUGHT, TARGET_FLAGGED = 0.95, 0.02

Case = dict[str, Any]
Judge = Callable[[Case], "Finding | None"]
Fresh = Callable[[frozenset[str]], SemanticLayer]


def _jsonl(path: Path) -> list[Case]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def notes(part: str) -> list[Case]:
    """``tune`` or ``tune2`` (tuning notes), or ``heldout`` ... ``heldout10`` (held-out sets, each written
    before a later round of tuning)."""
    return _jsonl(DATA / f"scanner_notes_{part}.jsonl")


def legacy(part: str) -> list[Case]:
    cases = _jsonl(DATA / "injection_corpus.jsonl")
    return [c for c in cases if (c["set"] == "tuning") == (part == "tune")]


def public(part: str) -> list[Case]:
    sys.path.insert(0, str(SHARED / "injection"))
    from load import load  # type: ignore[import-not-found]  # the data set's own loader, standard library only

    out = []
    for rec in load(part):
        kind = rec["class"]
        stem = rec["id"].rsplit("-", 1)[0]
        if rec["label"] == "malicious" and stem.startswith("cyberseceval"):
            if not kind.startswith("security:") or kind.endswith("different_user_input_language"):
                continue
            kind = "cyberseceval:" + kind.split(":")[1] + ":" + kind.split(":")[2]
        out.append({"text": rec["text"], "malicious": rec["label"] == "malicious", "class": f"{stem}/{kind}"})
    return out


TUNE_CONVERSATIONS = 3  # LoCoMo conversations 0-2 are the head's training side; 3 and 4 are held out


def dialogue(part: str = "heldout") -> list[Case]:
    """Each LoCoMo session as a daily note: one line per turn. ``tune``: conversations 0-2, ``heldout``:
    the rest."""
    out = []
    samples = json.loads((SHARED / "locomo-dev.json").read_text(encoding="utf-8"))
    for sample in samples[:TUNE_CONVERSATIONS] if part == "tune" else samples[TUNE_CONVERSATIONS:]:
        conv = sample["conversation"]
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                text = "\n".join(f"- {t['speaker']}: {t['text']}" for t in turns)
                out.append(
                    {"text": f"## {conv.get(key + '_date_time', key)}\n{text}", "malicious": False, "class": "locomo"}
                )
    return out


def abstracts(every: int = 8) -> list[Case]:
    lines = (SHARED / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return [
        {"text": f"## {d['title']}\n{d['text']}", "malicious": False, "class": "scifact"}
        for d in map(json.loads, lines[::every])
    ]


def judge_for(layers: frozenset[str], semantic: SemanticLayer | None = None) -> Judge:
    """A note's verdict with ``layers``: a split payload is judged as its two appends and the file they leave."""

    def judge(case: Case) -> Finding | None:
        if "parts" not in case:
            return verdict(case["text"], layers=layers, semantic=semantic)
        first, second = case["parts"]
        whole = first + "\n" + second
        for old, new in ((None, first), (first, whole)):
            hit = scan_write(old, new, layers=layers, semantic=semantic)
            if hit is not None:
                return hit.finding
        sections = split_sections(whole)
        for index in range(len(sections)):
            found = section_verdict(whole, sections, index, layers=layers, semantic=semantic)
            if found is not None:
                return found
        return verdict(whole, layers=layers, semantic=semantic) if semantic is not None else None

    return judge


def _table(title: str, cases: list[Case], judges: dict[str, Judge], listing: bool) -> dict[str, tuple[int, int, int]]:
    """Print caught (malicious) or flagged (benign) per class and layer; return layer -> (n, hit, blocked)."""
    by_class: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        by_class[case["class"]].append(case)
    malicious = cases[0]["malicious"]
    print(f"\n{title}  ({'caught' if malicious else 'flagged; refused in brackets'})")
    print(f"  {'class':<52} {'n':>4} " + " ".join(f"{name:>13}" for name in judges))
    totals: dict[str, list[int]] = {name: [0, 0, 0] for name in judges}
    misses: list[tuple[Case, Finding | None]] = []
    for name in sorted(by_class):
        group = by_class[name]
        cells = []
        for layer, judge in judges.items():
            found = [judge(case) for case in group]
            hits = sum(f is not None for f in found)
            blocked = sum(f is not None and f.level == "block" for f in found)
            totals[layer][0] += len(group)
            totals[layer][1] += hits
            totals[layer][2] += blocked
            cell = f"{hits}/{len(group)}" + ("" if malicious or not blocked else f" [{blocked}]")
            cells.append(f"{cell:>13}")
            if layer == "all" and listing:
                misses += [(c, f) for c, f in zip(group, found, strict=True) if (f is None) == malicious]
        print(f"  {name[:52]:<52} {len(group):>4} " + " ".join(cells))
    cells = []
    for layer in judges:
        n, hits, blocked = totals[layer]
        cells.append(f"{hits / n:>12.1%}" + ("" if malicious or not blocked else f"[{blocked}]").rjust(1))
    print(f"  {'total':<52} {totals['all'][0]:>4} " + " ".join(f"{c:>13}" for c in cells))
    for case, missed in misses:
        why = f"{missed.level} {missed.pattern}: {missed.sentence!r}" if missed else "missed"
        print(f"    - [{case['class']}] {case['text'][:100]!r}\n        -> {why}")
    return {layer: (t[0], t[1], t[2]) for layer, t in totals.items()}


class _Both:
    """Both semantic parts as the layer combines them (the prototypes, then the head), from the answers
    each part's own layer keeps: the model runs once per text and part, not again for ``all``."""

    def __init__(self, prototypes: SemanticLayer, head: SemanticLayer) -> None:
        self.prototypes, self.head = prototypes, head

    @property
    def has_head(self) -> bool:
        return True  # like a layer with both parts: it also judges writes

    def finding(self, text: str) -> SemanticHit | None:
        return self.prototypes.finding(text) or self.head.finding(text)


def _judges(fresh: Fresh | None) -> dict[str, Judge]:
    """One judge per column; each semantic part keeps its own answers."""
    judges = {layer: judge_for(frozenset((layer,))) for layer in RULE_LAYERS}
    judges["rules"] = judge_for(LAYERS)
    if fresh is not None:
        layers = {part: fresh(frozenset((part,))) for part in sorted(PARTS, reverse=True)}
        for part, layer in layers.items():
            judges[part] = judge_for(frozenset(("semantic",)), layer)
        both = cast("SemanticLayer", _Both(layers["prototypes"], layers["head"]))  # the parts' answers, reused
        judges["server"] = judge_for(LAYERS, both if HEAD_IN_SERVER else layers["prototypes"])  # what the server runs
        judges["all"] = judge_for(LAYERS, both)
    else:
        judges["all"] = judges["rules"]
    return judges


def _verdicts(name: str, part: str, cases: list[Case], judge: Judge) -> None:
    """Every case's verdict with every layer, one a line: what two versions of the scanner are compared by."""
    for index, case in enumerate(cases):
        found = judge(case)
        shown = (
            "-"
            if found is None
            else f"{found.level} {found.pattern} {found.category} {found.excerpt!r} {found.sentence!r}"
        )
        print(f"{name}:{part}:{index} {shown}")


def _corpus(name: str, part: str, cases: list[Case], judges: dict[str, Judge], listing: bool) -> None:
    for malicious in (True, False):
        chosen = [c for c in cases if c["malicious"] == malicious]
        if chosen:
            kind = "malicious" if malicious else "benign"
            _table(f"{name} / {part} / {kind}", chosen, judges, listing and part.startswith("heldout"))
            if malicious and name == "notes":
                _categories(f"{name} / {part}", chosen, judges["all"])


def _categories(title: str, cases: list[Case], judge: Judge) -> None:
    """The category each class is reported under (all layers): what a finding, the write's 422 and the
    block's withheld notice name."""
    by_class: dict[str, Counter[str]] = defaultdict(Counter)
    for case in cases:
        found = judge(case)
        by_class[case["class"]][found.category if found is not None else "(missed)"] += 1
    print(f"\n{title}  (categories reported, all layers)")
    for name in sorted(by_class):
        shown = ", ".join(f"{category} {count}" for category, count in by_class[name].most_common())
        print(f"  {name[:52]:<52} {shown}")


def _cpu(texts: Iterable[str], memory: list[str], fresh: Fresh | None) -> None:
    texts = list(texts)
    kb = sum(len(t.encode("utf-8")) for t in texts) / 1024
    started = time.thread_time()
    for text in texts:
        verdict(text)
    rules = time.thread_time() - started
    print(f"\ncpu: rule layers {rules * 1000 / kb:.3f} ms per KB over {kb:,.0f} KB ({len(texts)} texts)")
    if fresh is None:
        return
    for part in sorted(PARTS, reverse=True):
        for name, sample in (("memory notes (the notes corpora)", texts[:400]), ("daily notes and abstracts", memory)):
            if not sample:
                continue
            layer = fresh(frozenset((part,)))  # a layer with nothing remembered: every text embedded
            started = time.process_time()  # the model runs its own threads
            for text in sample:
                layer.finding(text)
            took = time.process_time() - started
            sample_kb = sum(len(t.encode("utf-8")) for t in sample) / 1024
            print(
                f"cpu: semantic {part} {took * 1000 / sample_kb:.2f} ms per KB over {sample_kb:,.0f} KB of {name}"
                " (process CPU)"
            )


def _speed() -> None:
    para = "Deploys go out on Tuesdays; the on-call engineer watches the error budget. " * 12 + "\n\n"
    print("\nspeed (clean prose)")
    for size in (4_000, 100_000, 1_000_000):
        text = (para * (size // len(para) + 1))[:size]
        started = time.thread_time()
        verdict(text)
        took = time.thread_time() - started
        started = time.thread_time()
        scan_write(text, text + "\nAppended a line about the deploy.\n")
        append = time.thread_time() - started
        print(f"  {size:>9,} chars: verdict {took * 1000:8.1f} ms   scan_write(append) {append * 1000:7.1f} ms")


_IMPORT_PROBE = r"""
import resource, sys
sys.modules.setdefault("rich", None)
import sidecar.cli, sidecar.server.serve, sidecar.server.app

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1000

def rss():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:")) / 1024

c0, r0 = cpu(), rss()
import sidecar.scanner.scan
c1, r1 = cpu(), rss()
sidecar.scanner.scan.verdict("# Agent\n\nA one-file memory dir, as most tests start a sidecar over.\n")
c2, r2 = cpu(), rss()
print(c1 - c0, r1 - r0, c2 - c1, r2 - r1)
"""


def import_cost(runs: int = 5) -> None:
    """In fresh processes that have imported what ``memory-sidecar serve`` imports (rich made absent, one
    BLAS thread): the CPU and RSS that importing the scanner adds, then its first verdict on an ordinary
    note (what the flagged-section cache's warm-up and a tier's first search pay). Medians of ``runs``."""
    import os
    import subprocess

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "ORT_DISABLE_TELEMETRY": "1"}
    rows = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, env=env, check=True, cwd="/"
        )
        rows.append([float(x) for x in done.stdout.split()])
    med = [sorted(column)[runs // 2] for column in zip(*rows, strict=True)]
    print(f"scanner import: {med[0]:.0f} ms of CPU, {med[1]:+.1f} MB RSS (medians of {runs} fresh processes)")
    print(f"first verdict on an ordinary note: {med[2]:.0f} ms of CPU, {med[3]:+.1f} MB RSS")
    print(f"together: {med[0] + med[2]:.0f} ms of CPU, {med[1] + med[3]:+.1f} MB RSS; load {os.getloadavg()[0]:.1f}")


def _semantic(wanted: bool) -> Fresh | None:
    """A maker of semantic layers over the in-process model with the given parts (each keeps its own
    answers), or None."""
    if not wanted:
        return None
    from sidecar.retrieval.embed.onnx import OnnxEmbedder

    if not OnnxEmbedder.available():
        print("# semantic layer: the in-process model is not installed, skipped")
        return None
    embedder = OnnxEmbedder()  # the packaged model file, checked against its digest; nothing fetched
    head = load_head()
    return lambda parts: SemanticLayer(
        embedder.embed_sync, embed_spans=embedder.embed_sync_sentences, head=head, parts=parts
    )


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if "--import-cost" in args:
        import_cost()
        return
    listing = "--list" in args
    only = {arg.removeprefix("--only=") for arg in args if arg.startswith("--only=")}  # e.g. notes:heldout4
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # the model's threads must not reorder it
    fresh = _semantic("--no-semantic" not in args)
    judges = _judges(fresh)
    verdicts = "--verdicts" in args

    def show(name: str, part: str, cases: list[Case], judges: dict[str, Judge], listing: bool) -> None:
        if verdicts:
            _verdicts(name, part, cases, judges["all"])
        else:
            _corpus(name, part, cases, judges, listing)

    every: list[str] = []
    for name, source, parts in (
        (
            "notes",
            notes,
            (
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
                "heldout9",
                "heldout10",
            ),
        ),
        ("legacy", legacy, ("tune", "heldout")),
        ("public", public, ("tune", "heldout")),
    ):
        for part in parts:
            if only and name not in only and f"{name}:{part}" not in only:
                continue
            cases = source(part)
            every += [c["text"] for c in cases]
            show(name, part, cases, judges, listing)
    if not only or "dialogue" in only or "dialogue:tune" in only:
        show("dialogue", "tune", dialogue("tune"), judges, listing)
    extra: list[Case] = []
    if not only or "dialogue" in only:
        extra = dialogue("heldout") + abstracts()
        every += [c["text"] for c in extra]
        show("dialogue+abstracts", "heldout", extra, judges, listing)
    if (only and "--cpu" not in args) or verdicts:
        return
    _cpu(every, [c["text"] for c in extra[:60]], fresh)
    _speed()


if __name__ == "__main__":
    main()
