"""Scopes on real tiers: ``both`` shows identical text once (the agent's own copy), every scope
scores a hit alike, and an agent search that finds nothing can fall back to the crew tier."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.contract import SearchRequest
from sidecar.index.tier import Tier
from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.search import SearchService
from sidecar.retrieval.vectors import VectorIndex
from sidecar.settings import Settings
from tests.support.embedding import drain, needs_model
from tests.support.memory import ClientFactory, write
from tests.support.procs import free_port

TOKEN = "scopes-token"
AGENT = """# Conventions
Tailwind only, never inline styles.

## Deploys
Deploys go through make release after a green smoke test.
"""
CREW = """# Conventions
Tailwind only, never inline styles.

## Rollbacks
Rollbacks use the wombat runbook, kept beside the release notes.
"""


class Rig:
    """An agent tier and a crew tier (as a lead holds them), with the hybrid searcher when a model is given."""

    def __init__(self, root: Path, model: OnnxEmbedder | None) -> None:
        write(root / "agent", "AGENT.md", AGENT)
        write(root / "crew", "CREW.md", CREW)
        self.tiers = {"agent": Tier("agent", root / "agent"), "crew": Tier("crew", root / "crew")}
        self.model = model
        self.vectors: dict[str, VectorIndex] = {}
        self.service = SearchService(self.tiers["agent"], crew_tier=self.tiers["crew"])

    async def open(self) -> None:
        for tier in self.tiers.values():
            await tier.open()
        if self.model is None:
            return
        health = EmbedderHealth(self.model, confirmed=True)
        for name, tier in self.tiers.items():
            self.vectors[name] = VectorIndex(tier.index.path, self.model.model_id, self.model.dim)
            await drain(EmbedBatcher(self.model, health, {name: tier}, {name: self.vectors[name]}), self.vectors[name])
        self.service.hybrid = HybridSearcher(self.model, health, self.vectors, query_timeout=30.0)

    async def close(self) -> None:
        for index in self.vectors.values():
            index.close()
        for tier in self.tiers.values():
            await tier.close()

    async def search(self, query: str, scope: str, fallback: bool = False) -> dict[str, Any]:
        return await self.service.search(SearchRequest.from_json({"query": query, "scope": scope}), fallback=fallback)


@pytest.fixture(params=["bm25", pytest.param("hybrid", marks=needs_model)])
async def rig(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Rig]:
    model = request.getfixturevalue("model") if request.param == "hybrid" else None
    built = Rig(tmp_path, model)
    await built.open()
    yield built
    await built.close()


def where(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(hit["source"], hit["path"]) for hit in answer["results"]]


async def test_both_shows_identical_text_once_and_the_agents_copy_wins(rig: Rig) -> None:
    both = await rig.search("tailwind inline styles", "both")
    assert where(both)[0] == ("agent", "AGENT.md")
    assert ("crew", "CREW.md") not in [(h["source"], h["path"]) for h in both["results"] if "Tailwind" in h["snippet"]]
    assert sum("Tailwind only" in h["snippet"] for h in both["results"]) == 1
    assert where(await rig.search("tailwind inline styles", "crew"))[0] == ("crew", "CREW.md"), "the crew keeps its own"


async def test_a_hit_scores_the_same_in_every_scope(rig: Rig) -> None:
    for query in ("wombat runbook release", "release smoke test"):
        both = {
            (h["source"], h["path"], h["line_start"]): h["score"] for h in (await rig.search(query, "both"))["results"]
        }
        alone = {
            (h["source"], h["path"], h["line_start"]): h["score"]
            for scope in ("agent", "crew")
            for h in (await rig.search(query, scope))["results"]
        }
        assert both and all(alone[key] == score for key, score in both.items()), (query, both, alone)
        assert list(both.values()) == sorted(both.values(), reverse=True)


async def test_an_agent_search_that_finds_nothing_falls_back_to_the_crew_tier(rig: Rig) -> None:
    assert (await rig.search("wombat runbook", "agent"))["results"] == []
    answer = await rig.search("wombat runbook", "agent", fallback=True)
    assert where(answer) == [("crew", "CREW.md")] and answer["fell_back"] == "crew" and answer["scope"] == "agent"
    found = await rig.search("release smoke test", "agent", fallback=True)
    assert found["results"] and "fell_back" not in found, "the agent's own hits never fall back"
    nothing = await rig.search("qwxzyv flurbinate zazzle", "agent", fallback=True)
    assert nothing["results"] == [] and "fell_back" not in nothing


def test_the_fallback_is_on_by_default() -> None:
    assert Settings().crew_fallback is True


async def test_a_members_search_falls_back_to_the_leads_crew_tier(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    write(tmp_path / "crew", "CREW.md", CREW)
    for name in ("on", "off"):
        write(tmp_path / name, "AGENT.md", "# Member\nI review pull requests for the billing service.\n")
    port = free_port()
    await sidecar_client(role="lead", crew_listen=f"127.0.0.1:{port}", crew_token=TOKEN)
    member = dict(role="member", lead_url=f"http://127.0.0.1:{port}", crew_token=TOKEN)
    on = await sidecar_client(**member, memory_dir=tmp_path / "on")
    off = await sidecar_client(**member, memory_dir=tmp_path / "off", crew_fallback="false")
    for client, fell_back in ((on, True), (off, False)):
        body = await (await client.post("/memory/search", json={"query": "wombat runbook"})).json()
        assert body["scope"] == "agent" and ("fell_back" in body) is fell_back, body
        assert [(h["source"], h["path"]) for h in body["results"]] == ([("crew", "CREW.md")] if fell_back else [])
    own = await (await on.post("/memory/search", json={"query": "billing pull requests"})).json()
    assert [h["source"] for h in own["results"]] == ["agent"] and "fell_back" not in own
