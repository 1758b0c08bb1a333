"""Heading sections agree with the chunker: every chunk lies in one section with its heading path."""

from __future__ import annotations

import itertools

import pytest

from sidecar.index.chunker import chunk_markdown
from sidecar.scanner.sections import split_sections

DOCS = {
    "plain": "one line\n",
    "intro and headings": "Intro.\n\n# A\ntext\n\n## B\nmore\n\n### C\ndeep\n\n# D\nlast\n",
    "heading first": "# A\n\n\ntext after blanks\n",
    "fenced heading": "# A\n```\n# not a heading\n```\nafter fence\n## B\nx\n",
    "tilde fence": "# A\n~~~\n## still code\n~~~\n## B\ny\n",
    "unclosed fence": "# A\n```\n# code to the end\n",
    "crlf": "# A\r\nbody\r\n\r\n## B\r\nmore\r\n",
    "trailing hashes": "## Title ##\nbody\n",
    "empty headings": "# A\n# B\n# C\ntext\n",
    "long lines": "# A\n" + "word " * 600 + "\n\n## B\n" + "x" * 2500 + "\n",
    "unicode breaks": "# A\nline\u2028next\n## B\nz\n",
}


@pytest.mark.parametrize("name", list(DOCS))
def test_every_chunk_lies_in_the_section_with_its_heading(name: str) -> None:
    text = DOCS[name]
    sections = split_sections(text)
    assert sections[0].start == 0 and sections[-1].end == len(text)
    assert all(a.end == b.start and a.line_end + 1 == b.line_start for a, b in itertools.pairwise(sections))
    for chunk in chunk_markdown(text):
        owner = [s for s in sections if s.line_start <= chunk.line_start <= s.line_end]
        assert len(owner) == 1, (chunk, sections)
        assert owner[0].line_start <= chunk.line_end <= owner[0].line_end
        assert owner[0].heading == chunk.heading


def test_section_spans_cover_the_text_line_by_line() -> None:
    text = DOCS["intro and headings"]
    sections = split_sections(text)
    assert [(s.heading, s.line_start, s.line_end) for s in sections] == [
        ("", 1, 2),
        ("A", 3, 5),
        ("A > B", 6, 8),
        ("A > B > C", 9, 11),
        ("D", 12, 13),
    ]
    assert text[sections[1].start : sections[1].end] == "# A\ntext\n\n"
    assert split_sections("") == []
