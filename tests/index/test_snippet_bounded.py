"""A window over ASCII text is chosen from the text's start when the first match's window holds
every query term, and is then the window the whole text's matches choose."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sidecar.index.snippet import (
    ELLIPSIS,
    SNIPPET_CHARS,
    Snippet,
    _ascii_window,
    _choose,
    _matches,
    flatten,
    query_tokens,
    window,
)


def whole_choice(text: str, words: list[str], width: int) -> Snippet:
    """The window chosen from every match of the whole text (``_matches``, ``_choose``)."""
    flat = flatten(text)
    matches = _matches(flat, query_tokens(words))
    if len(flat) <= width:
        return Snippet(flat, [(a, b) for a, b, _, _ in matches])
    start, end = _choose(flat, matches, width)
    lead = ELLIPSIS if start > 0 else ""
    shift = len(lead) - start
    body = lead + flat[start:end] + (ELLIPSIS if end < len(flat) else "")
    return Snippet(body, [(a + shift, b + shift) for a, b, _, _ in matches if start <= a and b <= end])


WORDS = ["deploy", "deployed", "rollback", "release", "query", "queries", "db", "a", "go", "Ana", "x1", "notes"]
SEPARATORS = [" ", " ", ". ", ", ", "\n", "\n\n", "-", "/", "  "]
ascii_texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=200).map(
    lambda parts: "".join(word + sep for word, sep in parts)
)
queries = st.lists(
    st.sampled_from(WORDS).flatmap(lambda w: st.sampled_from([w, w.upper(), w[:3], w[:5], w + "s", w + "ing"])),
    min_size=1,
    max_size=4,
)


@settings(max_examples=600, deadline=None)
@given(ascii_texts, queries, st.sampled_from([30, 60, 120, SNIPPET_CHARS]))
@example("deploy release " * 60, ["deploy", "release"], SNIPPET_CHARS)  # every window holds both
@example("deploy " * 40 + "release " * 40, ["deploy", "release"], 60)  # the first window lacks a term
@example("deployed " * 40 + "deploy", ["deploy"], 60)  # a prefix match before the exact one
@example("queries rollback " * 30, ["query", "rollback"], 60)  # a term held by its other form only
@pytest.mark.slow
def test_the_window_is_the_one_every_match_of_the_text_chooses(text: str, words: list[str], width: int) -> None:
    assert window(text, words, width) == whole_choice(text, words, width)


def test_a_text_repeating_its_query_lists_only_the_matches_its_first_window_can_show() -> None:
    text = " ".join(["Ana checked the deploy rollback release notes."] * 40)
    tokens = query_tokens(["rollback", "deploy"])
    matches, (start, end) = _ascii_window(text, tokens, SNIPPET_CHARS)
    every = _matches(text, tokens)
    assert len(every) == 80
    assert len(matches) < 20  # the matches starting within the first window and a snap beyond it
    assert matches == every[: len(matches)]
    assert (start, end) == _choose(text, every, SNIPPET_CHARS)
    assert window(text, [], tokens=tokens) == whole_choice(text, ["rollback", "deploy"], SNIPPET_CHARS)


def test_a_text_whose_first_window_lacks_a_term_lists_every_match() -> None:
    text = "deploy " * 60 + "rollback " * 5
    tokens = query_tokens(["deploy", "rollback"])
    matches, span = _ascii_window(text, tokens, SNIPPET_CHARS)
    assert matches == _matches(text, tokens)
    assert span == _choose(text, matches, SNIPPET_CHARS)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "bc", " ", "  ", "\n", "\n\n", "\t", "\r", "\x0b", "\x1c", "é", "\xa0"])).map(
        "".join
    )
)
@example("one\n\ntwo   three\n")  # paragraphs and a run of spaces: the replaces
@example("one\n\ttwo")  # a tab: split into words
@pytest.mark.slow
def test_flattening_makes_every_run_of_whitespace_one_space(text: str) -> None:
    assert flatten(text) == " ".join(text.split())
