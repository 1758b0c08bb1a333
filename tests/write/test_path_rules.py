"""What a tier path may be, and the index, the writes and the reads agreeing on it.

Over a real aiohttp server and real files: depth and length caps (2,100 nested directories were
once written, past PATH_MAX and past the tier's byte cap, invisible to status and search), names
that pass for other names, and symlinks inside the tier.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.files import MAX_DIR_DEPTH, MAX_PATH_BYTES, scan_tier
from tests.support.memory import ClientFactory, memory_tree, write


async def post_write(client: Any, path: str, content: str = "planted", **extra: Any) -> tuple[int, dict[str, Any]]:
    resp = await client.post("/memory/write", json={"path": path, "content": content, **extra})
    return resp.status, await resp.json()


async def read(client: Any, path: str) -> tuple[int, dict[str, Any]]:
    resp = await client.get("/memory/read", params={"path": path})
    return resp.status, await resp.json()


async def search_paths(client: Any, query: str) -> list[str]:
    resp = await client.post("/memory/search", json={"query": query, "limit": 50})
    assert resp.status == 200
    return sorted(hit["path"] for hit in (await resp.json())["results"])


def tree(root: Path) -> list[str]:
    return memory_tree(root)


def make_chain(root: Path, depth: int, name: str = "d") -> None:
    """``name/name/.../name/deep.md``, ``depth`` directories deep, made with directory fds so it
    can go past PATH_MAX as a shell loop of ``mkdir d; cd d`` can."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        file_fd = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
        os.write(file_fd, b"# Deep\nabyssal note\n")
        os.close(file_fd)
    finally:
        os.close(fd)


def remove_chain(root: Path, name: str = "d") -> None:
    """Remove a ``make_chain`` tree too deep for ``shutil.rmtree``: lift its one subdirectory up
    a level at a time, emptying and removing the level above."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        current = name
        while True:
            level = os.open(current, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            try:
                below = None
                for entry in os.listdir(level):
                    if entry == name:
                        below = f"{current}~" if not current.endswith("~") else current[:-1]
                        os.rename(entry, below, src_dir_fd=level, dst_dir_fd=fd)
                    else:
                        os.unlink(entry, dir_fd=level)
            finally:
                os.close(level)
            os.rmdir(current, dir_fd=fd)
            if below is None:
                return
            current = below
    finally:
        os.close(fd)


# -- depth and length ---------------------------------------------------------------------------
async def test_2100_nested_directories_are_refused_and_nothing_is_written(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client(tier_cap_bytes=3000)
    before = tree(memory_dir)
    status, body = await post_write(client, "/".join(["d"] * 2100) + "/x.md", "deep " * 500)
    assert status == 400 and body["error"]["code"] == "invalid_path", body
    assert tree(memory_dir) == before


async def test_depth_and_length_caps_at_their_boundaries(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    deepest = "/".join(["d"] * MAX_DIR_DEPTH) + "/x.md"
    assert (await post_write(client, deepest))[0] == 201
    status, body = await post_write(client, "d/" + deepest)
    assert status == 400 and body["error"]["code"] == "invalid_path" and "deep" in body["error"]["message"]
    longest = "/".join(["n" * 100] * 4) + "/" + "x" * (MAX_PATH_BYTES - 404 - 3) + ".md"
    assert len(longest.encode()) == MAX_PATH_BYTES
    assert (await post_write(client, longest))[0] == 201
    status, body = await post_write(client, longest[:-3] + "y.md")
    assert status == 400 and body["error"]["code"] == "invalid_path" and "bytes" in body["error"]["message"]
    status, _ = await read(client, longest[:-3] + "y.md")
    assert status == 400


async def test_a_tree_too_deep_is_skipped_by_the_index_and_named_in_the_status(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    """A shell made 2,100 nested directories (past PATH_MAX): the index does not take them, and
    says so; a file within the caps in the same tier is indexed as ever."""
    make_chain(memory_dir, 2100)
    write(memory_dir, "topics/shallow.md", "# Shallow\nabyssal note near the top\n")
    try:
        client = await sidecar_client()
        resp = await client.get("/memory/status")
        status = await resp.json()
        skipped = status["skipped"]
        too_deep = "/".join(["d"] * (MAX_DIR_DEPTH + 1))
        assert skipped["count"] == 1 and skipped["first"][0]["path"] == too_deep, skipped
        assert "deeper than" in skipped["first"][0]["reason"]
        assert await search_paths(client, "abyssal") == ["topics/shallow.md"]
        assert (await client.post("/memory/reindex")).status == 200
        assert (await (await client.get("/memory/status")).json())["skipped"]["count"] == 1
    finally:
        remove_chain(memory_dir)
    assert not (memory_dir / "d").exists()


def test_scan_tier_names_every_directory_it_does_not_walk(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "ok/a.md", "a")
    write(root, "ｆull/b.md", "b")  # a directory name that passes for another
    write(root, "topics/ c.md", "c")
    write(root, ".hidden/d.md", "d")  # hidden on purpose: left out silently, as temp files are
    (root / "linked").symlink_to(root / "ok", target_is_directory=True)
    found = scan_tier(root)
    assert sorted(found) == ["ok/a.md"]
    assert sorted(s.rel for s in found.skipped) == ["linked", "topics/ c.md", "ｆull"]


# -- names that pass for other names ------------------------------------------------------------
LOOKALIKES = [
    "topics/\uff41gent.md",  # fullwidth a
    "topics/\u200bnotes.md",  # zero-width space at the start
    "topics/no\u200btes.md",  # zero-width space inside
    "topics/\u0301notes.md",  # combining acute at the start
    "topics/cafe\u0301.md",  # decomposed é: not NFKC
    "topics/\u202eevil.md",  # right-to-left override
    "topics/\ufeffbom.md",  # byte order mark
    " notes.md",
    "notes .md",
    "topics /notes.md",
    "topics/notes.md ",
    "\u2024\u2024/x.md",  # one dot leaders, which fold into ".."
    "topics/\u00a0notes.md",  # no-break space at the start
    "topics/x\u0085.md",  # a C1 control character
]


@pytest.mark.parametrize("path", LOOKALIKES, ids=repr)
async def test_names_that_pass_for_other_names_are_refused(
    sidecar_client: ClientFactory, memory_dir: Path, path: str
) -> None:
    client = await sidecar_client()
    before = tree(memory_dir)
    status, body = await post_write(client, path)
    assert status == 400 and body["error"]["code"] == "invalid_path", body
    assert tree(memory_dir) == before
    assert (await read(client, path))[0] == 400


@pytest.mark.parametrize(
    "path", ["topics/café.md", "topics/数据库 迁移.md", "topics/\u0430gent.md", "topics/नमस्ते.md", "topics/a-b_c.d.md"]
)
async def test_names_in_their_own_form_are_written_read_and_found(
    sidecar_client: ClientFactory, memory_dir: Path, path: str
) -> None:
    """Another script's letters are their own NFKC form: a name, not a disguise."""
    client = await sidecar_client()
    status, body = await post_write(client, path, "# Note\nplatypus", mode="replace")
    assert status == 201, body
    assert (await read(client, path))[1]["content"] == "# Note\nplatypus"
    assert (memory_dir / path).read_text() == "# Note\nplatypus"
    written = await post_write(client, "AGENT.md", "- sync")
    await client.post("/memory/search", json={"query": "platypus", "after_seq": written[1]["seq"]})
    assert await search_paths(client, "platypus") == [path]


async def test_a_lookalike_name_made_by_a_shell_is_neither_indexed_nor_read(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    write(memory_dir, "topics/\uff41gent.md", "# Fake\nwombat impostor\n")
    write(memory_dir, "topics/agent.md", "# Real\nwombat original\n")
    client = await sidecar_client()
    assert await search_paths(client, "wombat") == ["topics/agent.md"]
    assert (await read(client, "topics/\uff41gent.md"))[0] == 400
    status = await (await client.get("/memory/status")).json()
    assert [s["path"] for s in status["skipped"]["first"]] == ["topics/\uff41gent.md"]


# -- symlinks inside the tier -------------------------------------------------------------------
async def test_the_index_and_read_agree_on_every_kind_of_link(
    sidecar_client: ClientFactory, memory_dir: Path, tmp_path: Path
) -> None:
    write(memory_dir, "topics/real.md", "# Real\nnarwhal inside\n")
    outside = write(tmp_path / "outside", "secret.md", "# Secret\nnarwhal outside\n")
    (memory_dir / "alias.md").symlink_to(memory_dir / "topics" / "real.md")  # in, to a tier file
    (memory_dir / "relative.md").symlink_to("topics/real.md")
    (memory_dir / "out.md").symlink_to(outside)  # out of the tier
    (memory_dir / "db.md").symlink_to(memory_dir / "index.sqlite")  # in, to a file that is not memory
    (memory_dir / "dangling.md").symlink_to(memory_dir / "nowhere.md")
    (memory_dir / "linkdir").symlink_to(memory_dir / "topics", target_is_directory=True)
    client = await sidecar_client()
    linked = ["alias.md", "relative.md", "topics/real.md"]
    found = await search_paths(client, "narwhal")
    assert len(found) == 1 and found[0] in linked, found  # an answer shows a text once
    held = await (await client.get("/memory/status")).json()
    others = sorted(p.relative_to(memory_dir).as_posix() for p in memory_dir.rglob("*.md") if not p.is_symlink())
    others = [p for p in others if p not in linked and not p.startswith("linkdir/")]
    assert held["files"] == len(linked) + len(others), (held, others)  # the file and its two links in the tier
    for path in linked:
        status, body = await read(client, path)
        assert status == 200 and "narwhal inside" in body["content"], (path, body)
    for path, code in [("out.md", 403), ("db.md", 403), ("linkdir/real.md", 403), ("dangling.md", 403)]:
        status, body = await read(client, path)
        assert status == code and body["error"]["code"] == "unsafe_path", (path, body)
    status, body = await post_write(client, "alias.md", "- through the link")
    assert status == 403 and body["error"]["code"] == "unsafe_path"  # writes never go through a link
    assert (memory_dir / "alias.md").is_symlink()
