"""The learned head: a small classifier over MiniLM sentence embeddings, judged per sentence.

Word rules catch the phrasings they were written for; a stranger's paraphrase falls between them.
The head reads what a sentence means instead: the in-process model embeds each chunk of a text
(sentences joined up to ``CHUNK_CHARS``), and from the same run each sentence in the chunk's
context (``embed_sync_sentences``, late pooling: no extra model cost). A one-hidden-layer network
(weights in ``sidecar/data/scanner-head.npz``, numpy only) scores every chunk and sentence of at
least ``MIN_WORDS`` words; the text's score is the highest. At or above the head's threshold (stored with its weights) the
sentence is reported.

The weights are trained by ``python -m tests.bench.scan_head`` on public corpora and the tuning
notes (sources and licences: ``sidecar/data/NOTICE-scanner-head.txt``), reproducibly. The head
only ever flags: a write goes through with a warning and the block withholds the section.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from io import BytesIO
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from sidecar.scanner.normalise import normalise
from sidecar.scanner.sentences import sentence_at, sentences

__all__ = [
    "CHUNK_CHARS",
    "HEAD_RESOURCE",
    "MAX_CHUNKS",
    "MIN_WORDS",
    "Head",
    "HeadScore",
    "Units",
    "load_head",
    "units",
]

HEAD_RESOURCE = "scanner-head.npz"
CHUNK_CHARS = 700  # sentences joined into one model run up to about this many characters
MAX_CHUNKS = 24  # chunks read of one text (about 16 KB): a longer section is judged on its start
# Units of fewer words are not scored: the model places some very short texts ("ok", "Shipped the
# deploy.") where attacks are, and an order needs more words than that (the rules read short ones).
MIN_WORDS = 5

Vectors = npt.NDArray[np.float32]
EmbedSpans = Callable[[Sequence[str], Sequence[Sequence[tuple[int, int]]]], tuple[Vectors, list[Vectors]]]


class Units(NamedTuple):
    """A text cut for the head: the folded text, its chunks as spans of it, and each chunk's
    sentences as spans relative to the chunk."""

    folded: str
    chunks: list[tuple[int, int]]
    spans: list[list[tuple[int, int]]]


class HeadScore(NamedTuple):
    """The text's highest-scoring unit: its score, the sentence (or chunk) and a short excerpt."""

    score: float
    excerpt: str
    sentence: str
    vector: Vectors


def units(text: str) -> Units:
    """The chunks and sentences the head reads: the folded text (``normalise``: confusables, zero-width
    and emphasis undone), heading lines left out, sentences joined while a chunk stays under
    ``CHUNK_CHARS``, at most ``MAX_CHUNKS`` chunks."""
    folded = normalise(text).folded
    kept: list[tuple[int, int]] = []
    for begin, end in sentences(folded):
        start = begin
        while start < end and folded[start] == "#" and (newline := folded.find("\n", start, end)) != -1:
            start = newline + 1  # "## Tuesday" says nothing of intent
        if (start < end and folded[start] == "#") or not folded[start:end].strip():
            continue
        kept.append((start, end))
    chunks: list[tuple[int, int]] = []
    spans: list[list[tuple[int, int]]] = []
    for start, end in kept:
        if chunks and end - chunks[-1][0] <= CHUNK_CHARS:
            chunks[-1] = (chunks[-1][0], end)
            spans[-1].append((start - chunks[-1][0], end - chunks[-1][0]))
            continue
        if len(chunks) == MAX_CHUNKS:
            break
        chunks.append((start, end))
        spans.append([(0, end - start)])
    return Units(folded, chunks, spans)


class Head:
    """``x -> sigmoid(w2 . relu(W1 x + b1) + b2)`` over 384-dim unit vectors, with the threshold it
    was trained for."""

    def __init__(self, arrays: dict[str, npt.NDArray[np.float32]]) -> None:
        self.w1 = np.asarray(arrays["w1"], dtype=np.float32)
        self.b1 = np.asarray(arrays["b1"], dtype=np.float32)
        self.w2 = np.asarray(arrays["w2"], dtype=np.float32)
        self.b2 = float(np.asarray(arrays["b2"]).reshape(()))
        self.threshold = float(np.asarray(arrays["threshold"]).reshape(()))
        if self.w1.ndim != 2 or self.w1.shape[1] != self.b1.shape[0] or self.w2.shape != (self.w1.shape[1],):
            raise ValueError("scanner head: weight shapes do not fit together")

    @property
    def dim(self) -> int:
        return int(self.w1.shape[0])

    def scores(self, vectors: Vectors) -> npt.NDArray[np.float64]:
        """Each row's probability of being an instruction aimed at the model against its user."""
        if len(vectors) == 0:
            return np.zeros(0)
        hidden = np.maximum(vectors.astype(np.float64) @ self.w1 + self.b1, 0.0)
        logits = hidden @ self.w2 + self.b2
        probabilities: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0)))
        return probabilities

    def best(self, text: str, embed_spans: EmbedSpans) -> HeadScore | None:
        """The text's highest-scoring chunk or sentence, or None for a text with no sentence."""
        cut = units(text)
        if not cut.chunks:
            return None
        whole, parts = embed_spans([cut.folded[s:e] for s, e in cut.chunks], cut.spans)
        rows: list[Vectors] = [whole]
        where: list[tuple[int, int]] = list(cut.chunks)
        for (offset, _), chunk_parts, chunk_spans in zip(cut.chunks, parts, cut.spans, strict=True):
            if len(chunk_spans) > 1:  # a one-sentence chunk's sentence is the chunk
                rows.append(chunk_parts)
                where += [(offset + s, offset + e) for s, e in chunk_spans]
        matrix = np.concatenate(rows).astype(np.float32)
        scores = self.scores(matrix)
        scores[~np.any(matrix != 0, axis=1)] = 0.0  # a span past the model's reach has no vector
        for row, (start, end) in enumerate(where):  # a few words are no order: "ok", "Shipped the deploy."
            if len(cut.folded[start:end].split()) < MIN_WORDS:
                scores[row] = 0.0
        index = int(np.argmax(scores))
        start, end = where[index]
        excerpt = " ".join(cut.folded[start:end].split())[:80]
        return HeadScore(float(scores[index]), excerpt, sentence_at(cut.folded, start, end), matrix[index])


_LOCK = threading.Lock()


@cache
def _packaged() -> Head:
    data = resources.files("sidecar").joinpath("data", HEAD_RESOURCE).read_bytes()
    with np.load(BytesIO(data), allow_pickle=False) as arrays:
        return Head({name: arrays[name] for name in arrays.files})


def load_head() -> Head:
    """The packaged head (loaded once; a few tens of KB)."""
    with _LOCK:
        return _packaged()
