"""``Views.starts_a_word`` answers the same whichever way it looks: a text of few words looks its
words' prefixes up, a longer one searches once per stem."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.scanner.normalise import Stems, normalise

_LETTERS = "abcde"
word = st.text(_LETTERS, min_size=1, max_size=5)


def reference(folded: str, stems: list[str]) -> bool:
    """The definition: some word of the text starts with a stem's first word, and a stem of
    several words occurs whole; or a term not starting with an ASCII letter or digit occurs."""
    words = re.findall(r"\w+", folded)
    for stem in stems:
        if stem.isascii() and stem[:1].isalnum():
            first, _, rest = stem.partition(" ")
            if any(w.startswith(first) for w in words) and (not rest or stem in folded):
                return True
        elif stem in folded:
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(
    st.lists(word, max_size=12),
    st.lists(st.one_of(word, st.builds(lambda a, b: f"{a} {b}", word, word), st.just("-ab")), min_size=1, max_size=40),
)
def test_prefix_lookup_and_search_per_stem_agree_with_the_definition(text_words: list[str], stems: list[str]) -> None:
    views = normalise(" ".join(text_words))
    assert views.starts_a_word(Stems.of(stems)) == reference(views.folded, stems)


def test_both_ways_are_taken() -> None:
    """The few-words way for a short text against many stems, the per-stem way otherwise; both
    find the same stem of several words and refuse the same near miss."""
    many = Stems.of([f"zz{i}" for i in range(50)] + ["send the", "forwar"])
    assert normalise("please forwarding").starts_a_word(many)  # few words: prefixes looked up
    assert normalise("send the file").starts_a_word(many)
    assert not normalise("send it over").starts_a_word(many)  # "send" starts a word, "send the" is not there
    assert normalise("forward it").starts_a_word(many)  # "forward" starts with "forwar"
    long_text = normalise(" ".join(f"w{i}" for i in range(200)) + " forwarded")
    assert long_text.starts_a_word(many)  # many words: one search per stem
    assert not normalise(" ".join(f"w{i}" for i in range(200))).starts_a_word(many)
