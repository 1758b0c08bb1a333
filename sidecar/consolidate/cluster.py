"""Near-duplicate lines of a period, merged: lines whose word sets (``dedup.tokens``) have a
Jaccard of at least ``CLUSTER_JACCARD`` say the same thing, and with an embedding model, so do
lines whose vectors have a cosine of at least ``CLUSTER_COSINE`` (the same fact in other words:
"Deploys go through make ship" / "We deploy with make ship"). Never two lines where a word that
differs holds a digit ("port 8080" and "port 8081" stay apart) or carries content (not a stop word
or another form of the other's word: "the mailer ..." and "the notifier ..." stay apart), nor two
that name someone or
something else (a capitalised word past the first that the other lacks: "Talked with Alice ..."
and "Talked with Bob ..." stay apart). Each cluster keeps its fullest line
and credits every note the line appeared in; the other lines are merged duplicates.
Deterministic: lines are taken in order, and each joins the earliest cluster it matches. Only lines
with the same numbers and names that share one of their rarest words are compared (a partition and
a prefix filter, both exact for the tests above), so a run stays near-linear in its lines.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from sidecar.consolidate.periods import Line
from sidecar.index.query import STOPWORDS
from sidecar.write.dedup import LIST_MARKER, jaccard, tokens

__all__ = ["CLUSTER_COSINE", "CLUSTER_JACCARD", "Cluster", "cluster_lines", "vector_partners"]

CLUSTER_JACCARD = 0.6
CLUSTER_COSINE = 0.9
_NAME = re.compile(r"[A-Z][\w.-]*")
_STEM = 4  # letters two forms of a word share


@dataclass(slots=True)
class Cluster:
    """Lines that say the same thing: ``kept`` (the fullest) and every member, in order."""

    kept: Line
    words: frozenset[str]
    names: frozenset[str]  # the first line's (``_names``): a line naming others never joins
    members: list[Line] = field(default_factory=list)

    @property
    def heading(self) -> str:
        """The section the fact first appeared under."""
        return self.members[0].heading

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(line.source for line in self.members))

    @property
    def merged(self) -> list[Line]:
        """The members left out in favour of ``kept``."""
        return [line for line in self.members if line is not self.kept]


def _numbers_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether a word one set holds and the other lacks has a digit ("port 8080" / "port 8081")."""
    return any(ch.isdigit() for word in a ^ b for ch in word)


def _content_differs(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether a word one set holds and the other lacks carries content: not a stop word, nor
    another form of a word the other holds ("blocking" / "blocked"). "The mailer error budget is
    99.5" and "The notifier error budget is 99.5" are two facts, however alike their words."""
    for word in a ^ b:
        other = b if word in a else a
        if word in STOPWORDS or (len(word) >= _STEM and any(o[:_STEM] == word[:_STEM] for o in other)):
            continue
        return True
    return False


def _names(text: str) -> frozenset[str]:
    """The capitalised words of a line past its first (names, products, places)."""
    found = (_NAME.match(word) for word in LIST_MARKER.sub("", text).split()[1:])
    return frozenset(m.group(0).rstrip(".-") for m in found if m)


def cluster_lines(
    lines: Sequence[Line],
    threshold: float = CLUSTER_JACCARD,
    vectors: npt.NDArray[np.float32] | None = None,
    cosine: float = CLUSTER_COSINE,
) -> list[Cluster]:
    """The clusters of ``lines`` in order of their first line; ``vectors`` (one L2-normalised row
    per line, from an embedding model) also match lines at ``cosine`` or more."""
    clusters: list[Cluster] = []
    postings: dict[str, list[int]] = {}
    seeds: list[int] = []  # each cluster's first line, whose vector stands for it
    sets = [tokens(line.text) for line in lines]
    df = Counter(word for words in sets for word in words)
    for n, line in enumerate(lines):
        words = sets[n]
        names = _names(line.text)
        # Only lines with the same numbers and names may join (below), so they are looked up apart.
        group = f"{sorted(w for w in words if any(ch.isdigit() for ch in w))}{sorted(names)}"
        candidates = sorted({c for word in _prefix(words, df, threshold) for c in postings.get(group + word, ())})
        match = next(
            (
                c
                for c in candidates
                if clusters[c].names == names
                and not _numbers_differ(words, clusters[c].words)
                and jaccard(words, clusters[c].words) >= threshold
                and not _content_differs(words, clusters[c].words)
            ),
            None,
        )
        if match is None and vectors is not None and seeds:
            match = _closest(n, words, names, vectors=vectors, seeds=seeds, clusters=clusters, cosine=cosine)
        if match is None:
            match = len(clusters)
            clusters.append(Cluster(line, words, names))
            seeds.append(n)
            for word in _prefix(words, df, threshold):
                postings.setdefault(group + word, []).append(match)
        cluster = clusters[match]
        cluster.members.append(line)
        if (len(words), len(line.text)) > (len(tokens(cluster.kept.text)), len(cluster.kept.text)):
            cluster.kept = line
    return clusters


def vector_partners(lines: Sequence[Line]) -> list[bool]:
    """For each line, whether another line has the same numbers and names: the only lines it may
    join by meaning (``cluster_lines`` never merges lines whose numbers or names differ), so the
    only ones whose vectors are read."""
    keys = [
        (frozenset(w for w in tokens(line.text) if any(ch.isdigit() for ch in w)), _names(line.text)) for line in lines
    ]
    counts = Counter(keys)
    return [counts[key] > 1 for key in keys]


def _prefix(words: frozenset[str], df: Counter[str], threshold: float) -> list[str]:
    """The rarest ``|w| - ceil(t |w|) + 1`` words of a set: two sets at a Jaccard of ``t`` or more
    share at least one word of their prefixes (the prefix filter), so only lines sharing a rare
    word are ever compared and clustering stays near-linear however common the other words are."""
    keep = len(words) - math.ceil(threshold * len(words) - 1e-9) + 1
    return sorted(words, key=lambda w: (df[w], w))[: max(keep, 0)]


def _closest(
    n: int,
    words: frozenset[str],
    names: frozenset[str],
    *,
    vectors: npt.NDArray[np.float32],
    seeds: list[int],
    clusters: list[Cluster],
    cosine: float,
) -> int | None:
    """The earliest cluster whose first line the model finds this close, with no number or name
    that differs."""
    sims = vectors[seeds] @ vectors[n]
    for c in np.flatnonzero(sims >= cosine):
        cluster = clusters[int(c)]
        if cluster.names == names and not _numbers_differ(words, cluster.words):
            return int(c)
    return None
