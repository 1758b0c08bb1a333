"""Near-duplicate typed memories merged by a consolidation, on a real sidecar app over a real
journal file: one memory kept per cluster (the most important), the rest superseded by it and
never recalled again, its access counts summed; other types, other namespaces, topic-keyed
memories and memories that differ in a number are left alone; a dry run only reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.clock import utcnow
from sidecar.http.state import SIDECAR
from sidecar.server.app import create_app
from sidecar.settings import Settings

Client = TestClient[Any, Any]


async def post(client: Client, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    resp = await client.post(path, json=body)
    answer: dict[str, Any] = await resp.json()
    assert resp.status == status, answer
    return answer


async def remember(client: Client, content: str, **fields: Any) -> str:
    answer = await post(client, "/memory/remember", {"content": content, "memory_type": "fact", **fields}, 201)
    entry_id: str = answer["id"]
    return entry_id


@pytest.mark.slow
async def test_near_duplicates_are_merged_into_the_most_important(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client: Client = await aiohttp_client(create_app(make_settings()))
    low = await remember(client, "Deploys go through make ship on the bastion host", priority=3)
    high = await remember(client, "deploys go through `make ship` on the bastion host.", priority=9)
    again = await remember(client, "Deploys go through make ship on the bastion host!", priority=5)
    other_type = await remember(client, "Deploys go through make ship on the bastion host", memory_type="workflow")
    other_ns = await remember(client, "Deploys go through make ship on the bastion host", namespace="ops")
    keyed = await remember(client, "Deploys go through make ship on the bastion host", topic_key="deploys")
    port_a = await remember(client, "The billing service listens on port 8080")
    port_b = await remember(client, "The billing service listens on port 8081")
    journal = client.server.app[SIDECAR].journal
    await journal.mark_referenced("default", [low, low, again], utcnow())

    dry = await post(client, "/memory/consolidate", {"dry_run": True})
    assert [(m["kept"], sorted(m["merged"])) for m in dry["memories_merged"]] == [(high, sorted([low, again]))]
    assert (await journal.get("default", low)).status == "live"  # type: ignore[union-attr]

    done = await post(client, "/memory/consolidate", {})
    assert [(m["kept"], sorted(m["merged"])) for m in done["memories_merged"]] == [(high, sorted([low, again]))]
    for merged in (low, again):
        entry = await journal.get("default", merged)
        assert entry is not None and (entry.status, entry.superseded_by) == ("superseded", high)
    kept = await journal.get("default", high)
    assert kept is not None and kept.status == "live" and kept.access_count >= 2
    for untouched in (other_type, other_ns, keyed, port_a, port_b):
        entry = await journal.get("default", untouched)
        assert entry is not None and entry.status == "live"

    hits = (await post(client, "/memory/recall", {"query": "make ship bastion", "namespace": "default"}))["hits"]
    ids = [hit["id"] for hit in hits]
    assert high in ids and low not in ids and again not in ids
    assert (await post(client, "/memory/consolidate", {}))["memories_merged"] == []
