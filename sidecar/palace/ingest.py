"""Ingest of conversation turns: what to keep, where it goes, with what type and importance.

Each turn passes the noise filter (``noise.py``); a turn over 800 characters is then cut into
chunks at sentence boundaries (``chunk.py``), and each chunk is classified (``classify.py``) and
compared with what the call kept before it and with the journal's live memories (``near.py``).
A near twin that adds no content word is a ``duplicate``; one that does (a changed value: "owned
by Priya", then "owned by Marcus") is kept as an update that supersedes its twin. A kept
decision, preference, fact, task, problem, milestone or emotional turn becomes a typed memory in
the journal; an event, or a long turn of no type, a line of the daily note of the turn's day. A
short turn of no type is dropped (``no_signal``).

The plan is a pure value computed off the event loop (it runs every turn's regexes), so a dry run
shows exactly what a real run would do and a large ingest never stalls other requests.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sidecar.clock import parse_iso
from sidecar.errors import BadRequest
from sidecar.palace.chunk import chunk_text
from sidecar.palace.classify import classify
from sidecar.palace.limits import MAX_TURN_CHARS, MAX_TURNS
from sidecar.palace.near import EndsIndex, NearIndex, adds_words
from sidecar.palace.noise import noise_reason, plain_words
from sidecar.settings import ID_RE
from sidecar.write.dedup import tokens
from sidecar.write.dedup import words as words_of

__all__ = [
    "JOURNAL_TYPES",
    "Kept",
    "Plan",
    "Turn",
    "daily_lines",
    "entry_id",
    "parse_turns",
    "plan_ingest",
    "priority_of",
]

ROLES = ("user", "assistant", "tool", "system")
#: Classifier type -> (the journal's memory type, the tag that keeps the classifier's type); the
#: other types go to the daily note. The journal has no milestone or emotional memory type: those
#: are ``context`` memories tagged with their type.
JOURNAL_TYPES: dict[str, tuple[str, str | None]] = {
    "decision": ("decision", None),
    "preference": ("preference", None),
    "fact": ("fact", None),
    "task": ("todo", None),
    "problem": ("error", None),
    "milestone": ("context", "milestone"),
    "emotional": ("context", "emotional"),
}
#: How much a kept turn of each type matters, before the classifier's confidence (0-1).
TYPE_WEIGHT = {
    "decision": 1.0,
    "preference": 0.9,
    "milestone": 0.8,
    "problem": 0.8,
    "task": 0.7,
    "fact": 0.7,
    "emotional": 0.5,
    "event": 0.5,
    "other": 0.3,
}
#: A turn of no type is kept (in the daily note) only when it is at least this long.
OTHER_MIN_WORDS = 15
DUP_THRESHOLD = 0.9
#: A near twin (at least this Jaccard) that keeps most of the sentence and swaps a few words is an
#: update of it ("owned by Priya" -> "owned by Marcus"); see ``_changed_value``.
UPDATE_THRESHOLD = 0.6
UPDATE_SHARED = 0.6
#: The most words a value swapped inside a sentence may take (``_changed_value``).
UPDATE_SWAP = 3
#: Verbs after which the words are a value ("is Tuesday", "uses Go"), not the subject.
_VERBS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "uses",
        "use",
        "used",
        "runs",
        "run",
        "owns",
        "owned",
        "has",
        "have",
        "costs",
        "takes",
        "starts",
        "begins",
        "ends",
        "lives",
        "works",
        "reports",
        "sits",
        "becomes",
        "means",
        "holds",
        "leaves",
        "meets",
        "happens",
        "falls",
    ]
)
#: A near-duplicate index key: ("memory", id) for a journal memory, ("kept", n) for this call's n-th kept item.
Key = tuple[str, str | int]


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    content: str
    ts: datetime | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Kept:
    index: int
    type: str
    confidence: float
    where: str  # "journal" or "daily"
    text: str
    priority: int = 5
    chunk: int | None = None  # the chunk's place in its turn, when the turn was cut
    ts: datetime | None = None
    entry_id: str | None = None  # the journal id a turn with an id always gets (retry-safe)
    supersedes: str | None = None  # the live memory this one updates
    updates: int | None = None  # the earlier kept item of this call it updates (its place in ``kept``)
    replayed: bool = False  # stored by an earlier call with the same turn id


@dataclass(slots=True)
class Plan:
    kept: list[Kept] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def drop(self, index: int, reason: str, chunk: int | None = None, **extra: Any) -> None:
        row = {"index": index, "reason": reason, **extra}
        if chunk is not None:
            row["chunk"] = chunk
        self.dropped.append(row)


def parse_turns(body: dict[str, Any]) -> list[Turn]:
    """The request's ``turns``: a list of ``{"role", "content", "ts", "id"}`` objects; a 400 naming
    the problem (nothing is kept of a request with a bad turn)."""
    raw = body.get("turns")
    if not isinstance(raw, list) or not raw:
        raise BadRequest("turns must be a non-empty list of {role, content} objects", code="invalid_turns")
    if len(raw) > MAX_TURNS:
        raise BadRequest(f"at most {MAX_TURNS} turns per call", code="invalid_turns")
    return [_turn(i, turn) for i, turn in enumerate(raw)]


def _turn(i: int, turn: Any) -> Turn:
    if not isinstance(turn, dict) or set(turn) - {"role", "content", "ts", "id"}:
        raise BadRequest(f"turns[{i}] must be an object with role and content (and ts, id)", code="invalid_turns")
    role, content = turn.get("role", "user"), turn.get("content")
    if role not in ROLES:
        raise BadRequest(f"turns[{i}].role must be one of {', '.join(ROLES)}", code="invalid_turns")
    if not isinstance(content, str) or len(content) > MAX_TURN_CHARS or "\x00" in content:
        raise BadRequest(
            f"turns[{i}].content must be a string of at most {MAX_TURN_CHARS} characters", code="invalid_turns"
        )
    ts = _turn_time(i, turn["ts"]) if "ts" in turn else None
    turn_id = turn.get("id")
    if turn_id is not None and (not isinstance(turn_id, str) or not ID_RE.match(turn_id)):
        raise BadRequest(f"turns[{i}].id must be 1-128 letters, digits or _.:@/-", code="invalid_turns")
    return Turn(role, content, ts, turn_id)


def entry_id(turn_id: str, chunk: int | None) -> str:
    """The journal id of a turn's memory (or one chunk's): the same on every retry of the turn."""
    digest = hashlib.blake2b(turn_id.encode(), digest_size=12).hexdigest()
    return f"je_ingest_{digest}_{chunk or 0}"


def priority_of(kind: str, confidence: float, *, transient: bool) -> int:
    """The memory's priority (1-10; its importance seed is a tenth of it) from its type and the
    classifier's confidence; a remark about this moment (a clock time) gets the least."""
    if transient:
        return 1
    weight = TYPE_WEIGHT.get(kind, 0.3) * (0.5 + 0.5 * confidence)
    return max(1, min(10, round(1 + 8 * weight)))


def plan_ingest(
    turns: Sequence[Turn], held: Iterable[tuple[str, str]] = (), stored: frozenset[str] = frozenset()
) -> Plan:
    """What to keep of ``turns`` and where, and what to drop and why. ``held`` is (id, text) of the
    journal's live memories; ``stored`` the ids of memories earlier calls made from these turns."""
    plan = Plan()
    held = [(memory_id, text) for memory_id, text in held if memory_id not in stored]
    pieces: list[tuple[int, Turn, int | None, str]] = []
    for i, turn in enumerate(turns):
        text = " ".join(turn.content.split())
        reason = noise_reason(text, turn.role)
        if reason is not None:
            plan.drop(i, reason)
            continue
        parts = chunk_text(text)
        pieces += [(i, turn, n if len(parts) > 1 else None, part) for n, part in enumerate(parts)]
    frequency = Counter(w for text in [*(t for _, t in held), *(p[3] for p in pieces)] for w in tokens(text))
    twins = _Twins(frequency)
    for memory_id, text in held:
        twins.add(("memory", memory_id), text)
    for i, turn, chunk, part in pieces:
        _plan_chunk(plan, twins, turn, index=i, chunk=chunk, text=part, stored=stored)
    return plan


class _Twins:
    """What a new text may repeat or update: near-duplicates by words (Jaccard >= 0.9) and
    restatements that share the first or last words (``_changed_value``)."""

    def __init__(self, frequency: Counter[str]) -> None:
        self.near: NearIndex[Key] = NearIndex(DUP_THRESHOLD, frequency)
        self.ends: EndsIndex[Key] = EndsIndex()

    def add(self, key: Key, text: str) -> None:
        self.near.add(key, tokens(text), text)
        self.ends.add(key, words_of(text))

    def find(self, text: str, words: frozenset[str]) -> tuple[Key, bool] | None:
        """The twin of ``text`` and whether ``text`` updates it (changes a value) rather than repeats
        it; None when it has none (a text of its own)."""
        twin = self.near.nearest(words)
        if twin is not None:
            key = twin[0]
            if not adds_words(words, self.near.words(key)):
                return key, False
            return (key, True) if _changed_value(self.near.text(key), text) else None
        for key in self.ends.candidates(words_of(text)):
            other = self.near.words(key)
            close = len(words & other) / len(words | other) >= UPDATE_THRESHOLD
            if close and adds_words(words, other) and _changed_value(self.near.text(key), text):
                return key, True
        return None


def _plan_chunk(
    plan: Plan, twins: _Twins, turn: Turn, *, index: int, chunk: int | None, text: str, stored: frozenset[str]
) -> None:
    found = classify(text)
    if found.type == "other" and len(plain_words(text)) < OTHER_MIN_WORDS:
        plan.drop(index, "no_signal", chunk)
        return
    where = "journal" if found.type in JOURNAL_TYPES else "daily"
    fixed_id = entry_id(turn.id, chunk) if turn.id is not None and where == "journal" else None
    item = Kept(
        index, found.type, found.confidence, where, text,
        priority_of(found.type, found.confidence, transient=found.transient),
        chunk, turn.ts, fixed_id, replayed=fixed_id in stored,
    )  # fmt: skip
    twin = None if item.replayed else twins.find(text, tokens(text))
    if twin is not None:
        (kind, ref), updates = twin
        if not updates:
            if kind == "memory":
                plan.drop(index, "duplicate", chunk, duplicate_of={"memory_id": ref})
            else:
                plan.drop(index, "duplicate", chunk, duplicate_of_turn=plan.kept[int(ref)].index)
            return
        item = replace(item, supersedes=str(ref)) if kind == "memory" else replace(item, updates=int(ref))
    twins.add(("kept", len(plan.kept)), text)
    plan.kept.append(item)


def _changed_value(old: str, new: str) -> bool:
    """Whether ``new`` restates ``old`` with a few words swapped at one end (the value: "... is owned
    by Marcus" for "... by Priya", "Marcus owns ..." for "Priya owns ..."): the words the two share
    at their start or at their end are most of the shorter one. "The api uses Redis" and "The
    worker uses Redis" share too little of either end: two facts, not one changed. Or swapped
    after the verb, with the rest the same ("The deploy window is Tuesday at 10:00" for "...
    Thursday at 10:00"): at most ``UPDATE_SWAP`` words either side, the shared start holding the
    verb (so the value changed, not the subject)."""
    a, b = words_of(old), words_of(new)
    shorter = min(len(a), len(b))
    head = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), shorter)
    tail = next((i for i, (x, y) in enumerate(zip(reversed(a), reversed(b), strict=False)) if x != y), shorter)
    if shorter > 0 and max(head, tail) < shorter and max(head, tail) >= UPDATE_SHARED * shorter:
        return True
    shared = head + tail
    return (
        shorter > 0
        and 0 < len(a) - shared <= UPDATE_SWAP
        and 0 < len(b) - shared <= UPDATE_SWAP
        and tail > 0
        and shared >= UPDATE_SHARED * shorter
        and any(w in _VERBS for w in a[1:head])
    )


def daily_lines(kept: list[Kept], heading: str) -> str:
    """The daily note section the ``daily`` turns of one call append: a heading, a line each."""
    lines = [f"- ({k.type}) {k.text}" for k in kept]
    return f"## {heading}\n" + "\n".join(lines) + "\n"


def _turn_time(i: int, value: object) -> datetime:
    """A turn's ``ts``: any ISO 8601 form (no zone: UTC), as an aware UTC datetime; a 400 otherwise."""
    problem = f"turns[{i}].ts is not an ISO 8601 timestamp: {str(value)[:40]!r}"
    if not isinstance(value, str):
        raise BadRequest(problem, code="invalid_turns")
    try:
        return parse_iso(value)
    except ValueError:
        raise BadRequest(problem, code="invalid_turns") from None
