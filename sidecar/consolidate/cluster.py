"""Near-duplicate lines of a period, merged: lines whose word sets (``dedup.tokens``) have a
Jaccard of at least ``CLUSTER_JACCARD`` say the same thing, unless a word that differs holds a
digit ("port 8080" and "port 8081" stay apart). Each cluster keeps its fullest line and credits
every note the line appeared in; the other lines are merged duplicates. Deterministic: lines are
taken in order, and each joins the earliest cluster it matches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from sidecar.consolidate.periods import Line
from sidecar.write.dedup import jaccard, tokens

__all__ = ["CLUSTER_JACCARD", "Cluster", "cluster_lines"]

CLUSTER_JACCARD = 0.6


@dataclass(slots=True)
class Cluster:
    """Lines that say the same thing: ``kept`` (the fullest) and every member, in order."""

    kept: Line
    words: frozenset[str]
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


def _same(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    if any(ch.isdigit() for word in a ^ b for ch in word):
        return False
    return jaccard(a, b) >= threshold


def cluster_lines(lines: Sequence[Line], threshold: float = CLUSTER_JACCARD) -> list[Cluster]:
    """The clusters of ``lines`` in order of their first line."""
    clusters: list[Cluster] = []
    postings: dict[str, list[int]] = {}
    for line in lines:
        words = tokens(line.text)
        shared = Counter(c for word in words for c in postings.get(word, ()))
        floor = threshold * len(words)
        candidates = sorted(c for c, count in shared.items() if count >= floor)
        match = next((c for c in candidates if _same(words, clusters[c].words, threshold)), None)
        if match is None:
            match = len(clusters)
            clusters.append(Cluster(line, words))
            for word in words:
                postings.setdefault(word, []).append(match)
        cluster = clusters[match]
        cluster.members.append(line)
        if (len(words), len(line.text)) > (len(tokens(cluster.kept.text)), len(cluster.kept.text)):
            cluster.kept = line
    return clusters
