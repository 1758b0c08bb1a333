from sidecar.index.chunker import MAX_CHUNK_CHARS, chunk_markdown


def test_sections_carry_heading_path_and_line_span() -> None:
    text = "# Deploy\nintro line\n\n## Rollback\nstep one\nstep two\n\n# Other\nbody\n"
    chunks = chunk_markdown(text)
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Deploy", 2, 2),
        ("Deploy > Rollback", 5, 6),
        ("Other", 9, 9),
    ]
    assert chunks[1].body == "step one\nstep two"


def test_paragraphs_pack_up_to_the_limit_and_never_exceed_it() -> None:
    paras = [f"paragraph {i} " + "word " * 60 for i in range(30)]
    chunks = chunk_markdown("# H\n" + "\n\n".join(paras))
    assert len(chunks) > 1
    assert all(len(c.body) <= MAX_CHUNK_CHARS for c in chunks)
    joined = " ".join(c.body for c in chunks)
    assert all(f"paragraph {i} " in joined for i in range(30))


def test_a_single_huge_line_is_cut_and_keeps_its_line_number() -> None:
    chunks = chunk_markdown("# H\n" + "x" * 2500)
    assert [len(c.body) for c in chunks] == [1000, 1000, 500]
    assert all((c.line_start, c.line_end) == (2, 2) for c in chunks)


def test_headings_inside_code_fences_are_body() -> None:
    chunks = chunk_markdown("# Real\n```\n# not a heading\n```\n")
    assert len(chunks) == 1
    assert chunks[0].heading == "Real"
    assert "# not a heading" in chunks[0].body


def test_nested_heading_levels_reset_the_path() -> None:
    chunks = chunk_markdown("# A\n## B\n### C\nc\n## D\nd\n")
    assert [c.heading for c in chunks if c.body] == ["A > B > C", "A > D"]


def test_hash_changes_with_content_and_heading() -> None:
    a = chunk_markdown("# H\nbody")[0]
    assert a.hash == chunk_markdown("# H\nbody")[0].hash
    assert a.hash != chunk_markdown("# H\nbody!")[0].hash
    assert a.hash != chunk_markdown("# G\nbody")[0].hash
