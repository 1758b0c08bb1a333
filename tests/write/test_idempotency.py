"""Idempotent writes: ``Idempotency-Key`` makes a retried write land once. A real server, real files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.memory import ClientFactory

ENTRY = "- Deploys freeze on Fridays."


async def post_write(client: Any, key: str | None, **body: Any) -> tuple[int, dict[str, Any], bool]:
    """(status, body, replayed) of a write with ``key`` as its Idempotency-Key."""
    headers = {"Idempotency-Key": key} if key is not None else {}
    # force: the same entry appended under several keys is what these tests are about, not a duplicate
    payload = {"path": "AGENT.md", "content": ENTRY, "force": True, **body}
    resp = await client.post("/memory/write", json=payload, headers=headers)
    return resp.status, await resp.json(), resp.headers.get("Idempotent-Replayed") == "true"


async def test_a_retried_append_with_its_key_lands_once_and_gets_the_first_answer(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    status, first, replayed = await post_write(client, "write-1")
    assert status == 201 and not replayed
    for _ in range(3):
        status, again, replayed = await post_write(client, "write-1")
        assert status == 201 and replayed and again == first
    assert (memory_dir / "AGENT.md").read_text().count(ENTRY) == 1
    status, other, replayed = await post_write(client, "write-2")  # another key: another write
    assert status == 201 and not replayed and other["seq"] > first["seq"]
    status, _, _ = await post_write(client, None)  # no key: as ever
    assert (memory_dir / "AGENT.md").read_text().count(ENTRY) == 3


async def test_concurrent_retries_of_one_key_land_once(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    answers = await asyncio.gather(*(post_write(client, "burst") for _ in range(20)))
    assert {status for status, _, _ in answers} == {201}
    assert sum(not replayed for _, _, replayed in answers) == 1
    assert len({body["seq"] for _, body, _ in answers}) == 1
    assert (memory_dir / "AGENT.md").read_text().count(ENTRY) == 1


async def test_a_key_reused_for_another_write_is_409_and_nothing_is_written(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    assert (await post_write(client, "k"))[0] == 201
    before = (memory_dir / "AGENT.md").read_text()
    for change in ({"content": "- something else"}, {"path": "pins.md"}, {"mode": "replace"}):
        status, body, _ = await post_write(client, "k", **change)
        assert status == 409 and body["error"]["code"] == "idempotency_key_reused", change
    assert (memory_dir / "AGENT.md").read_text() == before and not (memory_dir / "pins.md").exists()


async def test_a_failed_write_leaves_no_trace_under_its_key(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client(evergreen_cap_bytes=100)
    big = {"content": "x" * 200}
    status, body, _ = await post_write(client, "k", **big)
    assert status == 413 and body["error"]["code"] == "cap_exceeded"
    status, body, replayed = await post_write(client, "k", **big)  # tried again, refused again
    assert status == 413 and not replayed


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there"])
async def test_a_malformed_key_is_400(sidecar_client: ClientFactory, memory_dir: Path, key: str) -> None:
    client = await sidecar_client()
    before = (memory_dir / "AGENT.md").read_text()
    resp = await client.post(
        "/memory/write", json={"path": "AGENT.md", "content": ENTRY}, headers={"Idempotency-Key": key}
    )
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_idempotency_key"
    assert (memory_dir / "AGENT.md").read_text() == before
