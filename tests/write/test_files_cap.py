"""The cap on the number of files in a tier (1,500 empty files were once accepted, each one
indexed, watched and scanned from then on). A real server, real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.http.state import SIDECAR
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until as wait_until_async


async def post_write(client: Any, path: str, content: str = "") -> tuple[int, dict[str, Any]]:
    resp = await client.post("/memory/write", json={"path": path, "content": content})
    return resp.status, await resp.json()


async def test_a_new_file_past_the_files_cap_is_413_and_the_old_ones_still_take_writes(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client(tier_max_files=5)  # the tier holds AGENT.md and one daily file
    for i in range(3):
        assert (await post_write(client, f"topics/t{i}.md"))[0] == 201
    status, body = await post_write(client, "topics/one-too-many.md", "- x")
    assert status == 413, body
    error = body["error"]
    assert error["code"] == "cap_exceeded" and error["cap_scope"] == "files"
    assert error["usage"]["text"] == "5 of 5 files, 100%" and error["would_be"] == 6
    assert not (memory_dir / "topics" / "one-too-many.md").exists()
    assert (await post_write(client, "topics/t0.md", "- more"))[0] == 201  # an existing file: fine
    assert (await post_write(client, "AGENT.md", "- more"))[0] == 201


async def test_files_made_outside_the_sidecar_count_too(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    for i in range(3):
        write(memory_dir, f"topics/shell{i}.md", "")
    client = await sidecar_client(tier_max_files=5)
    status, body = await post_write(client, "topics/new.md", "- x")
    assert status == 413 and body["error"]["cap_scope"] == "files"
    assert (await post_write(client, "topics/shell1.md", "- x"))[0] == 201


async def test_the_tier_is_scanned_again_beside_the_writes(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: Any
) -> None:
    """Writes check the caps against the usage scanned at start and kept by each write. Once it is
    stale (here: at once; and no sooner than 50 times the last scan's length after it, for a large
    tier) a write starts a rescan on a thread of its own and goes on with the usage it has: files
    made in the shell meanwhile count once that rescan is in. The write that starts the rescan is one refused, so that no
    file is replaced while the rescan walks: a walk beside a rename may miss the renamed file
    (on a tmpfs it does), and the service counts such a write again only at the next scan."""
    from sidecar.write import service

    for i in range(2000):  # a tier whose scan takes measurable time
        write(memory_dir, f"topics/bulk/b{i:04d}.md", "")
    client = await sidecar_client(tier_max_files=2004)  # AGENT.md, a daily file and 2,000 more
    monkeypatch.setattr(service, "USAGE_TTL_S", 0.0)
    monkeypatch.setattr(service, "USAGE_SCAN_SHARE", 10**6)  # "much later" here: not within the test
    assert (await post_write(client, "topics/first.md", "- x"))[0] == 201  # 2,003 files, as scanned
    write(memory_dir, "topics/shell.md", "")  # now 2,004: a further new file is over the cap
    assert (await post_write(client, "topics/second.md", "- x"))[0] == 201  # the shell file not seen yet
    assert (await post_write(client, "topics/bulk/b0000.md", "- x"))[0] == 201  # an existing file, at the cap
    monkeypatch.setattr(service, "USAGE_SCAN_SHARE", 0)  # stale now: the next write starts a rescan
    status, body = await post_write(client, "topics/third.md", "- x")  # answered from the usage it has
    assert status == 413 and body["error"]["usage"]["text"].startswith("2004 of 2004 files"), body
    writes = client.server.app[SIDECAR].writes
    await wait_until_async(lambda: not writes._scanning)
    status, body = await post_write(client, "topics/fourth.md", "- x")
    assert status == 413 and body["error"]["usage"]["text"].startswith("2005 of 2004 files"), body


async def test_a_change_seen_from_outside_has_the_next_write_count_the_tier_again(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: Any
) -> None:
    """The counted usage goes stale when the file watcher reports a change this sidecar did not
    make, not on a clock: a file made in the shell counts once the watcher has seen it and a write
    has rescanned the tier. Until then writes count with the usage they keep. (A rescan also waits
    50 times the last one's length after it, for a large tier: not here.)"""
    from sidecar.write import service

    monkeypatch.setattr(service, "USAGE_SCAN_SHARE", 0)
    client = await sidecar_client(tier_max_files=3, watch="true")  # AGENT.md, a daily file and one more
    writes = client.server.app[SIDECAR].writes
    assert (await post_write(client, "topics/a.md", "- x"))[0] == 201  # 3 of 3
    assert (await post_write(client, "topics/a.md", "- y"))[0] == 201  # no rescan: nothing changed outside
    assert not writes._scanning and not writes._outside
    write(memory_dir, "topics/shell.md", "- made in a shell")  # 4 files now
    await wait_until_async(lambda: bool(writes._outside))  # the watcher saw it
    status, body = await post_write(client, "topics/b.md", "- x")  # refused from the usage it had; rescans
    assert status == 413 and body["error"]["usage"]["text"].startswith("3 of 3 files"), body
    await wait_until_async(lambda: not writes._scanning)
    status, body = await post_write(client, "topics/c.md", "- x")
    assert status == 413 and body["error"]["usage"]["text"].startswith("4 of 3 files"), body
