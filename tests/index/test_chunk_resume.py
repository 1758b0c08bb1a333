"""Chunking a text that grew at its end again from where ``chunk_lines`` says it can (inside the last
section, at one of its chunks, when the greedy packing starts afresh there whatever the text grows
by) gives exactly the chunks of the whole text: over random texts grown one piece at a time, with
paragraphs at and around the chunk limit, bullets without blank lines, long lines, fences and
headings."""

from __future__ import annotations

import random

import pytest

from sidecar.index.chunker import MAX_CHUNK_CHARS, Chunk, Resume, chunk_lines, chunk_markdown


def _piece(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:  # a bullet, no blank line: one long paragraph grows
        return f"- {'word ' * rng.randint(1, 40)}item {rng.randint(0, 999)}\n"
    if kind < 0.55:  # a paragraph of its own
        return "\n" + "text " * rng.randint(1, 250) + "\n"
    if kind < 0.65:  # a paragraph sized at the limit, give or take
        size = MAX_CHUNK_CHARS + rng.randint(-3, 3)
        return "\n" + ("y" * (size - 1)) + ".\n"
    if kind < 0.72:  # a line longer than a chunk
        return "z" * rng.randint(MAX_CHUNK_CHARS - 2, 2 * MAX_CHUNK_CHARS + 5) + "\n"
    if kind < 0.78:
        return "\n"
    if kind < 0.84:  # a fenced block
        return "```\n" + "# not a heading\ncode\n" * rng.randint(1, 30) + "```\n"
    if kind < 0.88:
        return f"{'#' * rng.randint(1, 3)} Heading {rng.randint(0, 99)}\n"
    if kind < 0.94:  # a piece of a line, no newline: the next piece goes on with the line
        return "half " * rng.randint(1, 60)
    return "".join(f"line {i}\n" for i in range(rng.randint(2, 40)))


def _grown(rng: random.Random, steps: int) -> list[str]:
    text, out = "# Day\n\n## Log\n", []
    for _ in range(steps):
        text += _piece(rng)
        out.append(text)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_a_grown_text_chunked_from_its_resume_point_is_chunked_as_a_whole(seed: int) -> None:
    held: list[Chunk] = []  # the chunks as an index holds them, each chunking laid over the last
    resume: Resume | None = None
    for text in _grown(random.Random(seed), 120):
        start = resume.chunks if resume is not None else 0
        fresh, resume = chunk_lines(text.splitlines(), resume=resume)
        held = held[:start] + fresh
        assert held == chunk_markdown(text), (seed, len(text))


def test_the_points_inside_a_section_are_taken_where_they_hold() -> None:
    """Over the same growths, about half the resume points are inside a section (the rest: sections
    with a fence, or whose last chunks cannot be started afresh)."""
    steps = inside = 0
    for seed in range(40):
        resume: Resume | None = None
        for text in _grown(random.Random(seed), 120):
            _, resume = chunk_lines(text.splitlines(), resume=resume)
            steps, inside = steps + 1, inside + (resume.inside is not None)
    assert inside > steps // 3, (inside, steps)


def test_a_day_of_bullets_is_chunked_again_from_its_last_chunk_or_two() -> None:
    """One section of consecutive bullets (one paragraph, cut by length): each append is chunked from
    near the end, not from the section's start."""
    text, resume, read = "# Day\n\n## Log\n", None, []
    for i in range(400):
        text += f"- Priya reviewed the deploy runbook for the payments team, item {i}.\n"
        lines = text.splitlines()
        start = resume.line if resume is not None else 0
        _, resume = chunk_lines(lines, resume=resume)
        read.append(len(lines) - start)
    assert len(text) > 25_000 and max(read[100:]) < 40, max(read[100:])
