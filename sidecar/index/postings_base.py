"""What both layouts of the in-memory BM25 postings share (:mod:`sidecar.index.postings`): FTS5's
bm25 constants, how a chunk a commit adds is counted, and the tier size between the layouts."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence, Sized
from dataclasses import dataclass

__all__ = [
    "BODY_WEIGHT",
    "COMPACT_MIN",
    "HEADING_WEIGHT",
    "K1",
    "SMALL_CHUNKS",
    "AddedChunk",
    "B",
    "Delta",
    "PhraseScores",
    "Tidiness",
    "with_added",
]

K1 = 1.2
B = 0.75
HEADING_WEIGHT = 4  # integer weights: f stays an exact small integer
BODY_WEIGHT = 1
# A snapshot is compacted once this many of its slots (and at least 1/32 of its base) are dead or
# in the delta: a compaction costs a few passes over the base arrays, so a few per minute under
# steady writes are cheap, and the delta stays a few hundred chunks of small arrays.
COMPACT_MIN = 256
#: The most chunks a tier's postings hold in ``array``s and score in Python; above it, numpy. A
#: search scored in Python costs about 0.15 us of CPU per posting its words hold, which grows
#: with the tier. CPU per search on 2,000 agent-style queries: at 10,829 chunks p50 0.29 and p99
#: 0.8-1.0 ms (the targets there: 0.5 and 2 ms), at 15,704 p50 0.37-0.39 and p99 1.2-1.4 ms, at
#: 32,500 p50 0.65 and p99 2.5 ms, over them. Up to this size the 10k targets hold with a
#: quarter to spare; above it numpy's vectorised pass is worth its 10-15 MB.
SMALL_CHUNKS = 16_000

PhraseScores = Callable[[str], list[tuple[int, float]]]
#: Postings of the chunks committed since the base: per term, their slots and weighted frequencies.
Delta = dict[str, tuple["array[int]", "array[int]"]]


class Tidiness:
    """What a snapshot of either layout counts the same way from its arrays' lengths: how much of
    it is delta, dead or live, and when it is compacted or built again. Each layout sets its own
    ``untidy_limit``."""

    ids: Sized
    slots: Sized
    base_slots: int
    live: int
    delta: Delta
    delta_ids: dict[int, int]

    @property
    def delta_slots(self) -> int:
        return len(self.ids) - self.base_slots

    @property
    def postings(self) -> int:
        return len(self.slots) + sum(len(s) for s, _ in self.delta.values())

    @property
    def untidy_slots(self) -> int:
        """Slots a compaction would tidy away: dead chunks, and live chunks held by the delta."""
        return len(self.ids) - self.live + len(self.delta_ids)

    @property
    def untidy_limit(self) -> int:
        """Untidy slots past which the next snapshot is compacted."""
        raise NotImplementedError

    def wants_compaction(self) -> bool:
        return self.untidy_slots > self.untidy_limit

    def delta_outgrown(self) -> bool:
        """Whether the delta is large enough that a fresh base is cheaper to query."""
        return self.delta_slots > max(1_000, self.base_slots // 4)


@dataclass(frozen=True, slots=True)
class AddedChunk:
    """A chunk committed since the snapshot: its id, token count and weighted term frequencies."""

    id: int
    tokens: int
    freqs: dict[str, int]


def with_added(delta: Delta, delta_ids: dict[int, int], added: Sequence[AddedChunk], first: int) -> Delta:
    """``delta`` with the postings of ``added`` appended, ``added[i]`` at slot ``first + i``, which
    is recorded in ``delta_ids`` (the caller's own copy). ``delta`` itself is left as it was: a
    snapshot a search still reads shares it."""
    grouped: dict[str, tuple[list[int], list[int]]] = {}
    for i, chunk in enumerate(added):
        delta_ids[chunk.id] = first + i
        for term, freq in chunk.freqs.items():
            entry = grouped.setdefault(term, ([], []))
            entry[0].append(first + i)
            entry[1].append(min(freq, 0xFFFF))
    merged = dict(delta)
    for term, (slots, freqs) in grouped.items():
        add_s, add_f = array("i", slots), array("H", freqs)
        old = merged.get(term)
        merged[term] = (add_s, add_f) if old is None else (old[0] + add_s, old[1] + add_f)
    return merged
