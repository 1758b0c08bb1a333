"""What the consolidation steps read a line as: its statements (a paragraph's sentences), its
normalised words, its words' forms (their stems as the index reads them), and whether it reports an
event. A leaf module: every step imports it, it imports none of them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sidecar.consolidate.extractive import sentences
from sidecar.index.tokens import QueryTokens
from sidecar.write.dedup import LIST_MARKER, words

__all__ = ["COMMENT", "PARAGRAPH_CHARS", "form", "is_event", "learn_forms", "normalised", "statements"]

#: A line of two sentences longer than this is a paragraph (three sentences always are one): a
#: note line of one statement and its aside ("Card machine: Zettle. Receipt roll in the till
#: drawer.") stays whole.
PARAGRAPH_CHARS = 160
#: A speaker's name and a colon opening a line: a transcript's turn, said as one (as
#: ``conversation.py`` reads one).
_TURN = re.compile(r"^[A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*)?:\s+\S")
#: A sentence that quotes a whole message after its attribution: ``Dana wrote in chat: "..."``.
_QUOTED = re.compile(r"^(?P<who>[^\"“”]{1,80}?):\s+[\"“](?P<said>[^\"“”]+)[\"”]$")

COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PAST = frozenset(
    str.split(
        "ran spent met wrote sent made took got did went had saw led held began left paid found kept told "
        "gave brought bought caught thought taught sought fought won lost rode drove flew"
    )
)


def statements(line: str) -> list[str]:
    """The statements of one note line: the line itself, or, when it is a paragraph (three
    sentences or more, or two in more than ``PARAGRAPH_CHARS`` characters or one of them a
    question: "Q (Dana): what is left? A: the index rebuild."), each of its
    sentences, under the line's list marker. A transcript's turn ("Caroline: ...") is one
    utterance and stays whole. A sentence quoting a whole message after its
    attribution ("Dana wrote in chat: \"The standup is at 10:05.\"") states what the message
    says: the attribution differs from day to day, the message is the statement that recurs."""
    text = line.strip()
    marker = LIST_MARKER.match(text)
    head = marker.group(0) if marker else ""
    body = text[len(head) :]
    parts = [] if _TURN.match(body) else list(sentences(body))
    asked = any(part.endswith("?") for part in parts)  # a question and its answer: two statements
    if len(parts) < 2 or (len(parts) == 2 and len(body) <= PARAGRAPH_CHARS and not asked):
        return [text]
    out = []
    for part in parts:
        quoted = _QUOTED.match(part)
        out += [f"{head}{s}" for s in sentences(quoted["said"].strip())] if quoted else [f"{head}{part}"]
    return out


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
