"""The dense leg's int8 copy on this CPU: rows in seven bits (as shipped) against eight.

For each set of unit vectors and each width: whether the build's probe refuses the copy here, and,
for a copy built without that probe (what an unchecked copy would serve), how many rows' bounds
break (|approx - exact| > bound) and the median number of rows a top 100 leaves to score exactly.

Sets: 2,720 LoCoMo turns (``shared/bench-data/locomo-dev.json``) embedded with the shipped model,
29 queries (every 97th turn, embedded); 10,000 random rows in 20 clusters, 50 noisy queries; and,
when ``python -m tests.bench embed`` has left its cache, that bench's chunk vectors, 100 queries
(a row plus a little noise).

Run: ``python -m tests.bench int8_rows``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

from sidecar.retrieval import int8
from tests.bench.prepared import CACHE
from tests.bench.retrieval import DATA
from tests.bench.util import report

Floats = npt.NDArray[np.float32]
VECTORS = CACHE / "chunk-vectors.sqlite"


def unit(rows: Floats) -> Floats:
    normed: Floats = (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)
    return normed


@contextmanager
def width(peak: int, *, probe: bool) -> Iterator[None]:
    """Copies built meanwhile use ``peak`` as a row's largest value; without ``probe`` the build's
    check of the kernel is skipped (an unchecked copy, for counting what it would serve)."""
    saved = int8._PEAK, int8._exact
    int8._PEAK = peak
    if not probe:
        int8._exact = lambda session, quantized: True
    try:
        yield
    finally:
        int8._PEAK, int8._exact = saved


def measure(name: str, matrix: Floats, queries: Floats) -> None:
    for bits, peak in ((7, 63), (8, 127)):
        with width(peak, probe=True):
            try:
                int8.Int8Pass.build(matrix)
                probe = "served"
            except ArithmeticError:
                probe = "refused by the probe"
        with width(peak, probe=False):
            copy = int8.Int8Pass.build(matrix)
        assert copy is not None
        broken, left = 0, []
        everything = np.arange(len(matrix))
        for query in queries:
            approx, err = copy.bounds(query)
            broken += int(np.sum(np.abs(approx - (matrix @ query).astype(np.float64)) > err))
            rows = copy.candidates(matrix, query, 100, held=None, at=everything, missing=np.arange(0))
            left.append(len(rows))
        report(
            f"int8 copy, {name}, {bits} bits",
            f"{probe}; unchecked: {broken} broken bounds, rows left median {int(np.median(left))}",
            f"of {len(matrix)} rows, {len(queries)} queries, top 100",
        )


def locomo_turns() -> list[str]:
    samples = json.loads((DATA / "locomo-dev.json").read_text())
    texts: list[str] = []
    for sample in samples:
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                texts.extend(turn["text"] for turn in value if len(turn.get("text", "")) > 20)
    return list(dict.fromkeys(texts))


def main() -> None:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime  # noqa: F401  (the copy runs only where the process has loaded it)

    from sidecar.retrieval.embed import OnnxEmbedder

    model = OnnxEmbedder()
    texts = locomo_turns()
    measure("LoCoMo turns", unit(model.embed_sync(texts)), unit(model.embed_sync(texts[::97][:60])))

    rng = np.random.default_rng(1)
    centres = rng.standard_normal((20, 384)).astype(np.float32)
    rows = unit(
        0.6 * unit(rng.standard_normal((10_000, 384)).astype(np.float32)) + 0.4 * centres[rng.integers(0, 20, 10_000)]
    )
    queries = unit(rows[rng.integers(0, 10_000, 50)] + 0.5 * rng.standard_normal((50, 384)).astype(np.float32))
    measure("random rows in 20 clusters", rows, queries)

    if VECTORS.exists():
        with sqlite3.connect(VECTORS) as db:
            blobs = [blob for (blob,) in db.execute("SELECT vector FROM chunk_vectors")]
        cached = unit(np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs]))
        near = cached[rng.integers(0, len(cached), 100)] + 0.03 * rng.standard_normal((100, 384)).astype(np.float32)
        measure("the embed bench's chunk vectors", cached, unit(near))
    else:
        report("int8 copy, the embed bench's chunk vectors", "not cached here", "run python -m tests.bench embed first")


if __name__ == "__main__":
    main()
