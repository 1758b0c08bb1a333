"""The lexical model: a linear classifier over hashed word and character n-grams, judged per sentence.

It reads the folded text (``normalise``: confusables, zero-width and emphasis undone) cut into units:
each sentence of at least ``MIN_WORDS`` words, and chunks of consecutive sentences up to ``CHUNK_CHARS``
(a short note is one chunk). A unit's features are its word unigrams and bigrams and its character
3-, 4- and 5-grams (digits read as ``0``, every blank as a space), each hashed into ``2**bits``
buckets, present or not, scaled to unit length. Its score is ``sigmoid(bias + w . x)``; the text's
score is its highest unit's.

Hashing is vectorised: every character's code goes through a fixed mix, and the hash of any span is
read from one prefix sum of the codes times powers of an odd constant's inverse (arithmetic modulo
2**64), so every n-gram and word costs a few array operations, not a Python call.

The weights (``tests/data/scanner-lexical.npz``: ``w``, ``bias``, ``threshold``, ``bits``; no text
from any corpus) are trained by ``python -m tests.bench.scan_lexical``, reproducibly, on public
corpora and memory notes (sources and licences: ``tests/data/NOTICE-scanner-lexical.txt``). Nothing
is downloaded. A score at or above the threshold is evidence, not proof: a caller only flags on it.

No verdict of the scanner reads it: it is an experiment the benchmarks train and measure
(``tests/bench/scan_lexical.py``), kept here with its weights so the package does not ship them.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from sidecar.scanner.normalise import normalise
from sidecar.scanner.sentences import sentence_at, sentences

__all__ = [
    "CHUNK_CHARS",
    "LEXICAL_RESOURCE",
    "MIN_WORDS",
    "Features",
    "Lexical",
    "LexicalScore",
    "features",
    "load_lexical",
]

LEXICAL_RESOURCE = "scanner-lexical.npz"
#: Where the weights and their notice live: beside the test data, outside the package.
DATA = Path(__file__).resolve().parents[1] / "data"
CHUNK_CHARS = 700  # consecutive sentences joined into one unit up to about this many characters
MIN_WORDS = 4  # a sentence of fewer words is read only inside its chunk
NGRAMS = (3, 4, 5)
MAX_WORD = 40  # longer runs of letters (a CJK sentence, a hash) are left to the character n-grams

Ints = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]

_P = 0x100000001B3  # odd, so invertible modulo 2**64
_Q = pow(_P, -1, 1 << 64)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_FINAL = np.uint64(0xD6E8FEB86659FD93)
_SALT_WORD = np.uint64(0x2545F4914F6CDD1D)
_SALT_PAIR = np.uint64(0x5851F42D4C957F2D)
_WORD = re.compile(r"\w+")
_BLANKS = np.array([9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x2028, 0x2029, 0x3000], dtype=np.uint64)


class Features(NamedTuple):
    """A text cut into units: the folded text, each unit's span of it, and each unit's distinct
    buckets (``rows[i]``)."""

    folded: str
    spans: list[tuple[int, int]]
    rows: list[Ints]


class LexicalScore(NamedTuple):
    """The text's highest-scoring unit: its score, a short excerpt and the sentence it starts."""

    score: float
    excerpt: str
    sentence: str


def _powers(size: int) -> tuple[U64, U64]:
    """``P**i`` and ``Q**i`` for ``i < size`` modulo 2**64 (tables grown by doubling, kept)."""
    return _tables(1 << max(10, (size - 1).bit_length()))


@cache
def _tables(size: int) -> tuple[U64, U64]:
    out = []
    for base in (_P, _Q):
        table = np.empty(size, dtype=np.uint64)
        table[0] = 1
        with np.errstate(over="ignore"):
            np.cumprod(np.full(size - 1, base, dtype=np.uint64), out=table[1:])
        out.append(table)
    return out[0], out[1]


def _bucket(hashes: U64, salt: np.uint64, bits: int) -> Ints:
    with np.errstate(over="ignore"):
        mixed = (hashes ^ (hashes >> np.uint64(31))) * _FINAL + salt
        mixed ^= mixed >> np.uint64(29)
        mixed *= _MIX
    out: Ints = (mixed >> np.uint64(64 - bits)).astype(np.int64)
    return out


def _units(folded: str) -> list[tuple[int, int]]:
    """Each sentence of at least ``MIN_WORDS`` words, then the chunks (sentences joined up to
    ``CHUNK_CHARS``) that are not one of those sentences."""
    own: list[tuple[int, int]] = []
    chunks: list[tuple[int, int]] = []
    for start, end in sentences(folded):
        words = len(folded[start:end].split())
        if not words:
            continue
        if words >= MIN_WORDS:
            own.append((start, end))
        if chunks and end - chunks[-1][0] <= CHUNK_CHARS:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
    seen = set(own)
    return own + [c for c in chunks if c not in seen and len(folded[c[0] : c[1]].split()) >= MIN_WORDS]


def features(text: str, bits: int) -> Features:
    """The text's units and each one's distinct buckets among ``2**bits``."""
    folded = normalise(text).folded
    spans = _units(folded)
    if not spans:
        return Features(folded, [], [])
    codes = np.frombuffer(folded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    codes[(codes >= 48) & (codes <= 57)] = 48
    codes[np.isin(codes, _BLANKS)] = 32
    size = len(codes)
    p, q = _powers(size + 1)
    with np.errstate(over="ignore"):
        mixed = (codes + np.uint64(1)) * _MIX
        mixed ^= mixed >> np.uint64(32)
        prefix = np.zeros(size + 1, dtype=np.uint64)
        np.cumsum(mixed * q[:size], out=prefix[1:])

        def span_hash(starts: U64, ends: U64) -> U64:
            out: U64 = (prefix[ends] - prefix[starts]) * p[ends - np.uint64(1)]
            return out

        grams: list[Ints] = []
        for n in NGRAMS:
            starts = np.arange(max(0, size - n + 1), dtype=np.uint64)
            grams.append(_bucket(span_hash(starts, starts + np.uint64(n)), np.uint64(n), bits))
        found = [(m.start(), m.end()) for m in _WORD.finditer(folded) if m.end() - m.start() <= MAX_WORD]
        bounds = np.array(found, dtype=np.uint64).reshape(-1, 2)
        word_hash = span_hash(bounds[:, 0], bounds[:, 1])
        words = _bucket(word_hash, _SALT_WORD, bits)
        pairs = _bucket(word_hash[:-1] * _FINAL + word_hash[1:], _SALT_PAIR, bits) if len(found) > 1 else words[:0]
    word_starts = bounds[:, 0].astype(np.int64)
    word_ends = bounds[:, 1].astype(np.int64)
    rows: list[Ints] = []
    for start, end in spans:
        parts = [gram[start : max(start, end - n + 1)] for gram, n in zip(grams, NGRAMS, strict=True)]
        first = int(np.searchsorted(word_starts, start))
        last = int(np.searchsorted(word_ends, end, side="right"))
        if last > first:
            parts.append(words[first:last])
            parts.append(pairs[first : last - 1])
        rows.append(np.unique(np.concatenate(parts)))
    return Features(folded, spans, rows)


class Lexical:
    """``sigmoid(bias + w . x)`` per unit, ``x`` the unit's buckets at ``1/sqrt(count)``, with the
    threshold the weights were trained for."""

    def __init__(self, arrays: dict[str, npt.NDArray[np.generic]]) -> None:
        self.w = np.asarray(arrays["w"], dtype=np.float32)
        self.bias = float(np.asarray(arrays["bias"]).reshape(()))
        self.threshold = float(np.asarray(arrays["threshold"]).reshape(()))
        self.bits = int(np.asarray(arrays["bits"]).reshape(()))
        if self.w.shape != (1 << self.bits,):
            raise ValueError("scanner lexical model: weights do not fit its bucket count")

    def unit_logits(self, rows: list[Ints]) -> npt.NDArray[np.float64]:
        """Each unit's score before the sigmoid."""
        return np.array(
            [self.bias + float(self.w[row].sum()) / np.sqrt(len(row)) if len(row) else -40.0 for row in rows]
        )

    def best(self, text: str) -> LexicalScore | None:
        """The text's highest-scoring unit, or None for a text with no unit."""
        cut = features(text, self.bits)
        if not cut.rows:
            return None
        logits = self.unit_logits(cut.rows)
        index = int(np.argmax(logits))
        start, end = cut.spans[index]
        score = float(1.0 / (1.0 + np.exp(-np.clip(logits[index], -40.0, 40.0))))
        excerpt = " ".join(cut.folded[start:end].split())[:80]
        return LexicalScore(score, excerpt, sentence_at(cut.folded, start, end))

    def flags(self, text: str) -> LexicalScore | None:
        """The highest unit when it reaches the threshold, else None."""
        found = self.best(text)
        return found if found is not None and found.score >= self.threshold else None


_LOCK = threading.Lock()


@cache
def _packaged() -> Lexical:
    with np.load(DATA / LEXICAL_RESOURCE, allow_pickle=False) as arrays:
        return Lexical({name: arrays[name] for name in arrays.files})


def load_lexical() -> Lexical:
    """The trained model (loaded once, on first use)."""
    with _LOCK:
        return _packaged()
