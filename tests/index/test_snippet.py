"""Snippet windows: the best cluster of query terms, shown and marked, on any text."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.index.snippet import ELLIPSIS, SNIPPET_CHARS, Snippet, mark_markdown, window

ZEBRA = (
    "Notes on the checkout service and the checkpoint format. The checker script runs nightly; the "
    "checklist lives in the wiki. We also moved the checkout cache to redis and the checkpoint "
    "retention to 30 days. Several other things happened this week that matter to nobody here. "
    "The zebra-crossing token is checkx-7781, which unlocks the staging bucket."
)


def shown(snippet: Snippet) -> list[str]:
    return [snippet.text[a:b] for a, b in snippet.highlights]


def assert_valid(snippet: Snippet, flat: str, width: int = SNIPPET_CHARS) -> None:
    body = snippet.text.removeprefix(ELLIPSIS).removesuffix(ELLIPSIS)
    assert len(body) <= width + 2 * 16
    assert body in flat
    if body:
        start = flat.find(body)
        # Where the window was cut, it never starts on a mark (a text may itself start with one).
        assert start == 0 or unicodedata.combining(body[0]) == 0
        after = start + len(body)
        assert after == len(flat) or unicodedata.combining(flat[after]) == 0
    for a, b in snippet.highlights:
        assert 0 <= a < b <= len(snippet.text)


def test_the_exact_token_is_shown_though_earlier_words_share_its_prefix() -> None:
    snippet = window(ZEBRA, ["checkx-7781"])
    assert "checkx-7781" in snippet.text
    assert shown(snippet) == ["checkx", "7781"]
    assert snippet.text.startswith(ELLIPSIS)
    # The prefix matches (checkout, checkpoint...) are not highlighted: the exact term exists.
    assert "checkout" not in shown(snippet)


def test_a_two_term_query_is_centred_where_both_terms_are_nearest() -> None:
    text = (
        "redis " + "filler words here " * 20 + "the eviction policy of the redis cache is allkeys-lru "
        "and that matters. " + "more filler text " * 20 + "eviction"
    )
    snippet = window(text, ["redis", "eviction"])
    assert "eviction policy of the redis cache" in snippet.text
    assert sorted(set(shown(snippet))) == ["eviction", "redis"]
    middle = (snippet.highlights[0][0] + snippet.highlights[-1][1]) / 2
    assert abs(middle - len(snippet.text) / 2) < len(snippet.text) / 4


def test_prefixes_count_when_no_exact_token_exists() -> None:
    text = "x " * 200 + "We deployed the deployment tooling yesterday." + " y" * 200
    snippet = window(text, ["deploying"])
    assert shown(snippet) == ["deployed", "deployment"]


def test_a_long_line_without_spaces_gives_a_valid_window() -> None:
    line = "a1/" * 1000 + "needle/" + "b2/" * 700
    assert len(line) > 5000
    snippet = window(line, ["needle"])
    assert shown(snippet) == ["needle"]
    assert_valid(snippet, line)


def test_cjk_text_gives_a_valid_window_with_the_term_marked() -> None:
    text = "私は東京に住んでいます。" * 40 + "大阪の天気は晴れです。" + "京都" * 50
    snippet = window(text, ["大阪"])
    assert shown(snippet) == ["大阪"]
    assert_valid(snippet, text)


def test_combining_marks_stay_with_their_letters() -> None:
    text = "e\u0301" * 300 + " needle " + "a\u0308" * 300
    snippet = window(text, ["needle"])
    assert shown(snippet) == ["needle"]
    assert_valid(snippet, text)


def test_short_text_is_whole_and_marked_and_nothing_matched_is_the_start() -> None:
    assert shown(window("Use PostgreSQL 16.", ["postgresql"])) == ["PostgreSQL"]
    far = window("word " * 100, ["absent"])
    assert far.highlights == [] and not far.text.startswith(ELLIPSIS) and far.text.endswith(ELLIPSIS)


def test_markdown_marks_wrap_each_highlight() -> None:
    marked = mark_markdown(window(ZEBRA, ["checkx-7781"]))
    assert "**checkx**-**7781**" in marked.text
    assert shown(marked) == ["checkx", "7781"]


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=1200),
    st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4),
)
def test_any_text_and_query_give_a_valid_window(text: str, words: list[str]) -> None:
    snippet = window(text, words)
    flat = " ".join(text.split())
    assert_valid(snippet, flat)


def test_text_beyond_ascii_is_matched_case_blind_where_folding_keeps_or_moves_offsets() -> None:
    """Text with letters beyond ASCII is searched case-folded with str.find; where folding changes
    its length (an "ß" becomes "ss") a case-blind pattern is used instead: both mark the same terms."""
    filler = "Über die Brücke gehen wir täglich. " * 12
    kept = window(filler + "Der ZÜRICH-Bericht liegt im Archiv." + filler, ["zürich", "archiv"])
    assert shown(kept) == ["ZÜRICH", "Archiv"]
    moved = window(filler + "Die Straße nach ZÜRICH ist im Archiv." + filler, ["zürich", "archiv"])
    assert shown(moved) == ["ZÜRICH", "Archiv"]
    assert "Straße" in moved.text
    # A prefix match beyond ASCII, and a Greek word whose final sigma folds to a plain one.
    assert shown(window(filler + "Berichte über Zürichs Brücken.", ["berichten"])) == ["Berichte"]
    assert shown(window("Ο ΛΟΓΟΣ του σχεδίου.", ["λογοσ"])) == ["ΛΟΓΟΣ"]
