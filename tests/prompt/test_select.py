"""One tier's selection: what it reports as left out for budget is only what the caller asked for
and did not get (a file read for one ranked chunk is not "left out" for its other chunks)."""

from __future__ import annotations

import bisect

from sidecar.index.chunker import chunk_markdown
from sidecar.prompt.select import MemoryFile, select
from sidecar.scanner.sections import split_sections

NOTE = "# Vendors\n\n## Billing\nBilling uses Stripe.\n\n## Email\nEmail goes through Postmark.\n\n## Search\nSearch runs on Algolia.\n"


def memory_file(rel: str, text: str) -> MemoryFile:
    chunks = tuple(chunk_markdown(text))
    sections = tuple(split_sections(text))
    starts = [s.line_start for s in sections]
    owner = tuple(bisect.bisect_right(starts, c.line_start) - 1 for c in chunks)
    return MemoryFile(f"agent/{rel}", rel, text, chunks, sections, owner)


def test_a_file_asked_for_one_chunk_leaves_nothing_out_when_that_chunk_fits() -> None:
    vendors = memory_file("topics/vendors.md", NOTE)
    assert len(vendors.chunks) >= 3
    part = select("agent", [vendors], [(0, 1)], 15_000)
    assert "Postmark" in part.text or "Stripe" in part.text
    assert part.omitted == []


def test_what_did_not_fit_is_left_out_and_counted() -> None:
    vendors = memory_file("topics/vendors.md", NOTE)
    every = [(0, ci) for ci in range(len(vendors.chunks))]
    whole = select("agent", [vendors], every, 15_000)
    assert whole.omitted == [] and "Algolia" in whole.text
    tight = select("agent", [vendors], every, len(whole.text) - 20)
    assert tight.omitted == [("agent/topics/vendors.md", 1)]
