"""Facts whose value changed: the older line is superseded by the newer one, never deleted.

A fact line states a value of a subject: "The staging db is db-stage-3.", later "The staging db
moved to db-stage-9." (``claim``). Its subject is the words before the verb (articles aside); its
value the words after it. A newer line about the same subject contradicts an older one when the
values differ and either the newer line says the value changed ("moved to", "switched to", "was
raised to", "is now", "replaced by" ...), or both values name the same relation before they differ
("owned by Alice" / "owned by Bob", "cut as release/2026.1" / "cut as release/2026.2"), or both are
a short name or identifier ("Priya" / "Marcus"). Two lines about one subject that say different
kinds of things ("deployed on Fridays" / "deployed with helm") are both kept: precision first. So
are two roles of one person over two things, with no change word: "Chen is the owner of gateway" /
"Chen is the owner of catalog" (a subject that is one name, never written in lower case, whose
values share all but what follows "of" or "for": a person holds a role over many things at once).

``superseded`` decides, over every dated line the job knows (the period's notes, the notes still in
``daily/``, the earlier summaries and the evergreen file's ``## Consolidated`` bullets), which lines
are no longer current: a line is superseded when a contradicting line was said after the last time
it was said. The job then moves superseded lines of summaries into their ``## Superseded`` section
(``retire``), drops them from ``## Consolidated``, and lists the lines that changed a value under
``## Changed`` in the summary of the week they were said, so the current value is never cut by a
summary's budget. Search ranks lines under a ``Superseded`` heading below current ones. A summary
line that quotes a superseded statement whole after its sender and time retires with it
(``retired_by``), when every note the summary names is older than the newer line.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from sidecar.consolidate.periods import day_of
from sidecar.consolidate.promote import COMMENT, as_item, normalised, title_of
from sidecar.consolidate.text import LINE_CACHE
from sidecar.scanner.sections import split_sections
from sidecar.write.dedup import LIST_MARKER

__all__ = [
    "CHANGED",
    "SUPERSEDED",
    "Claim",
    "Said",
    "changed_section",
    "claim",
    "contradicts",
    "in_sections",
    "retire",
    "retired_by",
    "summary_lines",
    "superseded",
    "superseded_line",
]

SUPERSEDED = "Superseded"
CHANGED = "Changed"
MAX_SUBJECT_WORDS = 8
MAX_CLAIM_CHARS = 400
MAX_LATER = 500  # the later lines about one subject a line is checked against: a run stays linear
UNITS_PER_SECTION = 1
#: The fewest words a statement quoted whole holds for the quoting line to retire with it.
WRAPPED_WORDS = 4
#: The comments naming the notes a summary's sections came from, and the days they name.
_FROM = re.compile(r"<!--\s*from\s(.*?)-->", re.DOTALL)
_FROM_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\.md\b")
_LEAD_MARK = re.compile(r"[\"“‘']")
#: A quote's lead-in ends in its opening quote mark: '> Noor in #ledger, 12:34: "'.
_LEAD_IN = re.compile(r"[\"“‘'][ \t]*$")
#: Words a lead-in may share with the newer line without saying its change.
_LEAD_IN_WORDS = frozenset(str.split("a an the and or of to in on at by for with from is are was we i it"))
_WORD = re.compile(r"\w+")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_CHANGE = (
    r"(?:(?:moved|switched|changed|migrated|raised|lowered|increased|decreased|reduced|bumped|upgraded|"
    r"downgraded|renamed|updated|reassigned|handed\s+over|set)\s+(?:from\s+.+?\s+)?to|replaced\s+(?:by|with)|"
    r"became|becomes)"
)
_COPULA = r"(?:is|are|was|were|has\s+been|have\s+been)"
_STATEMENT = re.compile(
    rf"^(?P<subject>.+?)\s+(?P<verb>{_COPULA}\s+(?:now\s+)?(?:{_CHANGE}\s+)?|(?:now\s+)?{_CHANGE}\s+)"
    rf"(?P<value>\S.*?)[\s.!;]*$",
    re.IGNORECASE,
)
_CHANGED = re.compile(rf"\bnow\b|{_CHANGE}", re.IGNORECASE)
_ARTICLES = frozenset({"the", "a", "an", "our", "my", "your", "their", "its"})
_NOT_SUBJECTS = frozenset(
    str.split(
        "it this that these those there here he she they we i you what which who everything nothing something "
        "anything all none some each both one"
    )
)
_RELATION = frozenset(str.split("at on in by to as with for from of under via inside behind"))
_NAME_LIKE = re.compile(r"[A-Z0-9/:._@#-]")
#: The last shared word of two values that makes what follows it a thing the role is held over.
_OVER = frozenset({"of", "for"})
_LOWER_WORD = re.compile(r"\b[a-z][a-z'-]*\b")


@dataclass(frozen=True, slots=True)
class Claim:
    """What a fact line states: the subject's words, the value's words, whether the line says the
    value changed, and whether the value is a short name or identifier."""

    subject: tuple[str, ...]
    value: tuple[str, ...]
    changed: bool
    name_like: bool


@dataclass(frozen=True, slots=True)
class Said:
    """A fact line as the job found it: its text, the file that holds it, and when it was said
    (the day, then its order that day)."""

    text: str
    where: str
    when: tuple[date, int]
    claim: Claim | None


@lru_cache(maxsize=LINE_CACHE)
def claim(line: str) -> Claim | None:
    """The claim a one-sentence fact line makes, or None when it makes none this module reads."""
    if len(line) > MAX_CLAIM_CHARS:
        return None  # prose or pasted output, not one fact (and the pattern is slow on long lines)
    text = " ".join(LIST_MARKER.sub("", COMMENT.sub(" ", line)).split())
    if not text or "\n" in line or re.search(r"[.!?]\s+\S", text) or text.endswith("?"):
        return None
    match = _STATEMENT.match(text)
    if match is None:
        return None
    subject_text = match.group("subject")
    if re.search(r"[,;:()\"`]", subject_text):
        return None  # a clause or a label, not a subject
    words = [w.lower() for w in _WORD.findall(subject_text)]
    while words and words[0] in _ARTICLES:
        words.pop(0)
    if not words or len(words) > MAX_SUBJECT_WORDS or words[0] in _NOT_SUBJECTS:
        return None
    value_text = match.group("value")
    value = tuple(w.lower() for w in _WORD.findall(value_text))
    if not value:
        return None
    changed = bool(_CHANGED.search(match.group("verb")))
    name_like = len(value_text.split()) <= 2 and bool(_NAME_LIKE.search(value_text))
    return Claim(tuple(words), value, changed, name_like)


def contradicts(older: Claim, newer: Claim, lower: Collection[str] | None = None) -> bool:
    """Whether ``newer`` states a different value for ``older``'s subject (module docstring).
    ``lower``: the words the notes write in lower case somewhere (a subject of one word outside
    them is a name); without it, no subject is read as a name."""
    if older.subject != newer.subject or older.value == newer.value:
        return False
    if newer.changed or (older.name_like and newer.name_like):
        return True
    shared = 0
    for a, b in zip(older.value, newer.value, strict=False):
        if a != b:
            break
        shared += 1
    if not 0 < shared < min(len(older.value), len(newer.value)):
        return False
    named = lower is not None and len(older.subject) == 1 and older.subject[0] not in lower
    if named and older.value[shared - 1] in _OVER:
        return False  # one person's role over two things (module docstring)
    return shared >= 2 or older.value[shared - 1] in _RELATION


def superseded(said: Sequence[Said]) -> dict[str, Said]:
    """The key of every line no longer current -> the first line said after it (after the last time
    it was said) that contradicts it: where and when its value changed."""
    by_subject: dict[tuple[str, ...], list[Said]] = {}
    for item in said:
        if item.claim is not None:
            by_subject.setdefault(item.claim.subject, []).append(item)
    lower = _lower_words(s.text for s in said)
    out: dict[str, Said] = {}
    for items in by_subject.values():
        items.sort(key=lambda s: s.when)
        keys = [normalised(item.text) for item in items]
        last: dict[str, int] = {key: n for n, key in enumerate(keys)}  # the last time each line was said
        for line_key, n in last.items():
            old = items[n].claim
            later = range(n + 1, min(len(items), n + 1 + MAX_LATER))
            newer = next(
                (
                    items[m]
                    for m in later
                    if keys[m] != line_key
                    and old is not None
                    and (c := items[m].claim) is not None
                    and contradicts(old, c, lower)
                ),
                None,
            )
            if newer is not None:
                out[line_key] = newer
    return out


def _lower_words(texts: Iterable[str]) -> frozenset[str]:
    """The words ``texts`` write in lower case somewhere: a word outside them is a name."""
    return frozenset(word for text in texts for word in _LOWER_WORD.findall(text))


def summary_lines(text: str) -> Iterable[tuple[str, str]]:
    """(section title, line) for every bullet or text line of a summary file; a fenced block is
    an example, not a fact, and its lines are none."""
    for section in split_sections(text):
        title = section.heading.rsplit(" > ", 1)[-1]
        fenced = False
        for raw in text[section.start : section.end].splitlines():
            stripped = raw.strip()
            if _FENCE_LINE.match(raw):
                fenced = not fenced
            elif stripped and not fenced and not stripped.startswith(("#", "<!--")):
                yield title, stripped


def retire(text: str, lines: Mapping[str, Said]) -> str:
    """``text`` (a summary) with its lines whose key is in ``lines`` moved under ``## Superseded``
    at its end, each with a comment naming when and where the newer value was said. Lines already
    there stay; a text with nothing to move is returned as it is."""
    if not lines:
        return text
    kept: list[str] = []
    moved: list[str] = []
    # a statement said inside another line retires with it only in a summary of notes all older
    # than the newer line (said again after the change, the old value may stand again)
    named = (day_of(name) for name in _FROM_DAY.findall(" ".join(_FROM.findall(text))))
    newest = max((day for day in named if day is not None), default=None)
    current = ""
    fenced = False
    for raw in text.splitlines(keepends=True):
        heading = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*$", raw)
        if heading:
            current = heading.group(1)
        body = raw.strip()
        if _FENCE_LINE.match(raw):
            fenced = not fenced
            kept.append(raw)
            continue
        newer = (
            retired_by(body, lines, before=newest)
            if body and not fenced and current != SUPERSEDED and not body.startswith(("#", "<!--"))
            else None
        )
        if newer is None:
            kept.append(raw)
            continue
        moved.append(superseded_line(body, newer))
    if not moved:
        return text
    out = _without_empty_headings("".join(kept))
    if not re.search(rf"^## {SUPERSEDED}\s*$", out, re.M):
        out = out.rstrip("\n") + f"\n\n## {SUPERSEDED}\n"
    return out.rstrip("\n") + "\n" + "".join(moved)


def retired_by(line: str, lines: Mapping[str, Said], *, before: date | None = None) -> Said | None:
    """The newer line that retires ``line`` (a summary's, as written): the one ``lines`` holds for
    its key, or for a statement it quotes whole after its sender and time ('> Noor in #ledger,
    12:34: "The ledger primary lives in eu-west-1."'): the same statement, said again, and as
    stale. The change search never reads a quote as a statement of its own (a quote is no change
    and no neighbour of one), so without this it stood current beside the retired statement. A
    statement after a label of the writer's ("Handover note: the lagoon is emptied at 1.8 m") is
    read by the change search as said that day, and is left to it. Not when the lead-in says a word
    of the newer line the statement lacks (the change said beside the old statement quoted whole).
    ``before``: the newest day of the notes ``line`` comes from; a quote retires only with a newer
    line said after that day (none without it)."""
    key = normalised(line)
    if (newer := lines.get(key)) is not None or before is None or not _LEAD_MARK.search(line):
        return newer
    words = key.split(" ")
    for at in range(1, len(words) - WRAPPED_WORDS + 1):
        if (newer := lines.get(" ".join(words[at:]))) is None:
            continue
        said = set(words[at:])
        fresh = set(normalised(newer.text).split(" ")) - said - _LEAD_IN_WORDS
        lead = words[:at]
        if newer.when[0] > before and not fresh.intersection(lead) and _LEAD_IN.search(_lead_in(line, words[at:])):
            return newer
    return None


def _lead_in(line: str, statement: list[str]) -> str:
    """What ``line`` says before the words ``statement`` that end it ("" when they do not)."""
    said = " ".join(statement)
    for found in reversed(list(re.finditer(rf"(?<!\w){re.escape(statement[0])}(?!\w)", line, re.IGNORECASE))):
        if normalised(line[found.start() :]) == said:
            return line[: found.start()]
    return ""


def _without_empty_headings(text: str) -> str:
    """``text`` without the ``##`` and ``###`` headings left with nothing under them: the next line
    but blank lines and comments is a heading of their level or above, or there is none. A comment
    after such a heading stays (it names the notes of the lines after it); ``## Superseded`` stays,
    its lines come after it."""
    lines = text.splitlines(keepends=True)
    out = []
    for n, line in enumerate(lines):
        level = len(line) - len(line.lstrip("#"))
        if level in (2, 3) and line[level : level + 1] == " " and line.strip() != f"## {SUPERSEDED}":
            after = next((ln for ln in lines[n + 1 :] if ln.strip() and not COMMENT.fullmatch(ln.strip())), "#")
            if after.startswith("#") and len(after) - len(after.lstrip("#")) <= level:
                continue
        out.append(line)
    return "".join(out)


def superseded_line(text: str, newer: Said) -> str:
    """A line as it stands under ``## Superseded``: a list item (its comments dropped) with a
    comment naming when and where the newer value was said."""
    return f"{as_item(COMMENT.sub('', text))} <!-- superseded {newer.when[0].isoformat()} by {newer.where} -->\n"


def changed_section(lines: Sequence[Said], replaced: Mapping[str, Sequence[str]] | None = None) -> str:
    """The ``## Changed`` section of a summary: the week's lines that changed a value, as said,
    each with a comment naming what it replaced (``replaced``: line key -> the superseded lines'
    keys), so a search in the words of the old statement finds the current one."""
    if not lines:
        return ""
    items = []
    for s in lines:
        was = "; ".join((replaced or {}).get(normalised(s.text), []))
        items.append(f"{as_item(COMMENT.sub('', s.text))}{f' <!-- was: {was} -->' if was else ''}\n")
    body = in_sections("".join(items))
    return f"\n## {CHANGED}\n<!-- from {', '.join(sorted({s.where for s in lines}))} -->\n{body}"


def in_sections(text: str, mark: str = "###") -> str:
    """``text``'s units (a line with its indented continuation, a fenced block), ``UNITS_PER_SECTION``
    to a heading (``mark``: its level) named for the first one's first words: a search ranks a fact
    on its own words, not on a kilobyte of a week's facts (where one fact's words and its
    neighbours' make a false match). The cost is context: a hit is one line, which on conversation
    (LoCoMo) finds fewer evidence turns in a top five than kilobyte chunks do."""
    units: list[list[str]] = []
    fenced = False
    for line in text.splitlines():
        if not line.strip() and not fenced:
            continue
        starts = not fenced and not line[:1].isspace()
        if _FENCE_LINE.match(line):
            fenced = not fenced
        if starts or not units:
            units.append([])
        units[-1].append(line.rstrip() if units[-1] else line.strip())
    groups = [units[i : i + UNITS_PER_SECTION] for i in range(0, len(units), UNITS_PER_SECTION)]
    return "".join(f"{mark} {_unit_title(g[0])}\n" + "".join("\n".join(u) + "\n" for u in g) for g in groups)


def _unit_title(unit: list[str]) -> str:
    """A fenced block is titled by its first line of content, anything else by its first line."""
    if _FENCE_LINE.match(unit[0]):
        return title_of(next((ln for ln in unit[1:] if ln.strip() and not _FENCE_LINE.match(ln)), "Example"))
    return title_of(unit[0])
