"""Ingest of conversation turns: what to keep, where it goes and with what type.

Each turn passes the noise filter (``noise.py``), then the classifier (``classify.py``), then
dedup (``write.dedup``: against the turns kept before it in the same call; the caller checks
what memory already holds). A kept decision, preference, fact, task or problem becomes a typed
memory in the journal; an event, or a long turn of no type, a line of the day's daily note. A
short turn of no type is dropped (``no_signal``). The plan is a pure value, so a dry run shows
exactly what a real run would do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidecar.errors import BadRequest
from sidecar.palace.classify import classify
from sidecar.palace.noise import noise_reason, plain_words
from sidecar.write.dedup import jaccard, tokens

__all__ = ["JOURNAL_TYPES", "MAX_TURNS", "Kept", "Plan", "Turn", "daily_lines", "parse_turns", "plan_ingest"]

MAX_TURNS = 1000
MAX_TURN_CHARS = 10_000
ROLES = ("user", "assistant", "tool", "system")
#: Classifier type -> the journal's memory type; the other types go to the daily note.
JOURNAL_TYPES = {"decision": "decision", "preference": "preference", "fact": "fact", "task": "todo", "problem": "error"}
#: A turn of no type is kept (in the daily note) only when it is at least this long.
OTHER_MIN_WORDS = 15
DUP_THRESHOLD = 0.9


@dataclass(frozen=True, slots=True)
class Turn:
    role: str
    content: str


@dataclass(frozen=True, slots=True)
class Kept:
    index: int
    type: str
    confidence: float
    where: str  # "journal" or "daily"
    text: str


@dataclass(slots=True)
class Plan:
    kept: list[Kept] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def drop(self, index: int, reason: str, **extra: Any) -> None:
        self.dropped.append({"index": index, "reason": reason, **extra})


def parse_turns(body: dict[str, Any]) -> list[Turn]:
    """The request's ``turns``: a list of ``{"role", "content"}`` objects; a 400 naming the problem."""
    raw = body.get("turns")
    if not isinstance(raw, list) or not raw:
        raise BadRequest("turns must be a non-empty list of {role, content} objects", code="invalid_turns")
    if len(raw) > MAX_TURNS:
        raise BadRequest(f"at most {MAX_TURNS} turns per call", code="invalid_turns")
    turns = []
    for i, turn in enumerate(raw):
        if not isinstance(turn, dict) or set(turn) - {"role", "content", "ts"}:
            raise BadRequest(f"turns[{i}] must be an object with role and content", code="invalid_turns")
        role, content = turn.get("role", "user"), turn.get("content")
        if "ts" in turn and not isinstance(turn["ts"], str):
            raise BadRequest(f"turns[{i}].ts must be a string", code="invalid_turns")
        if role not in ROLES:
            raise BadRequest(f"turns[{i}].role must be one of {', '.join(ROLES)}", code="invalid_turns")
        if not isinstance(content, str) or len(content) > MAX_TURN_CHARS or "\x00" in content:
            raise BadRequest(
                f"turns[{i}].content must be a string of at most {MAX_TURN_CHARS} characters", code="invalid_turns"
            )
        turns.append(Turn(role, content))
    return turns


def plan_ingest(turns: list[Turn]) -> Plan:
    """What to keep of ``turns`` and where, and what to drop and why (dedup within the call)."""
    plan = Plan()
    seen: list[tuple[int, frozenset[str]]] = []
    for i, turn in enumerate(turns):
        text = " ".join(turn.content.split())
        reason = noise_reason(text, turn.role)
        if reason is not None:
            plan.drop(i, reason)
            continue
        found = classify(text)
        if found.type == "other" and len(plain_words(text)) < OTHER_MIN_WORDS:
            plan.drop(i, "no_signal")
            continue
        words = tokens(text)
        twin = next((j for j, w in seen if jaccard(words, w) >= DUP_THRESHOLD), None)
        if twin is not None:
            plan.drop(i, "duplicate", duplicate_of_turn=twin)
            continue
        seen.append((i, words))
        where = "journal" if found.type in JOURNAL_TYPES else "daily"
        plan.kept.append(Kept(i, found.type, found.confidence, where, text))
    return plan


def daily_lines(kept: list[Kept], heading: str) -> str:
    """The daily note section the ``daily`` turns of one call append: a heading, a line each."""
    lines = [f"- ({k.type}) {k.text}" for k in kept]
    return f"## {heading}\n" + "\n".join(lines) + "\n"
