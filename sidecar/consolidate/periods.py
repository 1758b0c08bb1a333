"""Which daily notes a consolidation rolls up, grouped by ISO week, and the lines they hold.

A daily note is ``daily/YYYY-MM-DD.md``; once rolled up it lives at ``archive/daily/YYYY-MM-DD.md``.
A week is rolled up only when the whole of it is old enough (every day before the cutoff), so a
week is summarised once, from all its days, and the days still in the prompt stay where they are.

The text of a day is read the same way before and after it is archived (``day_text``): the daily
copy, the archived copy, or both joined when a day was written again after its archiving, so a
run resumed half-way through archiving summarises exactly what an uninterrupted run would.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

from sidecar.consolidate.extractive import sentences
from sidecar.consolidate.text import LINE_CACHE, statements
from sidecar.scanner.sections import split_sections
from sidecar.write.dedup import tokens
from sidecar.write.durable import read_file

__all__ = [
    "ARCHIVE_DIR",
    "DAILY_DIR",
    "JOINT",
    "Line",
    "apart_parts",
    "archive_rel",
    "as_context",
    "daily_notes",
    "day_of",
    "day_text",
    "eligible_days",
    "file_names",
    "note_day",
    "period_bounds",
    "period_of",
    "said_inside",
    "section_lines",
    "sentence_parts",
    "statement_text",
    "week_lines",
]

DAILY_DIR = "daily"
ARCHIVE_DIR = "archive/daily"
_DAY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_DATE_HEADING = re.compile(r"^\d{4}-\d{2}-\d{2}\b.*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}[ \t]")
#: Where a sentence's clauses join: a comma, semicolon or colon, a spaced dash, an opening bracket
#: (``routine.apart`` cuts a routine line at one, ``apart_parts`` reads it so).
JOINT = re.compile(r"[,;:]\s+|\s+[-–—]\s+|\s+\(")
_MARKER = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|>\s*)")
_NESTED = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SUBJECT = re.compile(r"^>\s*subject:\s*(?:(?:re|fwd?|aw)\s*:\s*)*(?P<subject>.*)$", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:\*\*|__)(?P<label>[^*_]{2,60}?):?(?:\*\*|__):?\s*$|^(?P<lead>[^|>#\s-][^|>]{1,60}):\s*$")
_ANSWER = re.compile(r"^(?P<marker>\s*(?:(?:[-*+]|\d+[.)])\s+)?)A\s*(?:\([^)]{1,40}\))?:\s+(?=\S)")
#: The most words of a context kept (``line_context``): a label, not a sentence.
CONTEXT_WORDS = 8


@dataclass(frozen=True, slots=True)
class Line:
    """One fact-bearing unit of a daily note: a line, or a fenced block kept whole, under its
    section ``heading`` (dates left out of the path), from ``source`` (``daily/YYYY-MM-DD.md``).
    ``context`` is what the line is read under inside its section (``line_context``): a nested
    bullet's parent, a table row's header, a quoted email's subject, a bold label's words."""

    text: str
    source: str
    heading: str
    context: str = ""


@lru_cache(maxsize=4096)
def period_of(day: date) -> str:
    """The ISO week a day belongs to, ``2026-W03``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def period_bounds(period: str) -> tuple[date, date]:
    """The Monday and Sunday of an ISO week named like ``2026-W03``."""
    year, week = period.split("-W")
    monday = date.fromisocalendar(int(year), int(week), 1)
    return monday, monday + timedelta(days=6)


def note_day(source: str) -> date | None:
    """The day of a daily note's path (``daily/2026-03-01.md``), or None for any other path."""
    directory, _, name = source.rpartition("/")
    return day_of(name) if directory == DAILY_DIR else None


@lru_cache(maxsize=LINE_CACHE)
def day_of(name: str) -> date | None:
    """The day a daily note's file name stands for; None for another name or a day that is not
    one (``2026-02-30.md``)."""
    match = _DAY_NAME.match(name)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def claimed_rel(source: str) -> str:
    """Where a note waits, taken out of ``daily/`` in one rename, while it is archived: a write to
    the day in that moment makes a new note in ``daily/`` (a later run rolls it up) instead of
    landing in a file about to be removed."""
    return f".consolidate/claimed/{source.rsplit('/', 1)[-1]}"


def archive_rel(source: str) -> str:
    """Where a rolled-up daily note is kept: ``daily/x.md`` -> ``archive/daily/x.md``."""
    return f"{ARCHIVE_DIR}/{source.rsplit('/', 1)[-1]}"


def eligible_days(root: Path, *, since: date | None, cutoff: date) -> dict[str, list[str]]:
    """The daily notes to roll up, by period: dated from ``since`` on and in a week that ends
    before ``cutoff``; each period's sources sorted by date."""
    periods: dict[str, list[str]] = {}
    for source, day in daily_notes(root):
        if (since is not None and day < since) or period_bounds(period_of(day))[1] >= cutoff:
            continue
        periods.setdefault(period_of(day), []).append(source)
    return {period: sorted(sources) for period, sources in sorted(periods.items())}


def daily_notes(root: Path) -> Iterator[tuple[str, date]]:
    """Every daily note in ``daily/`` (its path) with its day, by name."""
    for name in file_names(root / DAILY_DIR):
        if (day := day_of(name)) is not None:
            yield f"{DAILY_DIR}/{name}", day


def file_names(directory: Path) -> list[str]:
    """The names of the regular files (not links) in ``directory``, sorted; none when it cannot be read."""
    try:
        return sorted(entry.name for entry in directory.iterdir() if entry.is_file() and not entry.is_symlink())
    except OSError:
        return []


def day_text(root: Path, source: str) -> bytes | None:
    """A daily note's bytes whether or not it has been archived (see the module docstring)."""
    live = merged(read_file(root, source), read_file(root, claimed_rel(source)))
    archived = read_file(root, archive_rel(source))
    if archived is None and (packed := read_file(root, archive_rel(source) + ".gz")) is not None:
        archived = gzip.decompress(packed)  # compressed by a run killed before it cleared its plan
    return merged(live, archived)


def merged(daily: bytes | None, archived: bytes | None) -> bytes | None:
    """The archive copy a day should have: the daily copy joined to what is already archived,
    unless the archive already holds it."""
    if daily is None or archived is None:
        return archived if daily is None else daily
    joint = b"\n" if archived.endswith(b"\n") else b"\n\n"  # one blank line between the two
    if archived == daily or archived.endswith(joint + daily):
        return archived
    return archived + joint + daily


@lru_cache(maxsize=LINE_CACHE)
def _statements(raw: str) -> tuple[str, ...]:
    """A note line's statements that hold a word (``text.statements``, an answer's label off)."""
    return tuple(s for s in _answered(statements(raw)) if _worded(s))


@lru_cache(maxsize=LINE_CACHE)
def _worded(text: str) -> bool:
    """Whether ``text`` holds a word (a run reads each note's lines many times)."""
    return bool(tokens(text))


def section_lines(source: str, text: str) -> Iterable[Line]:
    """The fact-bearing lines of a note, in order: headings, blank lines and lines without a word
    (rules, lone markers) are structure; a fenced block is one unit; a paragraph written on one
    line is its sentences (``text.statements``), each a statement of its own: a fact said as the
    last sentence of a routine paragraph recurs, changes and is kept as a line does."""
    for section in split_sections(text):
        heading = _heading_label(section.heading)
        block: list[str] = []
        context = _Context()
        for raw in text[section.start : section.end].splitlines():
            if block:
                block.append(raw)
                if _FENCE.match(raw):
                    yield Line("\n".join(block), source, heading)
                    block = []
            elif _FENCE.match(raw):
                block = [raw]
            elif not _HEADING.match(raw) and _worded(raw):
                said = context.of(raw)
                yield from (Line(s, source, heading, said) for s in _statements(raw))
            else:
                context.of(raw)
        if block:  # a fence left open: its lines are content all the same
            yield Line("\n".join(block), source, heading)


def _answered(parts: list[str]) -> list[str]:
    """A line's statements with an answer's label taken off where a question precedes it
    ("Q (Dana): what is the staff meeting? A: Staff meeting is Monday lunchtime."): the answer
    states the fact as its own line would, so it recurs, changes and is superseded with it."""
    return [
        _ANSWER.sub(r"\g<marker>", part, count=1) if n and parts[n - 1].rstrip().endswith("?") else part
        for n, part in enumerate(parts)
    ]


class _Context:
    """What each line of a section is read under (``Line.context``), kept as its lines are read in
    order: the bullets a nested bullet sits under ("Quayside House:" over "  - lift: Apex Lifts"), a
    table's header row over its rows, a quoted email's subject over its body, a bold label or a
    lead-in ending in a colon ("**Quayside House**", "Contractors:") over the list that follows it,
    until a blank line. A line indented under a bullet without a marker of its own goes on that
    bullet (a record's fields, "- kind: vendor" / "  name: Greenleaf Produce" / "  phone: ..."):
    it is read under the bullet and the first such line of it, which names the record. None of it
    is in the line's own words, and a line read alone (a summary's section, a search hit) would
    lose it."""

    def __init__(self) -> None:
        self.parents: list[tuple[int, str]] = []  # (indent, text) of the open bullets
        self.first = ""  # the first line going on the innermost open bullet (``of``)
        self.header = ""
        self.subject = ""
        self.label = ""

    def of(self, raw: str) -> str:
        """The context of ``raw``, the section's next line, and what it opens for the lines after it."""
        if not raw.strip():
            self.parents, self.header, self.label, self.first = [], "", "", ""
            return ""
        stripped = raw.strip()
        if stripped.startswith("|"):
            return self._row(stripped)
        self.header = ""
        if stripped.startswith(">"):
            if (subject := _SUBJECT.match(stripped)) is not None:
                self.subject = _clipped(subject["subject"])
                return ""
            return self.subject
        self.subject = ""
        if (label := _LABEL.match(raw)) is not None and not _NESTED.match(raw):
            self.label = _clipped(label["label"] or label["lead"])
            self.parents = []
            return ""
        nested = _NESTED.match(raw)
        if nested is None:
            indent = len(raw.expandtabs(4)) - len(raw.expandtabs(4).lstrip())
            if self.parents and indent > self.parents[-1][0]:  # it goes on the innermost open bullet
                said = self._under([text for _, text in self.parents] + ([self.first] if self.first else []))
                self.first = self.first or _clipped(stripped)
                return said
            self.parents, self.first = [], ""
            return self.label
        indent = len(nested["indent"].expandtabs(4))
        while self.parents and self.parents[-1][0] >= indent:
            self.parents.pop()
        said = self._under([text for _, text in self.parents])
        self.parents.append((indent, _clipped(nested["text"])))
        self.first = ""
        return said

    def _under(self, parts: list[str]) -> str:
        return _clipped(" > ".join([*([self.label] if self.label else []), *parts]))

    def _row(self, row: str) -> str:
        if _TABLE_RULE.match(row):
            return ""
        if not self.header:
            self.header = _clipped(" / ".join(cell.strip() for cell in row.strip("|").split("|") if cell.strip()))
            return ""
        return self.header


def as_context(text: str) -> str:
    """``text`` (a line, its list marker aside) as a context of the lines under it reads it
    (``Line.context``): "- **Quayside House:**" -> "Quayside House"."""
    return _clipped(_MARKER.sub("", text.strip(), count=1))


def _clipped(text: str) -> str:
    """A context's words, at most ``CONTEXT_WORDS`` of them, without markup or a closing colon."""
    words = text.replace("**", "").replace("`", "").split()
    return " ".join(words[:CONTEXT_WORDS]).rstrip(":;,.")


def week_lines(sources: Iterable[str], texts: dict[str, str]) -> list[Line]:
    """A week's notes' lines (``section_lines``), each note's own title taken off its headings: a
    heading only one note of the week has ("Tuesday sync, March 3"), over sections that another
    note's own title heads too ("Wednesday sync, March 4 > Decisions"), names that note, not a
    topic. Its lines go under the rest of their heading ("Decisions"; "Notes" when none is left),
    so a week of minutes is summarised by its sections, not a section per day with a budget each.
    A heading with no section under it ("Quayside House" over its bullets) names a topic, however few
    notes have it: its lines keep it, so the summary keeps "lift: Apex Lifts" under "Quayside House"."""
    lines = [line for source in sources for line in section_lines(source, texts[source])]
    notes: dict[str, set[str]] = {}
    titles: set[str] = set()  # the headings over sections of their own: a note's title may be one
    for line in lines:
        lead, _, below = line.heading.partition(" > ")
        notes.setdefault(lead, set()).add(line.source)
        if below:
            titles.add(lead)
    rest: dict[str, set[str]] = {}  # a heading without its one-note title -> the titles it was under
    for line in lines:
        lead, _, below = line.heading.partition(" > ")
        if len(notes[lead]) == 1 and lead in titles:
            rest.setdefault(below or "Notes", set()).add(lead)

    def label(heading: str) -> str:
        lead, _, below = heading.partition(" > ")
        joined = len(notes[lead]) == 1 and lead in titles and len(rest.get(below or "Notes", ())) > 1
        return (below or "Notes") if joined else heading

    return [Line(line.text, line.source, label(line.heading), line.context) for line in lines]


def sentence_parts(text: str) -> list[str]:
    """A line's sentences, each under the line's list marker (and task box or quote marker): how
    a week's summary writes a line it reads as its sentences (``weekly._week_lines``)."""
    marker = _MARKER.match(text)
    head = marker.group(0) if marker else ""
    return [f"{head}{part}" for part in sentences(text[len(head) :].strip())]


def apart_parts(text: str, at: tuple[int, int]) -> list[str]:
    """A routine line read apart where ``routine.apart`` says (``at``): as its sentences
    (``sentence_parts``) for ``(0, 0)``, else its mould up to ``at[0]`` and the statement said
    inside it from ``at[1]`` on, each under the line's list marker."""
    if at == (0, 0):
        return sentence_parts(text)
    marker = _MARKER.match(text)
    head = marker.group(0) if marker else ""
    said = text[at[1] :].strip()
    if "(" not in said and said.rstrip(".").endswith(")"):  # said inside brackets: "(reminder: ...)."
        said = said.rstrip(".")[:-1] + "."
    return [text[: at[0]].rstrip(), f"{head}{said}"]


@lru_cache(maxsize=LINE_CACHE)
def said_inside(text: str) -> tuple[str, ...]:
    """Every way ``apart_parts`` may cut ``text`` at one of its clause joints (its sentences too):
    the parts a summary may write of a note's line, for a later run to know them as the note's."""
    out = sentence_parts(text)
    for joint in JOINT.finditer(text):
        out += apart_parts(text, (joint.start(), joint.end()))
    return tuple(out)


def statement_text(text: str) -> str:
    """A note's text with each paragraph line written as its statements, one a line (fenced
    blocks as they are), for a reader that reads a note line by line as ``section_lines`` does."""
    out: list[str] = []
    fenced = False
    for raw in text.splitlines():
        if _FENCE.match(raw):
            fenced = not fenced
        out += [raw] if fenced or _FENCE.match(raw) or _HEADING.match(raw) else statements(raw) or [raw]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _heading_label(path: str) -> str:
    """The heading path without the date headings a daily note opens with; "Notes" when nothing is left."""
    parts = [part for part in path.split(" > ") if part and not _DATE_HEADING.match(part)]
    return " > ".join(parts) or "Notes"
