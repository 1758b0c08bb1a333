"""Query words as the index's tokenizer makes them, and the irregular forms searched beside them.

A query word is tokenized exactly as the index tokenizes text (``TOKENIZE``: porter stems, folded
diacritics, unicode61 separators), by FTS5 itself in a scratch table; a word also finds its
irregular forms, which stemming does not reach (``came`` for ``come``). Nothing here needs the
postings' arrays, so a search answered by FTS5 alone (the CLI's) does not load numpy.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from sidecar.index.query import irregular_groups

__all__ = ["FORM_WEIGHT", "TOKENIZE", "Phrases", "QueryTokens", "scratch", "with_forms"]

TOKENIZE = "porter unicode61 remove_diacritics 2"
# What an irregular form of a query word (``came`` for ``come``) adds to a chunk's score: this
# share of the form's own BM25. Half: the form is the word's lemma, not the word asked for.
FORM_WEIGHT = 0.5
_CACHE_LIMIT = 50_000


# -- tokenizing with FTS5's own tokenizer ------------------------------------------------------
class _Scratch:
    """An in-memory FTS5 table with the index's tokenizer, one per thread, to tokenize text
    exactly as the index does (porter stems, folded diacritics, unicode61 separators)."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.conn.execute(f"CREATE VIRTUAL TABLE s USING fts5(heading, body, tokenize='{TOKENIZE}')")
        self.conn.execute("CREATE VIRTUAL TABLE sv USING fts5vocab(s, 'instance')")

    def tokenize(self, insert: str, rows: Sequence[tuple[Any, ...]], select: str) -> list[Any]:
        """Insert ``rows`` into the scratch table, read ``select`` over its vocabulary, and roll
        back, so the table is empty again whatever happened."""
        self.conn.execute("BEGIN")
        try:
            self.conn.executemany(insert, rows)
            return self.conn.execute(select).fetchall()
        finally:
            self.conn.execute("ROLLBACK")


_local = threading.local()


def scratch() -> _Scratch:
    """This thread's scratch table."""
    scratch: _Scratch | None = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = _Scratch()
    return scratch


class QueryTokens:
    """Each query word's FTS5 tokens (``deployments`` -> ``deploy``; ``multi-agent`` -> ``multi``,
    ``agent``), as the index's tokenizer makes them; remembered, as agents repeat their words."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[str, ...]] = {}

    def __call__(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        cache = self._cache
        known = {w: cache.get(w) for w in words}  # another thread may clear the cache meanwhile
        missing = [w for w, toks in known.items() if toks is None]
        if missing:
            rows = scratch().tokenize(
                "INSERT INTO s (rowid, body) VALUES (?, ?)",
                list(enumerate(missing)),
                "SELECT doc, term FROM sv ORDER BY doc, offset",
            )
            found: dict[int, list[str]] = {}
            for doc, term in rows:
                found.setdefault(doc, []).append(term)
            if len(cache) + len(missing) > _CACHE_LIMIT:
                cache.clear()
            for i, word in enumerate(missing):
                known[word] = cache[word] = tuple(found.get(i, ()))
        return [known[w] or () for w in words]


Phrases = list[tuple[str, tuple[str, ...]]]


@functools.cache
def _forms() -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    """Each irregular form's token (as the index stems it) -> the other forms of its groups, each
    with its own token (``came`` -> ``come``; ``went`` -> ``go``, ``gone``)."""
    groups = irregular_groups()
    words = sorted({w for group in groups for w in group})
    token = dict(zip(words, QueryTokens()(words), strict=True))
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for group in groups:
        for word in group:
            others = out.setdefault(token[word][0], {})
            for other in group:
                if token[other] != token[word]:
                    others.setdefault(other, token[other])
    return {t: tuple(others.items()) for t, others in out.items()}


def with_forms(phrases: Phrases) -> Phrases:
    """The irregular forms of the single-token words of ``phrases`` (query words with their
    tokens) that stemming does not reach, with their tokens (``come`` -> ``came``; ``children``
    -> ``child``): searched beside the words, each by its own BM25, weighted ``FORM_WEIGHT``
    (``top_k``). A form the query holds already is not added."""
    table = _forms()
    have = {tokens[0] for _, tokens in phrases if len(tokens) == 1}
    extra: Phrases = []
    for _, tokens in phrases:
        if len(tokens) != 1:
            continue
        for form, form_tokens in table.get(tokens[0], ()):
            if form_tokens[0] not in have:
                have.add(form_tokens[0])
                extra.append((form, form_tokens))
    return extra
