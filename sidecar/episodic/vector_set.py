"""A matrix of one workspace's normalised vectors for one model, so a recall is one matrix-vector
product, and its first pass.

A large matrix costs a recall one pass over all its bytes (169 MB at 110k rows of 384 floats),
which memory bandwidth, not arithmetic, bounds. A ranking that only needs the rows at or over a
cosine (``floor``) reads a copy 16 times smaller first: one sign bit per row and random
hyperplane (SimHash), two hyperplanes per dimension. The rows whose bits disagree with the
query's in few enough places are then scored exactly; the rest are never read. For one row and
one query, over the draw of the hyperplanes, each bit disagrees with probability angle / pi
independently of the others, so the disagreements are binomial: the cut is set where a row
exactly at the floor is left out with probability ``MISS_AT_FLOOR`` (a row further over it, far
less likely).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sidecar.clock import parse_iso, utcnow
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.store import Scored

__all__ = ["FIRST_PASS_ROWS", "MISS_AT_FLOOR", "SPLIT_ROWS", "VectorRow", "VectorSet", "sign_cut"]

Floats = npt.NDArray[np.float32]
_NONE = -1  # the code of a missing agent, crew or memory type
_UNKNOWN = -2  # the code of a value no row holds: matches nothing
#: Past this share of rows no longer served, the matrix is dropped and reloaded compact.
_DEAD_SHARE = 0.25
#: Rows from which a recall's matrix product is split over two threads (about 2 ms of work).
SPLIT_ROWS = 20_000
_SPLIT_POOL = ThreadPoolExecutor(1, thread_name_prefix="journal-matmul")
#: Rows from which a ranking with a cosine floor reads the sign codes first (below it the exact
#: product costs under 3 ms).
FIRST_PASS_ROWS = 20_000
#: The chance that the sign codes leave out a row whose cosine is exactly at the floor.
MISS_AT_FLOOR = 1e-5
#: Past this share of the rows to score, one product over the whole matrix (a stream) costs less
#: than gathering them (a gathered row costs about 1.6 streamed ones).
_GATHER_SHARE = 1 / 3


@dataclass(frozen=True, slots=True)
class VectorRow:
    """One served, embedded entry as the matrix needs it."""

    entry_id: str
    agent_id: str | None
    crew_id: str | None
    namespace: str
    memory_type: str | None
    expires_at: str | None
    importance: float
    blob: bytes
    dim: int

    @property
    def expires(self) -> float:
        return math.inf if self.expires_at is None else parse_iso(self.expires_at).timestamp()


class VectorSet:
    """The served, embedded entries of one workspace for one model, row-aligned, growable."""

    def __init__(self, dim: int, capacity: int = 64) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.codes: dict[str, int] = {}
        self.dead = 0
        capacity = max(capacity, 1)
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._ints = np.full((4, capacity), _NONE, dtype=np.int32)  # agent, crew, namespace, type codes
        self._expires = np.full(capacity, math.inf)
        self._importance = np.zeros(capacity)
        self._alive = np.zeros(capacity, dtype=bool)
        self._planes = _planes(dim)
        self._signs = np.zeros((self._planes.shape[1] // 64, capacity), dtype=np.uint64)

    @classmethod
    def build(cls, rows: Sequence[VectorRow]) -> VectorSet:
        """From rows of one model. A row whose dim differs from the first row's, or whose blob does
        not hold dim floats, is skipped."""
        dim = rows[0].dim if rows else 0
        built = cls(dim, capacity=len(rows) + 64)
        built.append(rows)
        return built

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        """The bytes its arrays take (the matrix, mostly)."""
        arrays = (self._matrix, self._ints, self._expires, self._importance, self._alive, self._signs)
        return sum(a.nbytes for a in arrays)

    @property
    def matrix(self) -> Floats:
        return self._matrix[: self.size]

    @property
    def stale(self) -> bool:
        """So many rows are no longer served that a compact reload is cheaper than scanning them."""
        return self.dead > 1000 and self.dead > _DEAD_SHARE * self.size

    def append(self, rows: Iterable[VectorRow]) -> None:
        kept = [r for r in rows if r.dim == self.dim and len(r.blob) == 4 * self.dim]
        if not kept:
            return
        self.kill(r.entry_id for r in kept)  # a re-embedded entry replaces its old row
        start, end = self.size, self.size + len(kept)
        self._reserve(end)
        # One join and one frombuffer: ~10x faster than a frombuffer per row at 10k rows.
        block = np.frombuffer(b"".join(r.blob for r in kept), dtype="<f4").reshape(len(kept), self.dim)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        self._matrix[start:end] = block / np.where(norms == 0, 1, norms)
        self._signs[:, start:end] = _sign_words(self._matrix[start:end], self._planes).T
        for name, index in (("agent_id", 0), ("crew_id", 1), ("namespace", 2), ("memory_type", 3)):
            self._ints[index, start:end] = [self._code(getattr(r, name)) for r in kept]
        self._expires[start:end] = [r.expires for r in kept]
        self._importance[start:end] = [r.importance for r in kept]
        self._alive[start:end] = True
        for offset, row in enumerate(kept):
            self.row_of[row.entry_id] = start + offset
            self.ids.append(row.entry_id)

    def kill(self, entry_ids: Iterable[str]) -> None:
        for entry_id in entry_ids:
            row = self.row_of.pop(entry_id, None)
            if row is not None:
                self._alive[row] = False
                self.dead += 1

    def set_importance(self, scores: dict[str, float]) -> None:
        for entry_id, score in scores.items():
            row = self.row_of.get(entry_id)
            if row is not None:
                self._importance[row] = score

    def mask(self, where: ScopeFilter, exclude: Sequence[str]) -> npt.NDArray[np.bool_]:
        n = self.size
        agents, crews, namespaces, types = self._ints[:, :n]
        keep = self._alive[:n].copy()
        keep &= self._expires[:n] > (where.now or utcnow()).timestamp()
        crew = self._lookup(where.crew_id)
        agent = self._lookup(where.agent_id)
        own = None if agent is None else (agents == agent) & ((crews == _NONE) if where.private else True)
        if crew is not None:
            owned = crews == crew
            if own is not None:
                owned |= own
            keep &= owned
        elif own is not None:
            keep &= own
        if where.namespace is not None:
            keep &= namespaces == self.codes.get(where.namespace, _UNKNOWN)
        if where.memory_types is not None:
            wanted = [self.codes.get(t, _UNKNOWN) for t in where.memory_types]
            keep &= np.isin(types, wanted)
        for entry_id in exclude:
            row = self.row_of.get(entry_id)
            if row is not None:
                keep[row] = False
        return keep

    def rank(
        self,
        where: ScopeFilter,
        query: Floats,
        limit: int,
        *,
        weighted: bool,
        exclude: Sequence[str],
        floor: float | None = None,
    ) -> list[Scored]:
        """Top ``limit`` served rows in scope by cosine (× importance when ``weighted``).

        With ``floor`` (and not ``weighted``), rows whose cosine is under it may be left out: on a
        matrix of ``FIRST_PASS_ROWS`` or more, only the rows the sign codes put near enough the
        query are scored, and a row at the floor is kept with probability 1 - ``MISS_AT_FLOOR``.
        Every cosine returned is exact."""
        if limit < 1 or not self.size or query.shape[-1] != self.dim:
            return []
        n = self.size
        norm = float(np.linalg.norm(query)) or 1.0
        unit = query.astype(np.float32) / norm
        keep = self.mask(where, exclude)
        if floor is not None and not weighted and n >= FIRST_PASS_ROWS:
            keep &= self._disagreements(unit) <= sign_cut(floor, self._planes.shape[1])
        candidates = np.flatnonzero(keep)
        if len(candidates) > _GATHER_SHARE * n:
            cosines = _product(self.matrix, unit)[candidates]
        else:  # few rows in scope or near the query: read only theirs
            cosines = self._matrix[candidates] @ unit
        importance = self._importance[candidates]
        keys = cosines * importance if weighted else cosines.astype(np.float64)
        if len(candidates) > limit:
            part = np.argpartition(-keys, limit - 1)[:limit]
            candidates, cosines, importance, keys = candidates[part], cosines[part], importance[part], keys[part]
        order = np.argsort(-keys, kind="stable")
        return [Scored(self.ids[candidates[i]], float(cosines[i]), float(importance[i])) for i in order]

    def _disagreements(self, unit: Floats) -> npt.NDArray[np.uint16]:
        """For each row, the hyperplanes on whose other side than the query it lies."""
        n = self.size
        query = _sign_words(unit[None, :], self._planes)[0]
        counts = np.zeros(n, dtype=np.uint16)
        scratch = np.empty(n, dtype=np.uint64)
        for word, bits in zip(self._signs[:, :n], query, strict=True):
            np.bitwise_xor(word, bits, out=scratch)
            counts += _popcount(scratch)
        return counts

    def cosines(self, entry_ids: Iterable[str], query: Floats) -> dict[str, float]:
        """The cosine of each listed entry that has a served row here."""
        rows = {i: self.row_of[i] for i in entry_ids if i in self.row_of}
        if not rows or query.shape[-1] != self.dim:
            return {}
        norm = float(np.linalg.norm(query)) or 1.0
        values = self._matrix[list(rows.values())] @ (query.astype(np.float32) / norm)
        return {entry_id: float(v) for entry_id, v in zip(rows, values, strict=True)}

    def _code(self, value: str | None) -> int:
        return _NONE if value is None else self.codes.setdefault(value, len(self.codes))

    def _lookup(self, value: str | None) -> int | None:
        return None if value is None else self.codes.get(value, _UNKNOWN)

    def _reserve(self, needed: int) -> None:
        capacity = len(self._alive)
        if needed <= capacity:
            return
        grown = max(needed, capacity + capacity // 2 + 64)
        matrix = np.zeros((grown, self.dim), dtype=np.float32)
        matrix[: self.size] = self._matrix[: self.size]
        ints = np.full((4, grown), _NONE, dtype=np.int32)
        ints[:, : self.size] = self._ints[:, : self.size]
        signs = np.zeros((len(self._signs), grown), dtype=np.uint64)
        signs[:, : self.size] = self._signs[:, : self.size]
        expires, importance, alive = np.full(grown, math.inf), np.zeros(grown), np.zeros(grown, dtype=bool)
        expires[: self.size] = self._expires[: self.size]
        importance[: self.size] = self._importance[: self.size]
        alive[: self.size] = self._alive[: self.size]
        self._matrix, self._ints, self._expires, self._importance, self._alive, self._signs = (
            matrix,
            ints,
            expires,
            importance,
            alive,
            signs,
        )


@functools.lru_cache(maxsize=8)
def _planes(dim: int) -> Floats:
    """The random hyperplanes of the sign codes for vectors of ``dim``: 128 per started 64 dims
    (768 for 384), Gaussian, from a fixed seed (every set of one width shares them)."""
    bits = 128 * max(1, -(-dim // 64))
    planes = np.random.default_rng(20_251_129 + dim).standard_normal((dim, bits)).astype(np.float32)
    planes.flags.writeable = False
    return planes


def _sign_words(rows: Floats, planes: Floats) -> npt.NDArray[np.uint64]:
    """Each row's side of every hyperplane, packed into 64-bit words (rows × words)."""
    sides = np.packbits(rows @ planes > 0, axis=1, bitorder="little")
    return np.ascontiguousarray(sides).view(np.uint64)


_BYTE_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)


def _popcount(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
    """Set bits per word (numpy 2's ``bitwise_count``; a byte table before it)."""
    count = getattr(np, "bitwise_count", None)
    counted: npt.NDArray[np.uint8]
    if count is not None:
        counted = count(words)
    else:
        counted = _BYTE_BITS[words.view(np.uint8)].reshape(len(words), 8).sum(axis=1, dtype=np.uint8)
    return counted


@functools.lru_cache(maxsize=64)
def sign_cut(floor: float, bits: int, miss: float = MISS_AT_FLOOR) -> int:
    """The most hyperplanes a row may disagree with the query on and still be scored: the least
    count that a row at cosine ``floor`` exceeds with probability at most ``miss`` (a binomial
    tail: each of ``bits`` planes separates the two with probability angle / pi)."""
    if floor <= -1.0:
        return bits
    p = math.acos(min(1.0, floor)) / math.pi
    if p <= 0.0:
        return 0
    tail = 0.0
    for over in range(bits, -1, -1):  # P(count >= over), summed from the top
        log_pmf = (
            math.lgamma(bits + 1)
            - math.lgamma(over + 1)
            - math.lgamma(bits - over + 1)
            + over * math.log(p)
            + (bits - over) * math.log1p(-p)
        )
        tail += math.exp(log_pmf)
        if tail > miss:
            return over
    return bits


def _product(matrix: Floats, query: Floats) -> Floats:
    """``matrix @ query``; past SPLIT_ROWS rows the two halves run at once on two cores (numpy
    releases the GIL), which halves a recall's largest cost on a large journal."""
    if len(matrix) < SPLIT_ROWS:
        return matrix @ query
    half = len(matrix) // 2
    first = _SPLIT_POOL.submit(np.matmul, matrix[:half], query)
    second = matrix[half:] @ query
    return np.concatenate([first.result(), second])
