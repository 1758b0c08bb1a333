"""An append is read from where the file's last reading stopped: the graph's rules read only the
lines it added, and the graph then holds exactly what one reading of the whole file holds. Checked
on a real file (the repository's benign memory notes, 407 of them, appended one by one to one note:
headings, lists, tables, code fences), on a real ``kg.sqlite``, against a second graph that reads the
whole file once, and against one that reads the whole file again at every append (a sidecar without
the memory of its readings, as after a restart). Anything but an append (an edit, a last line run
on, a table running on into the new lines) is read whole; a real sidecar reads API appends so."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.ingest import Ingest
from sidecar.kg.model import Scope
from sidecar.kg.sqlite_kg import SqliteKgStore
from tests.support.corpus import benign_notes
from tests.support.kg import remember_file
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until

SCOPE = Scope("default")
MTIME = 1_780_000_000  # one fixed mtime: an undated fact starts at the file's mtime


def graph_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything the graph holds, by name (not by id)."""
    with sqlite3.connect(path) as db:
        return {
            "facts": db.execute(
                "SELECT s.name, f.predicate, o.name, f.valid_from, f.valid_to, f.confidence, f.source, f.room,"
                " f.text, i.source FROM kg_facts f JOIN kg_entities s ON s.id = f.subject_id"
                " JOIN kg_entities o ON o.id = f.object_id LEFT JOIN kg_facts i ON i.id = f.invalidated_by"
                " ORDER BY f.id"
            ).fetchall(),
            "entities": db.execute("SELECT key, name, type FROM kg_entities ORDER BY id").fetchall(),
            "aliases": sorted(
                db.execute(
                    "SELECT a.alias, e.key FROM kg_aliases a JOIN kg_entities e ON e.id = a.entity_id"
                ).fetchall()
            ),
            "file_facts": sorted(
                db.execute(
                    "SELECT ff.tier, ff.path, ff.line, f.source FROM kg_file_facts ff JOIN kg_facts f ON f.id = ff.fact_id"
                ).fetchall()
            ),
            "files": db.execute("SELECT tier, path, digest FROM kg_files ORDER BY path").fetchall(),
        }


class Reader:
    """A graph in its own ``kg.sqlite`` reading the tier ``root``; ``whole``: a new ``Ingest`` for
    every reading, which remembers no earlier one (so it reads the whole file)."""

    def __init__(self, store: SqliteKgStore, root: Path, whole: bool = False) -> None:
        self.store, self.root, self.whole = store, root, whole
        self.ingest = self._new()
        self.lines_read = 0

    def _new(self) -> Ingest:
        return Ingest(KnowledgeGraph(self.store), {"agent": self.root}, {"agent": SCOPE}, None)

    async def read(self, path: str) -> None:
        if self.whole:
            self.ingest = self._new()
        before = self.ingest.lines_read
        await self.ingest.changed("agent", path, 0, "updated")
        self.lines_read += self.ingest.lines_read - before


async def readers(tmp_path: Path, root: Path) -> tuple[Reader, Reader, Reader]:
    """(reads what was appended, reads the whole file at every change, reads only the end result)."""
    out = []
    for name, whole in (("appends", False), ("whole", True), ("once", False)):
        out.append(Reader(await SqliteKgStore.open(tmp_path / f"{name}.sqlite"), root, whole))
    return out[0], out[1], out[2]


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def trailing_table_rows(path: Path) -> int:
    """The table rows at the end of the file (none in a code fence here)."""
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = 0
    while rows < len(lines) and lines[-1 - rows].lstrip().startswith("|"):
        rows += 1
    return rows


@pytest.mark.slow  # ~8 s of CPU each: whole readings at each of 407 appends, the reference
@pytest.mark.parametrize("rel", ["daily/2026-03-02.md", "topics/notes.md"])
async def test_appends_are_read_alone_and_the_graph_is_a_whole_readings(tmp_path: Path, rel: str) -> None:
    """407 real notes appended one by one (as an API append adds them: after a newline): the rules
    read each line once, where reading the whole file again at each append reads ~200 times as many;
    the graph holds exactly what one reading of the final file holds, and what whole readings at
    every append hold. A daily note's facts start on its date, a topic's at the file's mtime (held
    fixed here, so that the three graphs can be compared)."""
    root = tmp_path / "memory"
    (root / rel).parent.mkdir(parents=True)
    notes = benign_notes()
    assert len(notes) >= 400
    file = root / rel
    appends, whole, once = await readers(tmp_path, root)
    try:
        table_rows = 0  # rows of a table the file ended in, read again with the lines after them
        for note in notes:
            table_rows += trailing_table_rows(file)
            with file.open("a", encoding="utf-8") as fh:
                fh.write(note)
            os.utime(file, (MTIME, MTIME))
            await appends.read(rel)
            await whole.read(rel)
        await once.read(rel)
        total = lines_of(file)
        assert table_rows > 0, "the notes end in tables too"
        assert appends.lines_read == total + table_rows, "each line read once, a table's rows again as it runs on"
        assert once.lines_read == total
        assert whole.lines_read > 150 * total
        expected = graph_rows(tmp_path / "once.sqlite")
        assert len(expected["facts"]) >= 40 and len(expected["file_facts"]) >= 40, "the notes state facts"
        assert graph_rows(tmp_path / "appends.sqlite") == expected
        # Whole readings at every append hold the same facts. Which of two facts one line's triple
        # matches can differ (a triple a rival ended at its own time, stated again further down: a
        # whole reading finds the later one for the earlier line too), so what each line is
        # recorded to state is compared by line.
        again = graph_rows(tmp_path / "whole.sqlite")
        assert {k: v for k, v in again.items() if k != "file_facts"} == {
            k: v for k, v in expected.items() if k != "file_facts"
        }
        assert {r[2] for r in again["file_facts"]} <= {r[2] for r in expected["file_facts"]}
    finally:
        for reader in (appends, whole, once):
            await reader.store.aclose()


NOTE = """# Platform

## Billing
Owner: Carol
The billing service uses PostgreSQL.

```
The cache service uses Memcached.
"""


@pytest.mark.parametrize(
    ("change", "reread"),
    [
        # The state at the end of the old lines holds for the new ones: inside a code fence (no
        # fact), under the "Billing" heading (its key: value lines), the note's date; a table the
        # old lines end in is read again from its first row (its old rows' facts not given again).
        ("append inside the fence", 0),
        ("append after the fence", 0),
        ("append an empty string", None),
        ("last line run on", "whole"),
        ("edit before the end", "whole"),
        ("table running on", 3),
        ("table after a table", 3),
        ("new table", 0),
    ],
)
async def test_what_is_not_an_append_is_read_whole(tmp_path: Path, change: str, reread: int | str | None) -> None:
    """Each change gives the graph what one whole reading of the file gives; only a true append
    (the old bytes unchanged at the start, the old last line not run on) is read from where the
    last reading stopped, anything else whole. ``reread``: the old lines read again (None: the
    bytes did not change, nothing is read)."""
    root = tmp_path / "memory"
    rel = "daily/2026-04-01.md"
    file = root / rel
    file.parent.mkdir(parents=True)
    first = NOTE
    if change == "last line run on":
        first = NOTE + "```\nBob owns the deploy"  # no newline at the end
    if change.startswith("table"):
        first = NOTE + "```\n\n| service | owner |\n|---|---|\n| search | Dana |\n"
    second = {
        "append inside the fence": first + "The queue service uses RabbitMQ.\n",
        "append after the fence": first + "```\nTier: gold\nThe queue service uses Kafka.\n",
        "append an empty string": first,
        "last line run on": first + " pipeline.\nErin owns the search cluster.\n",
        "edit before the end": first.replace("PostgreSQL", "CockroachDB") + "Tier: gold\n",
        "table running on": first + "| billing | Erin |\n",
        "table after a table": first + "\n| team | lead |\n|---|---|\n| infra | Frank |\n",
        "new table": NOTE + "```\n\n| service | owner |\n|---|---|\n| search | Dana |\n",
    }[change]
    appends, _, once = await readers(tmp_path, root)
    try:
        file.write_text(first, encoding="utf-8")
        os.utime(file, (MTIME, MTIME))
        await appends.read(rel)
        first_lines = appends.lines_read
        assert first_lines == lines_of(file)
        file.write_text(second, encoding="utf-8")
        os.utime(file, (MTIME, MTIME))
        await appends.read(rel)
        await once.read(rel)
        read = appends.lines_read - first_lines
        if reread is None:
            assert read == 0
        elif reread == "whole":
            assert read == lines_of(file)
        else:
            assert read == lines_of(file) - first.count("\n") + int(reread), read
        assert (
            graph_rows(tmp_path / "appends.sqlite")["file_facts"] == graph_rows(tmp_path / "once.sqlite")["file_facts"]
        )
        if reread != "whole":  # a whole reading after an edit leaves the facts only the old bytes stated
            assert graph_rows(tmp_path / "appends.sqlite") == graph_rows(tmp_path / "once.sqlite")
        facts = {(f[0], f[1], f[2]) for f in graph_rows(tmp_path / "appends.sqlite")["facts"]}
        assert ("cache service", "uses", "Memcached") not in facts, "a fenced line states nothing"
        if change == "append inside the fence":
            assert ("queue service", "uses", "RabbitMQ") not in facts
        if change == "append after the fence":
            assert {("Billing", "tier", "gold"), ("queue service", "uses", "Kafka")} <= facts
    finally:
        for reader in (appends, once):
            await reader.store.aclose()


async def test_a_sidecar_reads_api_appends_alone(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    """A real sidecar: after its first reading of a daily note, each API append costs the graph's
    rules the appended lines only, and the facts they state are in the graph."""
    client: TestClient[Any, Any] = await sidecar_client()
    ingest = client.server.app[SIDECAR].kg.ingest
    rel = "daily/2026-06-01.md"
    await remember_file(client, rel, "# 2026-06-01\n\n## Infra\nThe deploy pipeline runs on Kubernetes.\n")

    async def every_file_read() -> bool:  # the start-up backfill reads the dir's other files too
        files = {p.relative_to(memory_dir).as_posix() for p in memory_dir.rglob("*.md")}
        return set(await ingest.graph.store.files("agent")) >= files

    await async_wait_until(every_file_read, timeout=60, message="the graph to read every file once")
    read = ingest.lines_read
    await remember_file(client, rel, "Carol owns the billing service.")
    await remember_file(client, rel, "- Tier: gold\n- The search service uses OpenSearch.")
    assert ingest.lines_read - read == 3
    for entity, obj in (("billing service", "Carol"), ("Infra", "gold"), ("search service", "OpenSearch")):
        answer = await (await client.post("/kg/query", json={"entity": entity, "direction": "out"})).json()
        assert obj in [f["object"] for f in answer["facts"]], (entity, answer)
