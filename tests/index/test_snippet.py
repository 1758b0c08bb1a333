"""Snippet windows: the best cluster of query terms, shown and marked, on any text."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sidecar.index.snippet import (
    ELLIPSIS,
    SNIPPET_CHARS,
    Snippet,
    held_terms,
    held_terms_each,
    mark_markdown,
    mark_terms,
    query_tokens,
    term_spans,
    window,
)

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


def test_prefix_matches_do_not_anchor_the_window_when_an_exact_token_exists() -> None:
    near = "deployed checkpointing " + "filler " * 22 + "redis"
    text = "x " * 50 + near + " y" * 150 + " redis" + " z" * 100
    snippet = window(text, ["deploying", "checkpoints", "redis"])
    # A window from "deployed" would hold all three terms, two of them by prefix; the window is
    # around an exact token instead (the first, on a tie).
    assert len(near) <= SNIPPET_CHARS
    assert shown(snippet) == ["redis"]
    assert "deployed" not in snippet.text and text.find(snippet.text.strip(ELLIPSIS)) < text.find(" y")


def test_a_word_matched_by_two_terms_counts_for_both_in_the_anchors_window() -> None:
    # "RhoA" is the exact token "rhoa" and a prefix match of "rho" (which no word is exactly). The
    # first "RhoA" alone holds both terms, as the pair further on does: the earliest window wins.
    text = (
        "x " * 60 + "The RhoA signal starts here. " + "filler words " * 30 + "Then RhoA and RhoA again." + " tail" * 60
    )
    snippet = window(text, ["rho", "rhoa"])
    assert "The RhoA signal starts here." in snippet.text
    assert "Then RhoA" not in snippet.text
    assert shown(snippet) == ["RhoA", "RhoA"]


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


def test_latin_diacritics_match_either_way_as_the_index_reads_them() -> None:
    # The index's tokenizer drops Latin diacritics: "creme brulee" finds this note, and the snippet
    # shows why; a query with them marks the same words written without.
    text = "The café served crème brûlée and a naïve résumé of Zürich."
    assert shown(window(text, ["creme", "brulee"])) == ["crème", "brûlée"]
    assert shown(window(text, ["ZURICH", "cafe"])) == ["café", "Zürich"]
    assert shown(window("Cafe Zurich, naive resume", ["café", "zürich", "naïve"])) == ["Cafe", "Zurich", "naive"]
    # Where case folding moves offsets ("ß" is "ss"), the same words are found by pattern.
    assert shown(window("Die Straße nach ZÜRICH ist im Archiv.", ["zurich", "archiv"])) == ["ZÜRICH", "Archiv"]
    # Letters that are not a letter with marks stay themselves, as in the index: "ø", "ł".
    assert shown(window("Øresund and Łódź", ["oresund", "lodz"])) == []


def test_a_plural_in_ies_marks_its_singular_in_y() -> None:
    # The index's stemmer reads "queries" and "query" alike; the first five letters do not.
    text = "Each query hit the entry cache; one story about a study. Carry on."
    assert shown(window(text, ["queries", "entries", "stories", "carried"])) == ["query", "entry", "story", "Carry"]
    assert shown(window("the queries ran", ["queries"])) == ["queries"]  # an exact word first
    assert shown(window("Die Straße: each query hit", ["queries"])) == ["query"]  # matched by pattern
    # And the other way: a word in "y" marks its plural and past tense.
    assert shown(window("Both queries were queried again.", ["query"])) == ["queries", "queried"]
    assert shown(window("We set the key and the keys.", ["key", "days"])) == ["key"]  # "key": no other form


# -- the matching rules, written the slow and obvious way ------------------------------------------
WORD = re.compile(r"\w+")


def is_word(char: str) -> bool:
    return char.isalnum() or char == "_" or unicodedata.combining(char) != 0


def folded(word: str) -> str:
    """Case-folded, each Latin letter with diacritics (an ASCII letter and combining marks, once
    decomposed) as its letter: how the index's tokenizer compares words."""
    out = []
    for char in word.casefold():
        letter, *marks = unicodedata.normalize("NFD", char)
        plain = marks and letter.isascii() and letter.isalpha() and all(unicodedata.combining(m) for m in marks)
        out.append(letter if plain else char)
    return "".join(out)


def expected_matches(text: str, tokens: list[str]) -> list[tuple[int, int, int, bool]]:
    """Every word of ``text`` (a ``\\w+`` run not preceded by a letter, digit, "_" or combining
    mark) that is a query token folded, else, for a token of 3 or more letters with no such word,
    every word that starts with its first 5 letters, or with the first 5 of its other form in "y"
    (a token in "ies" or "ied" longer than 4 letters: its singular in "y"; a token of 4 or more
    letters ending in a consonant and "y": its stem in "i"): (start, end, token index, exact)."""
    words = [m for m in WORD.finditer(text) if m.start() == 0 or not is_word(text[m.start() - 1])]
    out = []
    for index, token in enumerate(tokens):
        starts = [token[:5]]
        if len(token) > 4 and token.endswith(("ies", "ied")) and token.isascii():
            starts.append((token[:-3] + "y")[:5])
        elif len(token) >= 4 and token.endswith("y") and token[-2] not in "aeiouy" and token.isascii():
            starts.append((token[:-1] + "i")[:5])
        exact = [(m.start(), m.end(), index, True) for m in words if folded(m.group()) == token]
        loose = [(m.start(), m.end(), index, False) for m in words if folded(m.group()).startswith(tuple(starts))]
        out += exact or (loose if len(token) >= 3 else [])
    return sorted(out)


def best_score(matches: list[tuple[int, int, int, bool]], width: int) -> int:
    """The most a window starting at an anchor (an exact match, if there is one) can hold: each
    distinct exact token counts 4, each prefix-matched one 1."""
    anchors = [m for m in matches if m[3]] or matches
    return max((score([m for m in matches if a[0] <= m[0] and m[1] <= a[0] + width]) for a in anchors), default=0)


def score(matches: list[tuple[int, int, int, bool]]) -> int:
    return sum(4 if exact else 1 for _, exact in {(m[2], m[3]) for m in matches})


# Letters that keep their length when case-folded (an "ß" becoming "ss" is tested above), a
# combining mark, the Kelvin sign (it folds to an ASCII "k"), digits, "_" and separators.
VOCABULARY = [
    "check",
    "checkout",
    "Checkpoint",
    "CHECKX",
    "7781",
    "deploy",
    "deployed",
    "query",
    "Queries",
    "queried",
    "Zürich",
    "zürichs",
    "richest",
    "ΛΟΓΟΣ",
    "λόγος",
    "naïve",
    "nai\u0308ve",
    "\u212aelvin",
    "kelvin",
    "snake_case",
    "e\u0301t",
    "a",
    "ab",
]
SEPARATORS = [" ", "  ", "-", ". ", "\n", "/", "?", "…", "—", "\u00a0", "’"]
texts = st.lists(st.tuples(st.sampled_from(VOCABULARY), st.sampled_from(SEPARATORS)), max_size=120).map(
    lambda parts: "".join(word + sep for word, sep in parts)
)
queries = st.lists(
    st.sampled_from(VOCABULARY).flatmap(
        lambda w: st.sampled_from([w, w.upper(), w[:3], w[:4], w[:6] + "ing", w + "x"])
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=400, deadline=None)
@given(texts, queries)
@example("Zürichs richest naïve", ["rich", "ve", "naive"])  # no word starts after a letter beyond ASCII
def test_the_marked_terms_are_the_matching_rules(text: str, words: list[str]) -> None:
    tokens = query_tokens(words)
    assert mark_terms(text, tokens) == [(start, end) for start, end, _, _ in expected_matches(text, tokens)]


@settings(max_examples=400, deadline=None)
@given(texts, queries)
@example("Zürichs richest naïve", ["rich", "ve", "naive"])
@example("Straße strasse STRASSE", ["straße", "strasse"])  # case folding moves the offsets
@example("Studies study studying", ["studies", "stud"])  # a term's other form, and a prefix of another's
def test_each_terms_spans_are_those_it_marks_alone(text: str, words: list[str]) -> None:
    tokens = query_tokens(words)
    assert term_spans(text, tokens) == [mark_terms(text, [token]) for token in tokens]


@settings(max_examples=400, deadline=None)
@given(texts, queries, st.sampled_from([40, 80, SNIPPET_CHARS]))
def test_the_window_holds_the_best_cluster_and_an_exact_match(text: str, words: list[str], width: int) -> None:
    tokens = query_tokens(words)
    flat = " ".join(text.split())
    snippet = window(text, words, width)
    assert_valid(snippet, flat, width)
    matches = expected_matches(flat, tokens)
    body = snippet.text.removeprefix(ELLIPSIS).removesuffix(ELLIPSIS)
    lead = len(snippet.text) - len(snippet.text.removeprefix(ELLIPSIS))
    # Where the window is in the text: the body may occur more than once in a repetitive text.
    places = [at for at in range(len(flat) - len(body) + 1) if flat.startswith(body, at)]
    assert any(holds_best(matches, snippet, at - lead, width) for at in places)


def holds_best(matches: list[tuple[int, int, int, bool]], snippet: Snippet, at: int, width: int) -> bool:
    """Whether the snippet, cut from the text at ``at``, highlights exactly the matches inside it,
    as good a cluster as any window has, and an exact match when the text has one."""
    inside = [m for m in matches if (m[0] - at, m[1] - at) in snippet.highlights]
    return (
        [(m[0] - at, m[1] - at) for m in inside] == snippet.highlights
        and score(inside) >= best_score(matches, width)
        and (any(m[3] for m in inside) or not any(m[3] for m in matches))
    )


ascii_texts = st.lists(
    st.tuples(st.sampled_from([w for w in VOCABULARY if w.isascii()]), st.sampled_from([" ", "-", ". ", "\n", "/"])),
    max_size=120,
).map(lambda parts: "".join(word + sep for word, sep in parts))


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts, ascii_texts), queries)
@example("Zürichs richest naïve", ["rich", "ve", "naive"])
@example("Studies study studying", ["studies", "stud"])  # a term's other form, and a prefix of another's
@example("studying studies", ["study"])  # only the other form ("studi") is held
@example("ab abc", ["ab", "abd"])  # "ab" held exactly; "abd" not: its stem is itself, no word starts with it
@example("abcde", ["ab"])  # a 2-letter token is held only as a whole word
@example("checkout checkpoint", ["checker"])  # 3 letters or more: a word with its stem holds it
@pytest.mark.slow
def test_the_held_terms_are_those_with_spans(text: str, words: list[str]) -> None:
    tokens = query_tokens(words)
    assert held_terms(text, tokens) == {i for i, spans in enumerate(term_spans(text, tokens)) if spans}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(texts, ascii_texts), max_size=8), queries)
@example(["deploy", "ment rollback"], ["deployment"])  # a stem at one text's end, the rest at the next's start
@example(["ab", "ab"], ["ab"])  # a short term whole at both texts' edges
@example(["x ab", "abc"], ["ab"])  # held in the first text only: the second's word runs on
@example(["", "studies", "Zürich"], ["study", "zurich"])  # an empty text, another form, a text beyond ASCII
@example(["naïve studies", "studying"], ["study"])
@pytest.mark.slow
def test_the_held_terms_of_each_text_are_its_own(found: list[str], words: list[str]) -> None:
    tokens = query_tokens(words)
    spans = [term_spans(text, tokens) for text in found]
    assert held_terms_each(found, tokens) == [{i for i, s in enumerate(each) if s} for each in spans]
