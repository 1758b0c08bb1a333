"""What the consolidation steps read a line as: its normalised words, its words' forms (their stems
as the index reads them), and whether it reports an event. A leaf module: every step imports it,
it imports none of them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sidecar.index.tokens import QueryTokens
from sidecar.write.dedup import words

__all__ = ["COMMENT", "form", "is_event", "learn_forms", "normalised"]

COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PAST = frozenset(
    str.split(
        "ran spent met wrote sent made took got did went had saw led held began left paid found kept told "
        "gave brought bought caught thought taught sought fought won lost rode drove flew"
    )
)


def normalised(line: str) -> str:
    """A line's words in order, lowercased, without its list marker or HTML comments."""
    return " ".join(words(COMMENT.sub(" ", line)))


def is_event(key: str) -> bool:
    """Whether a normalised line opens with a verb in the past tense (it reports what was done)."""
    head = key.split(" ", 1)[0]
    return head in _PAST or (len(head) > 4 and head.endswith("ed") and not head.endswith("eed"))


_FORMS: dict[str, str] = {}  # a word -> its form (the index's porter stem): a pure function, shared
_FORMS_LIMIT = 200_000


def learn_forms(found: Iterable[str]) -> None:
    """Read the forms of ``found``'s new words (lowercased words of letters) in one pass of the
    index's tokenizer, so that ``form`` finds them (a word looked up alone is tokenized alone, more
    slowly)."""
    new = sorted({w for w in found if w not in _FORMS})
    if not new:
        return
    if len(_FORMS) + len(new) > _FORMS_LIMIT:
        _FORMS.clear()
    for word, tokens in zip(new, QueryTokens()(new), strict=True):
        _FORMS[word] = tokens[0] if len(tokens) == 1 else word


def form(word: str) -> str:
    """A lowercased word's form: its stem as the index reads it for a word of letters ("pickups",
    "pickup"; "deliveries", "delivering" -> "deliv"), any other word as it is (a value: "20.5",
    "db-stage-3")."""
    if not word.isalpha():
        return word
    found = _FORMS.get(word)
    if found is None:
        learn_forms((word,))
        found = _FORMS.get(word, word)
    return found
