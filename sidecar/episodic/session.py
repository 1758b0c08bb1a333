"""A finished session as an episodic summary: the request, the entry it becomes, and
the pieces made without a model (the one-sentence L0 abstract, the key topics).

A summary is idempotent on its ``source_id`` (``<session_id>:<compaction_count>`` unless given):
the entry's id is derived from it, so posting the same session end twice, or the same
``summary.generated`` event, stores one entry.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sidecar.episodic.entry import JournalEntry, invalid, refuse_unknown, require_id

__all__ = [
    "ABSTRACT_CHARS",
    "SUMMARY_ENTRY_TYPE",
    "SessionRequest",
    "key_topics",
    "l0_abstract",
    "source_entry_id",
    "summary_entry",
]

SUMMARY_ENTRY_TYPE = "summary.generated"
ABSTRACT_CHARS = 200
MAX_MESSAGES = 2000
MAX_MESSAGE_CHARS = 20_000
MAX_TOPICS = 12
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# A run of capitalised words (a proper noun phrase), not at the start of a sentence alone.
_PROPER = re.compile(r"\b[A-Z][A-Za-z0-9+#.-]*(?:\s+[A-Z][A-Za-z0-9+#.-]*)*")
_STARTS = "The A An We I It This That They He She You Our My In On At For And But So If When Then Also"
_COMMON_STARTS = frozenset(_STARTS.split())


def source_entry_id(workspace_id: str, source_id: str) -> str:
    """The journal id of the summary of ``source_id`` in the workspace: the same on every retry."""
    digest = hashlib.blake2b(f"{workspace_id}\x00{source_id}".encode(), digest_size=12).hexdigest()
    return f"je_summary_{digest}"


def l0_abstract(text: str, limit: int = ABSTRACT_CHARS) -> str:
    """The summary's first sentence (bullets and headings taken off), at most ``limit`` characters,
    cut at a word: what an auto-injector shows of it."""
    flat = " ".join(re.sub(r"^\s*(?:[-*+]|#+|\d+[.)])\s+", "", line) for line in text.splitlines() if line.strip())
    first = _SENTENCE.split(flat.strip(), maxsplit=1)[0] if flat.strip() else ""
    if len(first) <= limit:
        return first
    cut = first.rfind(" ", 0, limit)
    return first[: cut if cut > limit // 2 else limit - 1].rstrip() + "…"


def key_topics(text: str, limit: int = MAX_TOPICS) -> list[str]:
    """The proper noun phrases the summary names, most named first (ties: first named), for keyword
    search; a lone capitalised word that only starts a sentence ("The", "We") is not one."""
    counts: dict[str, int] = {}
    for match in _PROPER.finditer(text):
        words = match.group().rstrip(".").split()
        while words and words[0] in _COMMON_STARTS:
            words.pop(0)
        if words:
            phrase = " ".join(words)
            counts[phrase] = counts.get(phrase, 0) + 1
    return sorted(counts, key=lambda p: -counts[p])[:limit]


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """``POST /memory/session``: a finished session, by its messages or its compaction summary."""

    session_id: str
    source_id: str
    summary: str | None
    messages: tuple[tuple[str, str], ...]
    workspace_id: str
    agent_id: str

    FIELDS = frozenset(
        {"session_id", "source_id", "compaction_count", "summary", "messages", "workspace_id", "agent_id"}
    )

    @classmethod
    def from_json(cls, body: Mapping[str, Any], workspace_id: str, agent_id: str) -> SessionRequest:
        refuse_unknown(body, cls.FIELDS)
        session = require_id("session_id", body.get("session_id"))
        count = body.get("compaction_count", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise invalid("compaction_count", "compaction_count must be a non-negative integer")
        source = body.get("source_id")
        if "source_id" in body and (not isinstance(source, str) or not source.strip() or len(source) > 256):
            raise invalid("source_id", "source_id must be a non-blank string of at most 256 characters")
        summary = body.get("summary")
        if "summary" in body and (not isinstance(summary, str) or not summary.strip()):
            raise invalid("summary", "summary must be a non-empty string")
        messages = _messages(body["messages"]) if "messages" in body else ()
        if summary is None and not messages:
            raise invalid("messages", "give the session's messages, or its summary", missing=True)
        workspace = require_id("workspace_id", body.get("workspace_id", workspace_id))
        agent = require_id("agent_id", body.get("agent_id", agent_id))
        assert session is not None and workspace is not None and agent is not None
        return cls(session, source or f"{session}:{count}", summary, messages, workspace, agent)


def _messages(raw: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, list) or len(raw) > MAX_MESSAGES:
        raise invalid("messages", f"messages must be a list of at most {MAX_MESSAGES} {{role, content}} objects")
    out = []
    for i, message in enumerate(raw):
        if not isinstance(message, dict) or set(message) - {"role", "content"}:
            raise invalid("messages", f"messages[{i}] must be an object with role and content")
        role, content = message.get("role", "user"), message.get("content")
        if not isinstance(role, str) or not isinstance(content, str) or len(content) > MAX_MESSAGE_CHARS:
            raise invalid(
                "messages", f"messages[{i}] needs a role and a content of at most {MAX_MESSAGE_CHARS} characters"
            )
        out.append((role, content))
    return tuple(out)


def summary_entry(
    req: SessionRequest, text: str, engine: str, *, now: datetime, ttl_days: float, max_chars: int
) -> JournalEntry:
    """The ``summary.generated`` entry of a session: its summary, abstract and topics, expiring
    after ``ttl_days`` (90 days unless configured)."""
    summary = text.strip()
    if len(summary) > max_chars:
        summary = summary[: max_chars - 1].rstrip() + "…"
    payload = {
        "source_id": req.source_id,
        "session_id": req.session_id,
        "l0_abstract": l0_abstract(summary),
        "key_topics": key_topics(summary),
        "engine": engine,
        "messages": len(req.messages),
    }
    return JournalEntry(
        workspace_id=req.workspace_id,
        agent_id=req.agent_id,
        entry_type=SUMMARY_ENTRY_TYPE,
        summary=summary,
        payload=payload,
        refs={"session_id": req.session_id},
        id=source_entry_id(req.workspace_id, req.source_id),
        ts=now,
        expires_at=now + timedelta(days=ttl_days),
    )
