"""Deterministic fact extraction from markdown and journal text.

What it reads, line by line (fenced code is skipped):

- sentences with a known verb: "X uses Y", "X owns Y" (stored as Y's ``owner``), "X moved to Y",
  "we moved from A to B", "we replaced A with B", "B replaced A", "X is the baseline", and a short
  list of event verbs ("adopted", "joined", "visited" ...) whose facts are kept as events;
- ``key: value`` lines (the subject is the section's heading, the key the predicate);
- markdown tables (the first column names the subject, each other column header a predicate).

"I" and "we" are the speaker when the section's heading is a single name ("### Joanna"), else
``we`` (the agent and its team). A fact's ``valid_from`` is a date in its sentence ("on
2026-03-01"), else the note's date (``daily/2026-03-01.md``, or a dated top heading), else None
(the caller uses the entry's time or now). The same text always gives the same facts, and a text
that grew by appended lines can be read on from where its reading stopped (``extract_lines``
``after``): the appended lines then give the facts a reading of the whole text finds on them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sidecar.kg.facts import FUNCTIONAL, Extracted, Position

__all__ = ["FUNCTIONAL", "MAX_SENTENCE", "Extracted", "Position", "extract", "extract_lines", "extract_text"]

#: Longest sentence read for facts, in characters.
MAX_SENTENCE = 600

# A word starts a token (never inside one) and is at most 40 characters: every pattern then runs in
# time linear in the text, also on one long run of letters or digits.
_WORD = r"(?<![\w.+#/'-])[A-Za-z0-9][\w.+#/'-]{0,39}(?![\w.+#/'-])"
# A name: one to four words, stopping before a linking word or punctuation.
_STOP = r"(?=\s+(?:on|since|from|in|at|as|for|with|to|and|but|because|until|after|before|last|this|when|yesterday|now|today|instead)\b|\s*[,.;:!?()\"]|\s*$)"
_NAME = rf"(?:the\s+|our\s+|a\s+|an\s+)?{_WORD}(?:\s+{_WORD}){{0,3}}?{_STOP}"
# A name before its verb: the verb ends it.
_LEAD = rf"(?:[Tt]he\s+|[Oo]ur\s+|[Aa]\s+|[Aa]n\s+)?{_WORD}(?:\s+{_WORD}){{0,3}}?"
_SUBJ = rf"(?P<s>\b(?:[Ww]e|I|[Oo]ur team|[Tt]he team)\b|{_LEAD})"
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
# A relative clause between commas: an aside the name before it and the verb after it straddle.
_ASIDE = re.compile(
    r",\s+(?:which|who|that|whose)\b[^.;:!?]{0,200}?,(?=\s+(?:is|are|was|were|has|have|now|uses|owns|runs)\b)"
)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
_KEY_VALUE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?P<k>[A-Za-z][\w ./-]{0,38}?)(?:\*\*)?\s*:\s+(?P<v>\S.{0,118})$")
_SPEAKER = re.compile(r"^[A-Z][a-z]+$")
_BREAKS = frozenset(
    re.findall(
        r"\w+",
        "i me we us you he him she her it they them that said says say think thinks thought and but so "
        "because now then today yesterday also which who where",
    )
)
_PRONOUNS = frozenset(
    re.findall(
        r"\w+",
        "i me we us you he him she her it they them this that these those there here something anything "
        "everything nothing someone one so some all",
    )
)
#: Words that stand beside a name without being part of it.
_ADVERBS = frozenset(
    re.findall(r"\w+", "currently now still also already recently just finally always never usually mostly often again")
)
#: Roles written before a person's name ("our designer Zoe").
_ROLES = frozenset(
    re.findall(
        r"\w+",
        "designer engineer developer dev manager lead colleague teammate coworker cto ceo cfo pm intern "
        "contractor consultant friend boss architect analyst admin sre founder cofounder director tester",
    )
)

_MOVE = re.compile(
    rf"{_SUBJ}\s+(?:have\s+|has\s+|just\s+|finally\s+)?(?:moved|migrated|switched|changed)\s+(?:\w+\s+)?"
    rf"from\s+(?P<a>{_NAME})\s+to\s+(?P<b>{_NAME})"
)
_REPLACE_WITH = re.compile(rf"{_SUBJ}\s+(?:have\s+|has\s+)?replaced\s+(?P<a>{_NAME})\s+with\s+(?P<b>{_NAME})")
_REPLACED = re.compile(rf"(?P<b>{_LEAD})\s+(?:has\s+)?replaced\s+(?P<a>{_NAME})")
_USES = re.compile(
    rf"{_SUBJ}\s+(?:now\s+)?(?:uses|use|is using|are using|runs on|run on|relies on|rely on|depends on)\s+(?P<o>{_NAME})"
)
_OWNS = re.compile(rf"{_SUBJ}\s+(?:now\s+)?(?:owns|own|maintains|is responsible for)\s+(?P<o>{_NAME})")
_OWNED = re.compile(rf"(?P<o>{_LEAD})\s+is\s+(?:now\s+)?owned\s+by\s+(?P<s>{_NAME})")
_LOCATED = re.compile(
    rf"{_SUBJ}\s+(?:has\s+|have\s+|just\s+)?(?:moved to|relocated to|lives in|live in|is located in|is based in)\s+(?P<o>{_NAME})"
)
_BASELINE = re.compile(
    rf"(?P<o>{_LEAD})\s+is\s+(?:now\s+)?(?:the|our)\s+(?:baseline|default|standard|primary|main)(?:\s+(?P<what>\w+))?\b"
)
_AKA = re.compile(rf"(?P<a>{_LEAD})\s*(?:\(|,)?\s*(?:aka|a\.k\.a\.|also known as|also called)\s+(?P<b>{_NAME})")
_WORKS_ON = re.compile(
    rf"{_SUBJ}\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:now\s+|currently\s+|still\s+)?(?:working|works|work)\s+on\s+(?P<o>{_NAME})"
)
_EVENTS = re.compile(
    rf"{_SUBJ}\s+(?:just\s+|finally\s+|recently\s+|also\s+)?(?P<p>adopted|joined|visited|started|launched|released|"
    rf"won|bought|finished|attended|hired|left|went to|signed up for)\s+(?P<o>{_NAME})"
)


# Words each pattern above cannot match without (its verbs, as written in it): a sentence holding
# none of them is not run through the pattern, which tries every position of the sentence.
_MOVE_WORDS = ("moved", "migrated", "switched", "changed")
_USES_WORDS = ("use", "using", "run on", "runs on", "relies on", "rely on", "depends on")
_OWNS_WORDS = ("own", "maintains", "is responsible for")  # "owned" for _OWNED too
_LOCATED_WORDS = ("moved to", "relocated to", "live", "is located in", "is based in")
_BASELINE_WORDS = ("baseline", "default", "standard", "primary", "main")
_WORKS_WORDS = ("working on", "works on", "work on")
_AKA_WORDS = ("aka", "a.k.a.", "also known as", "also called")
_EVENT_WORDS = (
    "adopted", "joined", "visited", "started", "launched", "released", "won", "bought", "finished",
    "attended", "hired", "left", "went to", "signed up for",
)  # fmt: skip


def _says(sentence: str, words: tuple[str, ...]) -> bool:
    return any(word in sentence for word in words)


def extract(text: str, path: str = "", note_date: str | None = None) -> list[Extracted]:
    """Every fact ``text`` states, in line order. ``path`` gives the note's date (``daily/<day>.md``)
    unless ``note_date`` is given."""
    return extract_lines(text.splitlines(), path, note_date)[0]


def extract_text(text: str, path: str = "") -> tuple[list[Extracted], Position]:
    """:func:`extract`, and where its reading stopped (for :func:`extract_lines` ``after`` it)."""
    return extract_lines(text.splitlines(), path)


def extract_lines(
    lines: list[str], path: str = "", note_date: str | None = None, *, after: Position | None = None
) -> tuple[list[Extracted], Position]:
    """The facts ``lines`` state, and where the reading stopped. With ``after`` (where a reading of
    the first ``after.lines`` of them stopped), only the lines after those are read (and the rows
    of a table running on into them), with the headings, code fence and note date in force there:
    the facts a reading of all of them finds on those lines."""
    known = 0  # lines whose facts were given before
    if after is not None:
        n, headings, fenced, note_date = after.resumes_at, list(after.headings), after.fenced, after.note_date
        known = after.lines
    else:
        if note_date is None:
            found = _DATE.search(path)
            note_date = found.group(1) if found else None
        n, headings, fenced = 0, [], False
    out: list[Extracted] = []
    table = -1
    while n < len(lines):
        line = lines[n]
        n += 1
        table = -1
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2).strip()
            headings = [h for h in headings if h[0] < level] + [(level, title)]
            if note_date is None and (dated := _DATE.search(title)):
                note_date = dated.group(1)
            continue
        if line.lstrip().startswith("|"):
            start = n - 1
            rows, n = _table(lines, start)
            out += [f for f in _table_facts(rows, note_date) if f.line > known]
            table = start if n == len(lines) else -1
            continue
        out += _line_facts(line, n, headings, note_date)
    last = lines[-1] if lines else ""
    return out, Position(len(lines), last, tuple(headings), fenced, note_date, table)


def _line_facts(line: str, number: int, headings: list[tuple[int, str]], note_date: str | None) -> list[Extracted]:
    speaker = headings[-1][1] if headings and headings[-1][0] >= 3 and _SPEAKER.match(headings[-1][1]) else None
    key_value = _KEY_VALUE.match(line)
    if (
        key_value
        and headings
        and len(key_value.group("v").split()) <= 8
        and " " not in key_value.group("k").strip()[:1]
    ):
        subject = _clean_heading(headings[-1][1])
        value = key_value.group("v").strip().rstrip(".")
        key = key_value.group("k").strip().lower()
        if subject and key not in ("note", "notes", "summary", "todo", "see", "why") and not _DATE.fullmatch(value):
            return [Extracted(subject, key, value, number, line.strip(), _date_in(line) or note_date, functional=True)]
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).replace("**", "").replace("`", "")
    out: list[Extracted] = []
    for sentence in _SENTENCE.split(text):
        if len(sentence) <= MAX_SENTENCE:  # a longer run is not a sentence stating a fact
            out += _sentence_facts(sentence, number, speaker, _date_in(sentence) or note_date)
    return out


def _sentence_facts(sentence: str, line: int, speaker: str | None, when: str | None) -> list[Extracted]:
    facts: list[Extracted] = []
    said = sentence
    sentence = _ASIDE.sub("", sentence)  # "The auth module, which handles login, is owned by Priya."

    def add(s: str, p: str, o: str, *, replaces: str | None = None, functional: bool = False) -> None:
        s, o = _subject(s, speaker), _name(o)
        if s and o and _name(s) != o:
            facts.append(Extracted(s, p, o, line, said.strip(), when, replaces and _name(replaces), functional))

    if _says(sentence, _MOVE_WORDS):
        for m in _MOVE.finditer(sentence):
            add(m["s"], "uses", m["b"], replaces=m["a"], functional=True)
            add(m["b"], "replaced", m["a"])
    if "replaced" in sentence:
        for m in _REPLACE_WITH.finditer(sentence):
            add(m["s"], "uses", m["b"], replaces=m["a"], functional=True)
            add(m["b"], "replaced", m["a"])
        if not facts:
            for m in _REPLACED.finditer(sentence):
                add(m["b"], "replaced", m["a"])
    if _says(sentence, _USES_WORDS):
        for m in _USES.finditer(sentence):
            add(m["s"], "uses", m["o"], functional=True)
    if _says(sentence, _OWNS_WORDS):
        for m in _OWNS.finditer(sentence):
            add(m["o"], "owner", _subject(m["s"], speaker), functional=True)
        for m in _OWNED.finditer(sentence):
            add(m["o"], "owner", m["s"], functional=True)
    if _says(sentence, _LOCATED_WORDS):
        for m in _LOCATED.finditer(sentence):
            add(m["s"], "located in", m["o"], functional=True)
    if _says(sentence, _BASELINE_WORDS):
        for m in _BASELINE.finditer(sentence):
            add("we", "uses", m["o"], functional=True)
    if _says(sentence, _WORKS_WORDS):
        for m in _WORKS_ON.finditer(sentence):
            add(m["s"], "works on", m["o"])
    if _says(sentence, _AKA_WORDS):
        for m in _AKA.finditer(sentence):
            add(m["a"], "alias", m["b"])
    if _says(sentence, _EVENT_WORDS):
        for m in _EVENTS.finditer(sentence):
            add(m["s"], m["p"], m["o"])
    return list(dict.fromkeys(facts))


def _subject(raw: str, speaker: str | None) -> str:
    word = raw.strip().casefold()
    if word in ("i", "we", "our team", "the team"):
        return speaker if speaker else "we"
    return _name(raw)


def _name(raw: str) -> str:
    """A name as written, without the words before a break ("he said the queue" -> "queue"), a
    leading article, an adverb at either end ("billing service currently" -> "billing service") or
    a role before a proper name ("designer Zoe" -> "Zoe"); "" for a pronoun, a bare number or
    punctuation alone."""
    words = raw.strip().strip(" '\".,;:!?").split()
    cut = max((i + 1 for i, w in enumerate(words) if w.casefold() in _BREAKS), default=0)
    words = re.sub(r"^(?:the|our|a|an|my|their)\s+", "", " ".join(words[cut:]), flags=re.IGNORECASE).split()
    while words and words[-1].casefold() in _ADVERBS:
        words.pop()
    while words and words[0].casefold() in _ADVERBS:
        words.pop(0)
    roles = 0
    while roles < len(words) - 1 and words[roles].casefold() in _ROLES:
        roles += 1
    if roles and words[roles][:1].isupper():
        words = words[roles:]
    name = " ".join(words)
    if not name or name.casefold() in _PRONOUNS or name.replace(".", "").isdigit() or not re.search(r"\w", name):
        return ""
    return name


def _clean_heading(title: str) -> str:
    return _name(_DATE.sub("", title).strip(" -:()"))


def _date_in(text: str) -> str | None:
    found = _DATE.search(text)
    return found.group(1) if found else None


def _table(lines: list[str], start: int) -> tuple[list[tuple[int, list[str]]], int]:
    """The table rows from ``start`` (1-based line, cells), and the index of the line after it."""
    rows: list[tuple[int, list[str]]] = []
    n = start
    while n < len(lines) and lines[n].lstrip().startswith("|"):
        cells = [c.strip().replace("**", "") for c in lines[n].strip().strip("|").split("|")]
        rows.append((n + 1, cells))
        n += 1
    return rows, n


def _table_facts(rows: list[tuple[int, list[str]]], note_date: str | None) -> Iterator[Extracted]:
    if len(rows) < 3 or not all(re.fullmatch(r":?-{2,}:?", c) for c in rows[1][1]):
        return
    header = [h.casefold() for h in rows[0][1]]
    for line, cells in rows[2:]:
        subject = _name(cells[0]) if cells else ""
        if not subject:
            continue
        for key, cell in zip(header[1:], cells[1:], strict=False):
            value = cell.strip()
            if key and value and value not in ("-", "—") and len(value.split()) <= 8:
                text = " | ".join(cells)
                yield Extracted(subject, key, value, line, text, _date_in(text) or note_date, functional=True)
