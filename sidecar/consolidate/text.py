"""What the consolidation steps read a line as: its statements (a paragraph's sentences), its
normalised words, its words' forms (their stems as the index reads them), and whether it reports an
event. A leaf module: every step imports it, it imports none of them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from sidecar.consolidate.extractive import sentences
from sidecar.index.tokens import QueryTokens
from sidecar.write.dedup import LIST_MARKER, words

__all__ = [
    "CLAUSE_TRIM",
    "COMMENT",
    "MAX_CLAUSES",
    "PARAGRAPH_CHARS",
    "View",
    "clause_spans",
    "form",
    "holds_value",
    "is_event",
    "learn_forms",
    "mould",
    "normalised",
    "reports_work",
    "statements",
    "unstamped",
    "views",
]

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
#: Words that say a value changed (read by the change search and by the recurring cores).
SIGNAL = re.compile(
    r"\b(?:now|instead\s+of|in\s+favou?r\s+of|switched|moved|migrated|upgraded|downgraded|replaced|replacing|"
    r"swapped|no\s+longer|not\s+anymore|changed|bumped|rotated|renamed|retired|transferred|handed\s+over|"
    r"t(?:ake|akes|ook|aken|aking)\s+over|has\s+become|became|went\s+from|from\s+\S+(?:\s+\S+)?\s+to)\b",
    re.IGNORECASE,
)
#: A time of day opening a line, with or without a date, a bracket or a separator after it:
#: "09:22", "[14:10]", "9.05am -", "2026-03-04 08:00 |".
_STAMP = re.compile(
    r"^(?:\[?(?:\d{4}-\d{2}-\d{2}[ T])?\d{1,2}[:.h]\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?\]?"
    r"(?:\s*[-–—|:]\s+|\s+))+",
    re.I,
)
#: A sentence's end before a word in lower case (``_lower_sentences``).
_LOWER_END = re.compile(r"(?<=[\w)%\"'”’])[.!?](?=\s+[a-z])\s+")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "no", "fig", "min", "max"})
_BOX = re.compile(r"^\[[ xX]\]\s+")
#: Where a clause of a line ends: a sentence's end, a semicolon, colon or comma before a space, a
#: dash between spaces or a bracket; ``_CLAUSE`` adds a quotation mark.
_CLAUSE_ENDS = r"(?<=[.!?])\s+|[;:,]\s+|\s+[-–—]+\s+|\s*[()\[\]]\s*"
_CLAUSE = re.compile(_CLAUSE_ENDS + r"|\s*[\"“”]\s*")
_CLAUSE_UNQUOTED = re.compile(_CLAUSE_ENDS)
#: What a clause is trimmed of at both ends: spaces, punctuation, brackets, quotes and emphasis.
CLAUSE_TRIM = " \t.,;:!?-–—'\"“”‘’()[]*_"
#: The most clauses a view of a line joins: a statement inside a wrapper is a few clauses long.
MAX_CLAUSES = 6
#: A word that holds a value: a digit, or a path's, host's or identifier's inner separator ("K9",
#: "db_stage", "ops/runbooks", "nas.lab"); a hyphen alone joins words ("follow-up", "on-call").
_VALUE_WORD = re.compile(r"\d|\w[_/.]\w")
#: The writer's "I", alone or contracted ("I'm", "I've", "I'd"), punctuation after it aside.
_I = re.compile(r"^I(?:['’](?:m|ve|d|ll))?\W*$")
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
    if len(body) > PARAGRAPH_CHARS:  # a long line's sentences, those its writer opens in lower case too
        parts = [piece for part in parts for piece in _lower_sentences(part)]
    asked = any(part.endswith("?") for part in parts)  # a question and its answer: two statements
    if len(parts) < 2 or (len(parts) == 2 and len(body) <= PARAGRAPH_CHARS and not asked):
        return [text]
    out = []
    for part in parts:
        quoted = _QUOTED.match(part)
        out += [f"{head}{s}" for s in sentences(quoted["said"].strip())] if quoted else [f"{head}{part}"]
    return out


def unstamped(line: str) -> str:
    """``line`` without its list marker, task box, quote marker and the time of day it opens
    with: what the line says, however the day's log dates it."""
    text = LIST_MARKER.sub("", line.strip())
    text = re.sub(r"^>\s*", "", text)
    return _BOX.sub("", _STAMP.sub("", text, count=1), count=1).strip()


@dataclass(frozen=True, slots=True)
class View:
    """A run of a line's clauses (``first`` to ``last``, inclusive), as written; ``wraps`` when it
    is how the line is wrapped rather than what it says: it opens the line before a colon or a
    comma ("per Ama, ...", "from the wiki: ..."), or closes it after a dash or a bracket
    ("... - worth remembering", "... (again)")."""

    text: str
    first: int
    last: int
    wraps: bool = False


def views(line: str) -> list[View]:
    """The statements a line may hold inside what wraps it: every run of up to ``MAX_CLAUSES`` of
    its clauses (split at sentence ends, semicolons, colons, commas, dashes between spaces,
    brackets and quotation marks), after the time of day it opens with. "09:22 from the wiki: Spare
    patch leads live in cabinet K12 - worth remembering" holds "Spare patch leads live in cabinet K12" as one of its
    runs, and so does "08:04 per Ama, Spare patch leads live in cabinet K12": the run that recurs across
    days is the statement, whatever the lead-in, aside or quote around it on each day. The whole
    line (without its time, its punctuation kept) is the run of all its clauses."""
    body = unstamped(line)
    spans = clause_spans(body)
    last = len(spans) - 1
    out = []
    for i, (start, _) in enumerate(spans):
        for j in range(i, min(i + MAX_CLAUSES, len(spans))):
            text = body[start : spans[j][1]].strip(CLAUSE_TRIM)
            if not text or not _balanced(text) or (i, j) == (0, last):
                continue
            lead = i == 0 and body[spans[j][1] : spans[j + 1][0]].strip()[:1] in (":", ",")
            aside = j == last and body[spans[i - 1][1] : start].strip()[:1] in ("-", "–", "—", "(", "[")
            out.append(View(text, i, j, lead or aside))
    if spans:  # the whole line, as written
        out.append(View(body, 0, last))
    return out


def clause_spans(body: str, *, quotes: bool = True) -> list[tuple[int, int]]:
    """Where each clause of ``body`` starts and ends: split at a sentence's end, a semicolon, colon or
    comma before a space, a dash between spaces, a bracket and (with ``quotes``) a quotation mark;
    a clause of nothing but punctuation is none."""
    cuts = [0]
    for match in (_CLAUSE if quotes else _CLAUSE_UNQUOTED).finditer(body):
        cuts += [match.start(), match.end()]
    cuts.append(len(body))
    return [(cuts[n], cuts[n + 1]) for n in range(0, len(cuts), 2) if body[cuts[n] : cuts[n + 1]].strip(CLAUSE_TRIM)]


def _balanced(text: str) -> bool:
    """Whether ``text`` closes each bracket and quotation it opens (a run ending inside an aside
    is none of the line's statements)."""
    return text.count("(") == text.count(")") and text.count("[") == text.count("]") and text.count('"') % 2 == 0


def holds_value(text: str) -> bool:
    """Whether ``text`` names a value: a word with a digit or a path's or identifier's separator, or a
    capitalised word past its first ("Cage 14 belongs to Halvard Bank", "Fuel comes from Penrose
    Fuels"), as a fact does and a writer's lead-in or aside rarely does ("worth remembering"). The
    writer's "I" names nothing ("which I keep forgetting")."""
    found = text.split()
    return any(_VALUE_WORD.search(w) for w in found) or any(w[:1].isupper() and not _I.match(w) for w in found[1:])


def mould(text: str) -> tuple[str, str]:
    """``text``'s frame and what fills it: its words with each value word (``holds_value``'s) put
    as ``#``, and those values. "13 entries checked" and "20 entries checked" are one frame with
    two fills: a chore's line, written again each day with other details."""
    frame: list[str] = []
    fill: list[str] = []
    for n, word in enumerate(text.split()):
        bare = word.strip(CLAUSE_TRIM)
        if _VALUE_WORD.search(bare) or (n and bare[:1].isupper()):
            frame.append("#")
            fill.append(bare)
        elif bare:
            frame.append(bare.lower())
    return " ".join(frame), " ".join(fill)


def _lower_sentences(text: str) -> list[str]:
    """``text`` split where a sentence ends before a word in lower case ("... on the ops box. ugh,
    ci-config lint job timing out again"), not after an abbreviation ("e.g. the")."""
    out = []
    start = 0
    for match in _LOWER_END.finditer(text):
        before = text[start : match.start()].rsplit(None, 1)
        if before and before[-1].casefold().rstrip(".") not in _ABBREVIATIONS:
            out.append(text[start : match.start() + 1].strip())
            start = match.end()
    out.append(text[start:].strip())
    return [part for part in out if part]


#: How many lines' readings a process keeps (``normalised``, the rule readings of ``conduct``, the
#: word lists of ``changes`` and ``routine``): a run reads each line of a tier many times over, and
#: a full tier of 450 KB holds some 15,000 distinct lines. Bounded, as the process that runs the job
#: may be a long-lived one (the CLI's, a test's).
LINE_CACHE = 1 << 15


@lru_cache(maxsize=LINE_CACHE)
def normalised(line: str) -> str:
    """A line's words in order, lowercased, without its list marker or HTML comments."""
    return " ".join(words(COMMENT.sub(" ", line)))


def is_event(key: str) -> bool:
    """Whether a normalised line opens with a verb in the past tense (it reports what was done)."""
    head = key.split(" ", 1)[0]
    return head in _PAST or (len(head) > 4 and head.endswith("ed") and not head.endswith("eed"))


def reports_work(text: str) -> bool:
    """Whether a line as written opens with a verb in the past tense (``is_event`` of its words),
    unless that word is the first part of a hyphenated word whose last part is none ("Forced-update
    floor: 4.11.0", "Signed-off builds go to beta", "embed-api sits behind the LB"): ``normalised``
    splits the word, and its first part alone reads as a past tense; the whole names something."""
    if not is_event(normalised(text)):
        return False
    line = LIST_MARKER.sub("", text.strip())
    if _DESCRIBED.match(line):
        return False
    compound = _OPENING_COMPOUND.match(line)
    return compound is None or is_event(compound["last"].lower())


#: A line whose opening past participle describes the noun after it, which a verb in the present
#: tense then says something of ("Confined space entry needs the gas monitor", "Signed forms go
#: to the office", "Closed tickets are archived after 30 days"): it names a thing, it reports no
#: work done. The participle is followed by up to two lowercase words, none an article or a preposition, then
#: the verb, before any punctuation.
_DESCRIBED = re.compile(
    r"^(?!(?:checked|confirmed|noticed|noted|found|heard|verified|ensured|emailed|messaged|texted|called|phoned|"
    r"warned|asked|reminded|told|agreed|decided|learned|learnt|realised|realized|assumed|guessed|saw|said|"
    r"mentioned|explained|replied|answered|reported|flagged|logged|recorded)\b)"
    r"[A-Za-z]+ed\s+(?!(?:the|a|an|this|that|these|those|his|her|its|our|their|my|your|some|all|to|in|on|at|"
    r"up|out|off|with|for|from|by|back|over|into|onto|down|it|them|him|me|us)\b)(?:(?-i:[a-z-]+)\s+){0,2}?"
    r"(?:is|are|needs|need|requires|require|must|should|goes|go|gets|get|has|have|stays|stay|lives|live|"
    r"belongs|belong|means|mean|can|cannot|may|will|won't)\b",
    re.I,
)


#: A hyphenated word opening a line, after quotes, brackets or emphasis; ``last`` its last part.
_OPENING_COMPOUND = re.compile(r"^[\"'“‘(\[*_]*(?:[A-Za-z]+-)+(?P<last>[A-Za-z]+)\b")


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
