"""Typed memories: remember, recall, feedback, forget, restore and the list of live memories
(``/memory/remember`` ... ``GET /memory/memories``, the ``memory_*`` MCP tools), and the lead's side of
a member's crew-memory request (its crew listener calls ``crew_memory``).

Where a request goes: the agent's own memories live in this sidecar's journal. The crew's live
in the lead's: on the lead they are local entries carrying the crew id; a member posts, recalls,
rates and forgets them through the lead's crew listener, as crew search does. ``crew_shared``
recall (the default scope of a lead, ``own`` otherwise) merges the two
by score; a lead that cannot be reached leaves the member's own hits marked
``"degraded": ["crew"]``. With a server crew store (``--crew-store postgres://...``) the lead
copies the crew's entries into it (``episodic.crew_store``) and a member recalls them there,
with no hop through the lead; writes still go to the lead, which copies them before it answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import structlog

from sidecar.clock import utcnow
from sidecar.episodic import memories as episodic
from sidecar.episodic.entry import JournalEntry, check_namespace, check_topic_key, invalid
from sidecar.episodic.memories import (
    FeedbackRequest,
    ForgetRequest,
    Identity,
    NearMiss,
    RecallRequest,
    RememberRequest,
    RestoreRequest,
    recall_memories,
    target_json,
)
from sidecar.episodic.query import Scope
from sidecar.errors import CrewUnavailable, NotFound, refuse_unknown
from sidecar.kg.model import Scope as KgScope
from sidecar.ops.answers import (
    FeedbackAnswer,
    ForgetAnswer,
    JournalEntryAnswer,
    MemoriesAnswer,
    MemoryRecallAnswer,
    RememberAnswer,
    RestoreAnswer,
)
from sidecar.ops.crew import CrewRemote, crew_kind
from sidecar.ops.sidecar import Sidecar
from sidecar.settings import Settings
from sidecar.store.base import StoreUnavailable

__all__ = [
    "MAX_LIST",
    "MemoriesRequest",
    "crew_memory",
    "default_scope",
    "feedback",
    "feedback_request",
    "forget",
    "forget_request",
    "listed",
    "recall",
    "recall_request",
    "remember",
    "remember_entry",
    "remember_request",
    "restore",
    "restore_request",
]

log = structlog.get_logger("sidecar.ops.memories")
#: The most memories one list answers.
MAX_LIST = 200


def default_scope(settings: Settings) -> str:
    """ScopeForRole: a lead recalls crew_shared, every other agent its own."""
    return Scope.CREW_SHARED.value if crew_kind(settings) == "lead" else Scope.OWN.value


def _remote(sc: Sidecar) -> bool:
    """Whether the crew's memories are held elsewhere (a member's: in its lead's journal)."""
    return sc.crew.remote is not None


# -- the typed requests, each with this sidecar's identity for what a request leaves out ----------------
def remember_request(settings: Settings, body: Mapping[str, Any]) -> RememberRequest:
    return RememberRequest.from_json(body, Identity.from_settings(settings))


def recall_request(settings: Settings, body: Mapping[str, Any]) -> RecallRequest:
    """A recall request; its scope defaults by the role (``default_scope``), its scoring to --recall-scoring."""
    return RecallRequest.from_json(
        body,
        Identity.from_settings(settings),
        default_scope=default_scope(settings),
        default_scoring=settings.recall_scoring,
    )


def feedback_request(settings: Settings, body: Mapping[str, Any]) -> FeedbackRequest:
    return FeedbackRequest.from_json(body, Identity.from_settings(settings))


def forget_request(settings: Settings, body: Mapping[str, Any]) -> ForgetRequest:
    return ForgetRequest.from_json(body, Identity.from_settings(settings))


def restore_request(settings: Settings, body: Mapping[str, Any]) -> RestoreRequest:
    return RestoreRequest.from_json(body, Identity.from_settings(settings))


# -- the operations ------------------------------------------------------------------------------------
async def remember(sc: Sidecar, req: RememberRequest, body: Mapping[str, Any]) -> RememberAnswer:
    """Store one typed memory. A crew memory on a member goes to the lead: ``body`` as the client
    sent it, with the identity the request resolved (the lead checks it again)."""
    if req.scope == "crew" and _remote(sc):
        sent = {k: v for k, v in body.items() if k != "scope"}
        entry = req.entry
        sent.update(workspace_id=entry.workspace_id, agent_id=entry.agent_id, namespace=entry.namespace)
        return cast(RememberAnswer, await _lead(sc).memory("remember", sent))
    return await _remember_here(sc, req.entry)


async def remember_entry(sc: Sidecar, entry: JournalEntry) -> RememberAnswer:
    """Store one typed memory built by the caller (the ingest: its own id, time and type) here."""
    return await _remember_here(sc, entry)


async def _remember_here(sc: Sidecar, entry: JournalEntry) -> RememberAnswer:
    """Store ``entry`` in this journal. A topic key upserts within its own scope only: on a lead,
    one journal holds the lead's own memories and the crew's, and each may hold the same key."""
    answer = cast(RememberAnswer, await episodic.remember(sc.journal, entry))
    sc.indexer.notify()
    if entry.crew_id is not None:
        await _shared(sc, [answer["id"], answer["supersedes"]])
    return answer


async def _shared(sc: Sidecar, ids: Sequence[str | None]) -> None:
    """After a crew write on a lead with a server crew store: the store gets the entries it
    touched before the answer, so the member that wrote reads it on its next recall from another host."""
    mirror = sc.crew.journal_mirror
    if mirror is not None:
        await mirror.flush([i for i in ids if i is not None])


async def recall(sc: Sidecar, req: RecallRequest) -> MemoryRecallAnswer:
    settings = sc.settings
    crew = req.scope is Scope.CREW_SHARED
    now = utcnow()
    local_crew = settings.crew_id if crew and not _remote(sc) else None
    near: list[NearMiss] = []
    hits, dense = await recall_memories(sc.journal, sc.embedder, req, crew_id=local_crew, now=now, near=near)
    found = [h.to_json(explain=req.explain, now=now) for h in hits]
    answer: dict[str, Any] = {"scope": req.scope.value, "scoring": req.scoring, "dense": dense}
    if near:
        answer["near"] = near[0].to_json()
    if crew and _remote(sc):
        try:
            found += await _crew_hits(sc, req, now)
        except CrewUnavailable:
            answer["degraded"] = ["crew"]
        found.sort(key=lambda h: -float(h["score"]))
        found = found[: req.k]
    answer["hits"] = found
    return cast(MemoryRecallAnswer, answer)


async def _crew_hits(sc: Sidecar, req: RecallRequest, now: datetime) -> list[dict[str, Any]]:
    """A member's crew half of a ``crew_shared`` recall: from the crew store's copy of the lead's
    crew entries when there is one (recalled and scored as the lead recalls them), else from the lead."""
    journal = sc.crew.crew_journal
    if journal is None:
        return _lead_hits(await _lead(sc).memory("recall", req.to_json()))
    try:
        hits, _ = await recall_memories(journal, sc.embedder, req, crew_id=sc.settings.crew_id, own=False, now=now)
    except StoreUnavailable as exc:
        log.warning("crew.store_unavailable", reason=str(exc))
        raise CrewUnavailable.store_down() from None
    return [{**h.to_json(explain=req.explain, now=now), "source": "crew"} for h in hits]


def _lead_hits(answer: dict[str, Any]) -> list[dict[str, Any]]:
    hits = answer.get("hits")
    if not isinstance(hits, list):
        raise CrewUnavailable("crew tier unavailable: the lead answered recall without hits")
    good = [
        h
        for h in hits
        if isinstance(h, dict)
        and isinstance(h.get("id"), str)
        and isinstance(h.get("content"), str)
        and isinstance(h.get("score"), int | float)
        and not isinstance(h.get("score"), bool)
    ]
    return [{**h, "source": "crew"} for h in good]


async def feedback(sc: Sidecar, req: FeedbackRequest) -> FeedbackAnswer:
    settings = sc.settings
    if req.scope == "crew":
        _need_crew(settings)
        if _remote(sc):
            sent = {**target_json(req.who, req.entry_id, req.topic_key), "signal": "+" if req.positive else "-"}
            return cast(FeedbackAnswer, await _lead(sc).memory("feedback", sent))
        answer = cast(FeedbackAnswer, await episodic.feedback(sc.journal, req, crew_id=settings.crew_id))
        await _shared(sc, [answer["id"]])
        return answer
    return cast(FeedbackAnswer, await episodic.feedback(sc.journal, req))


async def forget(sc: Sidecar, req: ForgetRequest) -> ForgetAnswer:
    settings = sc.settings
    if req.scope == "crew":
        _need_crew(settings)
        if _remote(sc):
            return cast(
                ForgetAnswer, await _lead(sc).memory("forget", target_json(req.who, req.entry_id, req.topic_key))
            )
        gone = await _forget_here(sc, req, settings.crew_id)
        await _shared(sc, gone["forgotten"])
        return gone
    return await _forget_here(sc, req, None)


async def _forget_here(sc: Sidecar, req: ForgetRequest, crew_id: str | None) -> ForgetAnswer:
    """Forget in this journal, and end the graph's facts the forgotten memories stated."""
    kg = sc.kg
    if kg is not None:
        await kg.ingest.follow()  # every fact they stated is in the graph before they go
    gone = cast(ForgetAnswer, await episodic.forget(sc.journal, req, crew_id=crew_id))
    if kg is not None:
        scope = KgScope(req.who.workspace_id, crew_id or "")
        gone["facts_ended"] = await kg.ingest.forgotten(scope, gone["forgotten"])
    return gone


def _lead(sc: Sidecar) -> CrewRemote:
    """A member's client for its lead's crew listener (a member always has one)."""
    remote = sc.crew.remote
    assert remote is not None
    return remote


def _need_crew(settings: Settings) -> None:
    if not settings.has_crew:
        raise invalid("scope", "scope crew needs a crew: this sidecar runs solo")


async def crew_memory(sc: Sidecar, op: str, body: dict[str, Any]) -> tuple[Mapping[str, Any], int]:
    """The lead's side of a member's crew-memory request (its crew listener calls this): always
    the crew's entries in this journal, in the workspace and namespace the member names."""
    settings = sc.settings
    who = Identity.from_settings(settings)
    store = sc.journal
    if op == "remember":
        req = RememberRequest.from_json({**body, "scope": "crew"}, who)
        return await _remember_here(sc, req.entry), 201
    if op == "recall":
        recall = RecallRequest.from_json(
            {**body, "scope": "crew_shared"}, who, default_scope="crew_shared", default_scoring=settings.recall_scoring
        )
        now = utcnow()
        hits, dense = await recall_memories(store, sc.embedder, recall, crew_id=settings.crew_id, own=False, now=now)
        return {"hits": [h.to_json(explain=recall.explain, now=now) for h in hits], "dense": dense}, 200
    if op == "feedback":
        answer = await episodic.feedback(store, FeedbackRequest.from_json(body, who), crew_id=settings.crew_id)
        await _shared(sc, [answer["id"]])
        return answer, 200
    if op == "forget":
        gone = await _forget_here(sc, ForgetRequest.from_json(body, who), settings.crew_id)
        await _shared(sc, gone["forgotten"])
        return gone, 200
    raise NotFound(f"no crew memory operation {op!r}")


async def restore(sc: Sidecar, req: RestoreRequest) -> RestoreAnswer:
    """Serve a retired memory again (the agent's own)."""
    return cast(RestoreAnswer, await episodic.restore(sc.journal, req))


@dataclass(frozen=True, slots=True)
class MemoriesRequest:
    """``GET /memory/memories`` (query parameters): the live memories of a workspace, agent and
    namespace (the sidecar's own by default), or with ``topic_key`` every entry that held the key."""

    who: Identity
    topic_key: str | None = None
    limit: int = 50

    FIELDS = ("workspace_id", "agent_id", "namespace", "topic_key", "limit")

    @classmethod
    def from_query(cls, settings: Settings, query: Mapping[str, str]) -> MemoriesRequest:
        refuse_unknown(query, cls.FIELDS)
        who = Identity.from_settings(settings).merged(
            {k: query.get(k) for k in ("workspace_id", "agent_id", "namespace")}
        )
        check_namespace(who.namespace)
        topic_key = query.get("topic_key")
        return cls(who, check_topic_key(topic_key) if topic_key is not None else None, _limit(query.get("limit")))


async def listed(sc: Sidecar, req: MemoriesRequest) -> MemoriesAnswer:
    """This journal's live memories, newest first; with a topic key, every entry that held the key
    (the live one and its history: superseded and retired), newest first."""
    who, limit = req.who, req.limit
    if req.topic_key is not None:
        entries = await sc.journal.history(who.workspace_id, who.namespace, req.topic_key, limit, agent_id=who.agent_id)
    else:
        entries = await sc.journal.memories(
            who.workspace_id, who.namespace, limit, agent_id=who.agent_id, crew_id=who.crew_id
        )
    return {"memories": [cast(JournalEntryAnswer, e.to_json()) for e in entries]}


def _limit(raw: str | None) -> int:
    if raw is None or raw == "":
        return 50
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_LIST:
        raise invalid("limit", f"limit must be an integer in 1..{MAX_LIST}")
    return value
