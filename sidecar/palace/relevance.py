"""Whether a message asks memory for anything, and how relevant a chunk of memory is to it.

A message is trivial when every word of it is a greeting, an acknowledgement or a filler word
("ok", "thanks!", "sounds good"): it injects nothing. A chunk's relevance to a query is the
share of the query's content words the chunk holds, each weighted by its inverse document
frequency over the chunks at hand: 1.0 when the chunk holds every word of the question, near 0
when it only shares a common one. It needs no model and reads the same with or without one, so
one threshold (``inject_threshold``) serves every deployment.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from sidecar.index.query import STOPWORDS
from sidecar.palace.noise import TRIVIAL_WORDS, plain_words

__all__ = ["Relevance", "content_terms", "is_trivial"]

_EXTRA_STOP = frozenset(
    [
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "would",
        "could",
        "should",
        "can",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "about",
        "after",
        "before",
        "did",
        "does",
        "do",
        "done",
        "been",
        "being",
        "was",
        "were",
        "am",
        "has",
        "have",
        "had",
        "their",
        "them",
        "they",
        "there",
        "then",
        "than",
        "your",
        "yours",
        "you",
        "our",
        "ours",
        "we",
        "us",
        "my",
        "mine",
        "me",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "its",
        "it's",
        "i'm",
        "i've",
        "i'd",
        "you're",
        "any",
        "some",
        "much",
        "many",
        "more",
        "most",
        "also",
        "just",
        "very",
        "so",
        "too",
        "not",
        "no",
        "yes",
        "get",
        "got",
        "make",
        "made",
        "take",
        "took",
    ]
)
_SUFFIXES = ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    word = word.removesuffix("'s").replace("'", "")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def content_terms(text: str) -> list[str]:
    """The distinct content words of ``text``, lightly stemmed, stopwords left out, in order."""
    out: dict[str, None] = {}
    for word in plain_words(text):
        if word in STOPWORDS or word in _EXTRA_STOP or word in TRIVIAL_WORDS or len(word) < 2:
            continue
        out[_stem(word)] = None
    return list(out)


@functools.lru_cache(maxsize=8192)
def _held(text: str) -> frozenset[str]:
    """A chunk's content words, cached: the block scores the same chunks request after request."""
    return frozenset(content_terms(text))


def is_trivial(message: str | None) -> bool:
    """True for a message that asks memory for nothing: blank, or only greetings, acknowledgements
    and filler words."""
    words = plain_words(message or "")
    return all(w in TRIVIAL_WORDS for w in words)


class Relevance:
    """Relevance of chunks to one query, with word weights from the chunks at hand."""

    def __init__(self, query: str, corpus: Iterable[str]) -> None:
        self.terms = content_terms(query)
        docs = [_held(text) for text in corpus]
        df = {t: sum(t in doc for doc in docs) for t in self.terms}
        n = max(len(docs), 1)
        # A word no chunk holds weighs the most: the chunks cannot answer that part of the query.
        self.weights = {t: math.log(1 + n / (df[t] + 0.5)) for t in self.terms}
        self.total = sum(self.weights.values())

    def score(self, text: str) -> float:
        """The IDF-weighted share of the query's content words ``text`` holds, 0..1."""
        if not self.total:
            return 0.0
        held = _held(text)
        return round(sum(w for t, w in self.weights.items() if t in held) / self.total, 4)
