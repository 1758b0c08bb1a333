"""A member's way to the crew tier: the lead sidecar's crew listener, over HTTP.

One ``httpx.AsyncClient`` for the app, explicit connect and read timeouts, and a cap on the
response size. A lead that is down, hung, or answers garbage becomes a 503 ``crew_unavailable``
within the timeout; it never takes the member's own agent-tier search down with it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import structlog

from sidecar.errors import BadRequest, Conflict, CrewUnavailable, NotFound, PayloadTooLarge, SidecarError
from sidecar.kg.boost import KgBoost
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.model import Scope
from sidecar.kg.ops import GRAPH_READS, crew_read
from sidecar.kg.pg_kg import PgKgStore
from sidecar.retrieval.search import SearchRequest
from sidecar.settings import Settings
from sidecar.store.base import StoreUnavailable

if TYPE_CHECKING:
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.store.postgres import PostgresCrewStore

__all__ = ["CrewProxy", "StoreCrewProxy"]

log = structlog.get_logger("sidecar.crew.proxy")
_FIELDS: dict[str, type | tuple[type, ...]] = {
    "path": str,
    "heading": str,
    "line_start": int,
    "line_end": int,
    "snippet": str,
    "score": (int, float),
}


class CrewProxy:
    def __init__(self, settings: Settings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base = settings.lead_url.rstrip("/")
        self.max_bytes = settings.proxy_max_bytes
        timeout = httpx.Timeout(settings.proxy_read_timeout, connect=settings.proxy_connect_timeout)
        headers = {"Authorization": f"Bearer {settings.crew_token}"}
        self.client = httpx.AsyncClient(timeout=timeout, headers=headers, transport=transport, trust_env=False)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def search(self, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]:
        """The lead's crew hits, and what the lead had to leave out (``dense``), if anything."""
        body = {"query": req.query, "limit": req.limit, "syntax": "fts5" if req.raw_fts else "text"}
        if req.explain:
            body["explain"] = True
        if req.context != "snippet":
            body["context"] = req.context
        data = await self._call("POST", "/crew/search", body)
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list) or not all(_valid_hit(r) for r in results):
            raise self._unavailable("the lead answered with malformed results")
        degraded = data.get("degraded", [])
        if not isinstance(degraded, list) or not all(isinstance(d, str) for d in degraded):
            degraded = []
        keep = (*_FIELDS, "explain") if req.explain else tuple(_FIELDS)
        hits = [
            {"source": "crew", **{k: r[k] for k in keep if k in r}, "highlights": _highlights(r), **_extras(r)}
            for r in results[: req.limit]
        ]
        return hits, degraded

    async def memory(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        """One crew-memory operation (remember, recall, feedback, forget) on the lead's journal.

        A refusal the client can act on is passed on: a bad field, an id or topic key the lead
        does not hold (feedback, forget), a topic key taken, a body too large. A recall was
        checked here already, so a lead that refuses one cannot serve it: the crew is unavailable
        (and the recall degraded) rather than the agent's request wrong. A remember the lead has
        no route for (a lead of an older version) is unavailable too, not a 404."""
        try:
            data = await self._call("POST", f"/crew/memory/{op}", body)
        except (BadRequest, NotFound, Conflict, PayloadTooLarge) as exc:
            if op == "recall" or (op == "remember" and isinstance(exc, NotFound)):
                raise self._unavailable(f"the lead refused {op}: {exc.code}: {exc.message}") from None
            raise
        if not isinstance(data, dict):
            raise self._unavailable(f"the lead answered {op} with a body that is not a JSON object")
        return data

    async def kg(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        """One operation on the crew's knowledge graph, which the lead holds. A refusal the client
        can act on (a bad field, an unknown fact) is passed on; anything else is unavailable."""
        data = await self._call("POST", f"/crew/kg/{op}", body)
        if not isinstance(data, dict):
            raise self._unavailable(f"the lead answered kg {op} with a body that is not a JSON object")
        return data

    async def status(self) -> dict[str, Any]:
        data = await self._call("GET", "/crew/status", None)
        if not isinstance(data, dict):
            raise self._unavailable("the lead answered with a malformed status")
        return {**data, "via": self.base}

    async def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        if not self.base:  # a member reading the crew from a server store, with no lead configured
            raise self._unavailable("no lead is configured (--lead-url): this needs the lead")
        try:
            async with self.client.stream(method, self.base + path, json=body) as resp:
                raw = await self._read_capped(resp)
                status = resp.status_code
        except httpx.TimeoutException:
            raise self._unavailable("the lead did not answer in time") from None
        except httpx.HTTPError as exc:
            raise self._unavailable(f"cannot reach the lead: {type(exc).__name__}") from None
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise self._unavailable(f"the lead answered {status} with a body that is not JSON") from None
        passed_on: dict[int, type[SidecarError]] = {400: BadRequest, 404: NotFound, 409: Conflict, 413: PayloadTooLarge}
        if status in passed_on and isinstance(data, dict) and isinstance(data.get("error"), dict):
            err = data["error"]  # the client's own mistake (e.g. raw FTS5 syntax, an unknown id): pass it on
            kind = passed_on[status]
            named = {"field": err["field"]} if isinstance(err.get("field"), str) else {}
            raise kind(str(err.get("message", "bad request")), code=str(err.get("code", kind.default_code)), **named)
        if status not in (200, 201):
            raise self._unavailable(f"the lead answered {status}")
        return data

    async def _read_capped(self, resp: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise self._unavailable(f"the lead's answer is over {self.max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _unavailable(self, why: str) -> CrewUnavailable:
        log.warning("crew.unavailable", lead=self.base, reason=why)
        return CrewUnavailable(f"crew tier unavailable: {why}", lead=self.base)


def _valid_hit(hit: Any) -> bool:
    if not isinstance(hit, dict):
        return False
    return all(isinstance(hit.get(k), t) and not isinstance(hit.get(k), bool) for k, t in _FIELDS.items())


def _highlights(hit: dict[str, Any]) -> list[list[int]]:
    """The hit's highlights if they are ``[start, end)`` pairs inside its snippet, else none."""
    spans = hit.get("highlights")
    size = len(hit["snippet"])
    if not isinstance(spans, list):
        return []
    ok = all(
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in span)
        and 0 <= span[0] < span[1] <= size
        for span in spans
    )
    return spans if ok else []


def _extras(hit: dict[str, Any]) -> dict[str, Any]:
    """The lead's ``section`` and ``flagged`` for a hit, each when it is well formed."""
    out: dict[str, Any] = {}
    section = hit.get("section")
    if isinstance(section, dict):
        start, end, cut = section.get("line_start"), section.get("line_end"), section.get("cut")
        if isinstance(start, int) and isinstance(end, int) and isinstance(cut, bool):
            out["section"] = {"line_start": start, "line_end": end, "cut": cut}
    flagged = hit.get("flagged")
    if isinstance(flagged, dict):
        fields = {k: flagged.get(k) for k in ("category", "pattern", "level", "heading", "line_start", "line_end")}
        if all(isinstance(fields[k], str) for k in ("category", "pattern", "level", "heading")) and all(
            isinstance(fields[k], int) for k in ("line_start", "line_end")
        ):
            out["flagged"] = fields
    return out


class StoreCrewProxy(CrewProxy):
    """A member whose crew tier is in a server store (``--crew-store postgres://...``): crew search
    and status come from the store directly, with no hop through the lead, ranked as the lead ranks
    its own crew index; raw FTS5 searches and the crew's memories still go to the lead."""

    def __init__(self, settings: Settings, store: PostgresCrewStore, hybrid: HybridSearcher | None = None) -> None:
        super().__init__(settings)
        self.store = store.reader()  # a member only reads the store: it never migrates its schema
        self.crew_id = settings.crew_id
        # The crew's knowledge graph, copied there by the lead: its reads answered here, and the
        # lift of crew hits the lead gives its own crew search.
        self.graph = KnowledgeGraph(PgKgStore(self.store))
        self.boost = KgBoost(self.graph, {"crew": Scope(settings.workspace_id, settings.crew_id)})
        self.fusion = settings.fusion
        # The member's hybrid searcher, for the query vector: a member searching a crew store
        # embeds its queries itself.
        self.hybrid = hybrid

    async def aclose(self) -> None:
        await super().aclose()
        await self.store.close()

    async def search(self, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]:
        if req.raw_fts:
            return await super().search(req)  # FTS5 syntax: only the lead's index speaks it
        qvec, model, degraded = None, None, []
        hybrid = self.hybrid
        if hybrid is not None and hybrid.embedder is not None:
            qvec = await hybrid._query_vector(req.query)
            model = hybrid.embedder.model_id
            if qvec is None:
                degraded = ["dense"]
        try:
            plan = await self.boost.plan("crew", req.query)
            hits = await self.store.search(
                req.query, req.limit, qvec=qvec, model=model, fusion=self.fusion, explain=req.explain, plan=plan
            )
        except StoreUnavailable as exc:
            raise self._store_unavailable(str(exc)) from None
        return hits, degraded

    async def kg(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        """The crew graph's reads from the store's copy of the lead's graph; its writes (add,
        invalidate) go to the lead, which puts them in the store before it answers."""
        if op not in GRAPH_READS:
            return await super().kg(op, body)
        try:
            return await crew_read(self.graph, self.crew_id, op, body)
        except StoreUnavailable as exc:
            raise self._store_unavailable(str(exc)) from None

    async def status(self) -> dict[str, Any]:
        try:
            return await self.store.status()
        except StoreUnavailable as exc:
            raise self._store_unavailable(str(exc)) from None

    async def wait_for_seq(self, seq: int, limit_s: float) -> bool:
        """Read-your-writes across hosts: wait until the store holds the lead's write ``seq``."""
        try:
            return await self.store.wait_for_seq(seq, limit_s)
        except StoreUnavailable as exc:
            raise self._store_unavailable(str(exc)) from None

    def _store_unavailable(self, why: str) -> CrewUnavailable:
        log.warning("crew.store_unavailable", reason=why)
        return CrewUnavailable.store_down()
