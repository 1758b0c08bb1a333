"""A memory file gone from the tier however it went, in a real sidecar with its watcher running: a
delete in a shell ends the facts read from it (at the time the removal is seen), so does a delete
while the sidecar was down (seen at the next start); a fact another file states too stays, read
from that one; a move keeps them current, read from the new place: a ``mv`` in the tier,
consolidation's move of daily notes into ``archive/daily/``, and the compression of an archived
note."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.clock import utcnow
from sidecar.consolidate.periods import ARCHIVE_DIR, archive_rel, claimed_rel
from sidecar.kg import ingest
from sidecar.kg.model import now_iso
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until

Client = TestClient[Any, Any]
VENDORS = "## Vendors\nThe billing service currently uses Stripe.\n"


async def _facts(client: Client, entity: str) -> list[dict[str, Any]]:
    resp = await client.post("/kg/query", json={"entity": entity, "include_invalid": True})
    if resp.status == 404:  # the entity is not known yet
        return []
    answer = await resp.json()
    assert resp.status == 200, answer
    facts: list[dict[str, Any]] = answer["facts"]
    return facts


async def _current(client: Client, entity: str) -> list[tuple[str, str]]:
    """(object, source) of the entity's current facts."""
    return [(f["object"], f["source"]) for f in await _facts(client, entity) if f["current"]]


async def _read_into_graph(client: Client, entity: str, source: str) -> None:
    async def there() -> bool:
        return any(s.startswith(source) for _, s in await _current(client, entity))

    await async_wait_until(there, timeout=60, message=f"{entity!r} read into the graph from {source}")


async def test_a_shell_delete_ends_the_facts_at_the_time_it_is_seen(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    write(memory_dir, "topics/vendors.md", VENDORS)
    client = await sidecar_client(watch=True)
    await _read_into_graph(client, "billing service", "file:agent:topics/vendors.md#")
    before = now_iso()
    os.remove(memory_dir / "topics/vendors.md")

    async def ended() -> list[dict[str, Any]]:
        return [f for f in await _facts(client, "billing service") if not f["current"]]

    gone = await async_wait_until(ended, timeout=60)
    after = now_iso()
    assert [(f["object"], f["source"]) for f in gone] == [("Stripe", "file:agent:topics/vendors.md#2")]
    assert before <= gone[0]["valid_to"] <= after
    assert await _current(client, "billing service") == []
    block = await (await client.post("/memory/block", json={"query": "billing service", "layers": ["L3"]})).json()
    assert "Stripe" not in block["text"]
    # Written again in the shell, the file states it again.
    write(memory_dir, "topics/vendors.md", VENDORS)
    await _read_into_graph(client, "billing service", "file:agent:topics/vendors.md#")


async def test_a_shell_move_keeps_the_facts_read_from_the_new_path(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    write(memory_dir, "topics/vendors.md", VENDORS)
    client = await sidecar_client(watch=True)
    await _read_into_graph(client, "billing service", "file:agent:topics/vendors.md#")
    (memory_dir / "vendors").mkdir()
    os.rename(memory_dir / "topics/vendors.md", memory_dir / "vendors/billing.md")
    await _read_into_graph(client, "billing service", "file:agent:vendors/billing.md#2")
    assert [(f["object"], f["current"]) for f in await _facts(client, "billing service")] == [("Stripe", True)]
    # Deleted from its new place, it ends.
    os.remove(memory_dir / "vendors/billing.md")

    async def ended() -> bool:
        return await _current(client, "billing service") == []

    await async_wait_until(ended, timeout=60)
    # The same bytes back soon after under another name (a move the watcher saw as a removal, then
    # a new file): the same fact is current again, read from there, as if it had never ended.
    (fact,) = await _facts(client, "billing service")
    write(memory_dir, "topics/billing.md", VENDORS)
    await _read_into_graph(client, "billing service", "file:agent:topics/billing.md#2")
    (again,) = await _facts(client, "billing service")
    assert again["id"] == fact["id"] and again["valid_to"] is None and again["current"]


async def test_a_delete_while_the_sidecar_was_down_is_seen_at_the_next_start(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    write(memory_dir, "topics/vendors.md", VENDORS)
    write(memory_dir, "topics/search.md", "## Search\nThe search service uses Meilisearch.\n")
    first: Client = await aiohttp_client(create_app(make_settings()))
    await _read_into_graph(first, "billing service", "file:agent:topics/vendors.md#")
    await _read_into_graph(first, "search service", "file:agent:topics/search.md#")
    await first.close()
    os.remove(memory_dir / "topics/vendors.md")
    (memory_dir / "archive").mkdir()
    os.rename(memory_dir / "topics", memory_dir / "archive/topics")  # moved, not deleted
    second: Client = await aiohttp_client(create_app(make_settings()))

    async def ended() -> bool:
        return await _current(second, "billing service") == []

    await async_wait_until(ended, timeout=60)
    assert await _current(second, "search service") == [("Meilisearch", "file:agent:archive/topics/search.md#2")]


def _old_week(root: Path) -> list[str]:
    """Three daily notes of a week five weeks ago, each stating one fact of its own."""
    monday = utcnow().date() - timedelta(days=35 + utcnow().date().weekday())
    names = []
    for n, (service, vendor) in enumerate([("billing", "Stripe"), ("search", "Meilisearch"), ("mail", "Postmark")]):
        name = f"daily/{(monday + timedelta(days=n)).isoformat()}.md"
        write(root, name, f"## Ops\n- Rotated log shard {n} by hand.\n- The {service} service uses {vendor}.\n")
        names.append(name)
    return names


async def test_consolidation_moving_notes_to_the_archive_ends_no_fact(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    names = _old_week(memory_dir)
    client = await sidecar_client(watch=True)
    for name, entity in zip(names, ("billing service", "search service", "mail service"), strict=True):
        await _read_into_graph(client, entity, f"file:agent:{name}#")
    resp = await client.post("/memory/consolidate", json={})
    assert resp.status == 200, await resp.text()
    assert not any((memory_dir / name).exists() for name in names)
    for name, entity, vendor in zip(
        names, ("billing service", "search service", "mail service"), ("Stripe", "Meilisearch", "Postmark"), strict=True
    ):
        # The removal of the daily note has been seen once no current fact is read from it. Its facts
        # stay current, read from another file that states them: the archive's copy, or the week's
        # summary where the graph read that first (the copy's reading lingers a second, and on a busy
        # host the summary's may be done by the time the removal is seen).
        async def moved_off(name: str = name, entity: str = entity) -> bool:
            current = await _current(client, entity)
            return bool(current) and not any(s.startswith(f"file:agent:{name}#") for _, s in current)

        await async_wait_until(moved_off, timeout=60, message=f"{entity!r} read from elsewhere than {name}")
        facts = await _facts(client, entity)  # the week's summary may state it too (from its own date)
        assert {f["object"] for f in facts} == {vendor} and all(f["current"] for f in facts), facts
    # The week's summary states the billing fact too: deleting the archived note in a shell leaves
    # it current, read from the summary; deleting the summary as well ends it.
    summaries = [p for p in (memory_dir / "daily/summaries").iterdir() if "Stripe" in p.read_text()]
    assert len(summaries) == 1
    summary = summaries[0].relative_to(memory_dir).as_posix()
    os.remove(memory_dir / "archive" / names[0])
    await _read_into_graph(client, "billing service", f"file:agent:{summary}#")
    os.remove(memory_dir / summary)

    async def ended() -> bool:
        return await _current(client, "billing service") == []

    await async_wait_until(ended, timeout=60)
    assert ("Meilisearch", f"file:agent:archive/{names[1]}#3") in await _current(client, "search service")


async def test_a_compressed_archived_note_keeps_its_facts(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    name = "archive/daily/2026-01-05.md"
    write(memory_dir, name, VENDORS)
    client = await sidecar_client(watch=True)
    await _read_into_graph(client, "billing service", f"file:agent:{name}#")
    (memory_dir / (name + ".gz")).write_bytes(gzip.compress(VENDORS.encode(), mtime=0))
    os.remove(memory_dir / name)
    await _read_into_graph(client, "billing service", f"file:agent:{name}.gz#2")
    assert [f["current"] for f in await _facts(client, "billing service")] == [True]


async def test_a_delete_through_the_api_counts_the_facts_it_ended(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    """The route's count holds whether the reindex queue sees the removal before the route asks."""
    for n in range(5):
        write(memory_dir, f"topics/v{n}.md", f"## Vendors\nThe service{n} uses Vendor{n}.\n")
    client = await sidecar_client(watch=True)
    for n in range(5):
        await _read_into_graph(client, f"service{n}", f"file:agent:topics/v{n}.md#")
        resp = await client.post("/memory/delete", json={"path": f"topics/v{n}.md"})
        assert resp.status == 200 and (await resp.json())["facts_ended"] == 1
        assert await _current(client, f"service{n}") == []
    stats = await (await client.get("/kg/stats")).json()
    assert stats["invalidated"] == 5, stats  # the five ended, nothing else


def test_the_archive_places_are_consolidations() -> None:
    """Where the graph looks for a moved daily note is where consolidation moves it."""
    assert archive_rel("daily/2026-01-05.md") == ingest.ARCHIVE_ROOT + "daily/2026-01-05.md"
    assert ARCHIVE_DIR == ingest.ARCHIVE_ROOT + "daily"
    assert claimed_rel("daily/2026-01-05.md") == ingest.CLAIMED_DIR + "2026-01-05.md"
