"""The statement inside what wraps a line: a fact or a rule written inside another wrapper each
day (a time of day, a lead-in naming where it came from, a trailing aside, a quote, a sentence
among others) is found as the run of the line's clauses (``text.views``) said across days, so it
recurs where the whole lines, each wrapped its own way, never do. The rule is general: no list
of wrapper phrases, only where a line's clauses end and how often each run of them is said."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from sidecar.consolidate.conduct import is_rule, key_text, obeys_someone, rule_said
from sidecar.consolidate.periods import Line
from sidecar.consolidate.reworded import Statement, statement
from sidecar.consolidate.routine import BOILERPLATE_SHARE, ROUTINE_LINES
from sidecar.consolidate.text import (
    CLAUSE_TRIM,
    MAX_CLAUSES,
    SIGNAL,
    View,
    clause_spans,
    holds_value,
    mould,
    normalised,
    reports_work,
    unstamped,
    views,
)
from sidecar.write.dedup import MIN_TOKENS

__all__ = [
    "MIN_SOURCES",
    "MIN_WEEKS",
    "MOULD_FILLS",
    "changed_later",
    "cores",
    "is_row",
    "row_cells",
    "rule_cores",
    "week_of",
]

#: Sources a statement is said in before it recurs (``promote.MIN_SOURCES``).
MIN_SOURCES = 3
#: Weeks a statement cut from its lines must span: said every day of one week is that week's status.
MIN_WEEKS = 2
#: Values a mould is written with before its lines are a chore written each day with other
#: details ("13 entries checked", "20 entries checked"), not a fact (a fact changed once has two).
MOULD_FILLS = 4
#: A sentence's end, whatever the case of the next word: a later line is read sentence by sentence
#: (a paragraph's other sentences hold other subjects' words and values).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def cores(lines: Sequence[Line], min_sources: int = MIN_SOURCES, *, whole: Collection[int] = ()) -> list[list[Line]]:
    """Each line as the statements it holds inside what wraps it, in order (a list of one line for
    each of ``lines``, or of its cores). A line said in ``min_sources`` sources in these words is
    itself; any other is cut to the runs of its clauses (``text.views``) said in ``min_sources``
    sources over ``MIN_WEEKS`` weeks, the runs said in the most sources first, then the longest,
    none overlapping another: "09:22 from the wiki: Spare patch leads live in cabinet K12 - worth
    remembering" and "08:04 per Ama, Spare patch leads live in cabinet K12" are each "Spare patch leads live
    in cabinet K12" once it is said on three days. A run cut from a line must name a value (``holds_value``:
    a lead-in or an aside said on many days names none), be said in fewer than a quarter of the
    notes (the writer's own wording is no fact), be said once at least as more than a lead-in or
    an aside (``View.wraps``: "Ama said on the bridge call:" before another fact each day), and
    not be a mould filled with ``MOULD_FILLS`` values or more ("13 entries checked", a chore whose
    details change). Any run, the line without its time included, must be no such mould; a line with a scanner finding or an order to obey
    someone is left whole, for the steps after to judge as it stands, and so is a line whose ``id``
    is in ``whole`` (a conversation's turn). Counted in one pass over the runs, so linear in the
    lines."""
    from sidecar.scanner.scan import verdict

    said_whole: dict[str, set[str]] = {}
    for ln in lines:
        said_whole.setdefault(normalised(ln.text), set()).add(ln.source)
    limit = max(ROUTINE_LINES, len({ln.source for ln in lines}) * BOILERPLATE_SHARE)
    counted = _Counted()
    found: list[list[View]] = []
    reports: set[int] = set()  # lines said word for word in as many sources that report what was done
    for ln in lines:
        # a line said word for word in as many sources is itself, unless it reports what was done
        # ("Noted again: The back door code is 4471."): the statement after it may recur, not the report
        said = len(said_whole[normalised(ln.text)]) >= min_sources
        if said and reports_work(unstamped(ln.text)):
            said = False
            reports.add(id(ln))
        row = is_row(ln.text)
        kept = "\n" in ln.text or id(ln) in whole or said
        runs = [] if kept else _cells(ln.text) if row else [*views(ln.text), *_complements(ln.text)]
        found.append(runs)
        for run in runs:
            counted.add(run, ln.source, normalised(ln.text))
    _within(lines, found, counted, min_sources)
    out = []
    for ln, runs in zip(lines, found, strict=True):
        body = normalised(unstamped(ln.text))
        standing = [run for run in runs if counted.standing(run, body, min_sources, limit)]
        if id(ln) in reports:  # only a statement the notes say inside other words too: the line's own is a report
            standing = [run for run in standing if len(counted.lines[normalised(run.text)]) > 1]
        chosen = _chosen(standing, counted.said)
        if not chosen and runs and row:
            chosen = _said_cell(ln.text)
        if not chosen or verdict(ln.text) is not None or obeys_someone(ln.text):
            out.append([ln])
        else:
            out.append([replace(ln, text=run.text) for run in chosen])
    return out


@dataclass(slots=True)
class _Counted:
    """The runs of a run's lines (``cores``): the sources each is said in, whether it is ever said
    as more than a wrapper, the values each mould (``text.mould``) is filled with, and whether
    lines of other words say it too."""

    said: dict[str, set[str]] = field(default_factory=dict)
    plain: set[str] = field(default_factory=set)
    fills: dict[str, set[str]] = field(default_factory=dict)
    weeks: dict[str, int] = field(default_factory=dict)
    lines: dict[str, set[str]] = field(default_factory=dict)  # a run -> up to two wordings of lines saying it

    def add(self, run: View, source: str, line: str) -> None:
        key = normalised(run.text)
        self.said.setdefault(key, set()).add(source)
        wordings = self.lines.setdefault(key, set())
        if len(wordings) < 2:
            wordings.add(line)
        if not run.wraps:
            self.plain.add(key)
        frame, fill = mould(run.text)
        filled = self.fills.setdefault(frame, set())
        if len(filled) < MOULD_FILLS:
            filled.add(fill)

    def standing(self, run: View, body: str, min_sources: int, limit: float) -> bool:
        """Whether ``run`` (of a line whose words, without its time of day, are ``body``) may be
        a statement that recurs (``cores``)."""
        key = normalised(run.text)
        sources = self.said[key]
        cut = key != body  # the line itself, without its time of day, needs no value
        if len(key.split()) < MIN_TOKENS or reports_work(run.text) or (cut and not _a_statement(run.text)):
            return False
        if len(sources) < min_sources or len(sources) >= limit or key not in self.plain:
            return False
        if len(self.fills[mould(run.text)[0]]) >= MOULD_FILLS:
            return False
        if key not in self.weeks:
            self.weeks[key] = len({week_of(s) for s in sources})
        return self.weeks[key] >= MIN_WEEKS


#: The fewest sources a statement is said in as clauses of its own before a longer clause of another
#: line holding it word for word says it there too (``_within``).
WITHIN_SOURCES = 2


def _within(lines: Sequence[Line], found: list[list[View]], counted: _Counted, min_sources: int) -> None:
    """Add to ``found`` (and ``counted``) each statement said as a run of clauses in
    ``WITHIN_SOURCES`` sources or more, but fewer than ``min_sources``, where another line holds it
    word for word inside a longer clause: a writer says a fact inside a sentence about the day,
    joined to it with no comma ("and I told her the nearest defibrillator is at the Tarn End
    chapel", "I explained that the nearest defibrillator is at the Tarn End chapel and left them
    to it"), where on other days it is a clause of its own. Lines are found through the postings of
    the statement's rarest word, never pair by pair."""
    bodies = [normalised(unstamped(ln.text)) if runs else "" for ln, runs in zip(lines, found, strict=True)]
    postings: dict[str, list[int]] = {}
    for n, body in enumerate(bodies):
        for word in set(body.split()):
            postings.setdefault(word, []).append(n)
    said: dict[str, str] = {}
    for runs in found:
        for run in runs:
            key = normalised(run.text)
            if key in said or key not in counted.plain or not WITHIN_SOURCES <= len(counted.said[key]) < min_sources:
                continue
            if len(key.split()) < MIN_TOKENS or key.split()[0] in _JOINS or reports_work(run.text):
                continue  # what joins a clause to its sentence is no part of what it states
            if _a_statement(run.text, subject_words=2):
                said[key] = run.text
    for key, text in said.items():
        rarest = min(key.split(), key=lambda word: len(postings.get(word, ())))
        for n in postings.get(rarest, ()):
            if lines[n].source in counted.said[key] or f" {key} " not in f" {bodies[n]} ":
                continue
            if (view := _placed(lines[n].text, text)) is not None:
                found[n].append(view)
                counted.add(view, lines[n].source, normalised(lines[n].text))


#: Words that join a clause to the sentence it is said in ("..., that the UV bulb is changed every
#: March", "..., and the gate code is 4471").
_JOINS = frozenset(str.split("that and but or so then which as because though while when"))


def _placed(line: str, text: str) -> View | None:
    """``text`` as ``line`` writes it, a run of the clauses it lies in (None when not found so)."""
    body = unstamped(line)
    at = body.lower().find(text.lower())
    if at < 0:
        return None
    spans = clause_spans(body)
    inside = [n for n, (start, end) in enumerate(spans) if start < at + len(text) and end > at]
    return View(body[at : at + len(text)], inside[0], inside[-1]) if inside else None


#: Where a clause goes on with a statement of its own: "that" after a word of its sentence ("I told
#: the relief warden that ...", "I reminded myself that ...", "mentioned, as he does, that ...").
_THAT = re.compile(r"(?<=\S)\s+that\s+(?=\w)", re.IGNORECASE)


def _complements(line: str) -> list[View]:
    """The runs of a line's clauses that open after "that" inside its sentence, up to
    ``MAX_CLAUSES`` clauses on: the statement a writer says inside a sentence about the day
    ("While the kettle boiled I reminded myself that the septic tank is emptied by Lakeland
    Drainage, which I had half forgotten"), where ``views`` holds the clause whole, its wrapper
    with it."""
    body = unstamped(line)
    thats = list(_THAT.finditer(body))
    if not thats:  # most lines: no clause to read again
        return []
    spans = clause_spans(body)
    out = []
    for said in thats:
        i = next((n for n, (start, end) in enumerate(spans) if start <= said.end() < end), None)
        if i is None:
            continue
        for j in range(i, min(i + MAX_CLAUSES, len(spans))):
            if text := body[said.end() : spans[j][1]].strip(CLAUSE_TRIM):
                out.append(View(text, i, j))
    return out


#: A markdown table's row: "| ledger-api | pg-3 | Priya |".
_ROW = re.compile(r"^\s*\|.*\|\s*$")


def is_row(text: str) -> bool:
    """Whether ``text`` is a row of a markdown table (its header row included)."""
    return _ROW.match(text) is not None


def row_cells(row: str) -> list[str]:
    """A table row's cells as written, between its outer pipes ("| a | b |" -> [" a ", " b "])."""
    return row.strip().strip("|").split("|")


def _cells(row: str) -> list[View]:
    """The runs of a table row's cells (``text.views`` of each, numbered across the row): a cell
    is a clause of its own, so a statement written in a table's notes column ("| churn refresh | ok
    | The churn table refreshes at 06:00 UTC |") recurs with the same statement said as a line on
    other days, whatever the row's other cells say."""
    out: list[View] = []
    at = 0
    for cell in row_cells(row):
        found = [v for v in views(cell.strip()) if v.text]
        out += [replace(v, first=v.first + at, last=v.last + at) for v in found]
        at += 1 + max((v.last for v in found), default=0)
    return out


#: The fewest words a row's cell holds to be read as what the row says (``_said_cell``).
CELL_WORDS = 5


def _said_cell(row: str) -> list[View]:
    """A row none of whose cells recurs as a statement, as its longest cell when that holds
    ``CELL_WORDS`` words or more ("| Backfills run on the large runner | confirmed |"): what the
    row says, compared with the lines of other days as they are (near-duplicates, other words).
    A row of labels or values ("| check | status | note |") says nothing."""
    cells = [cell.strip(CLAUSE_TRIM) for cell in row_cells(row)]
    said = max(cells, key=lambda cell: len(normalised(cell).split()))
    return [View(said, 0, 0)] if len(normalised(said).split()) >= CELL_WORDS else []


def _chosen(runs: list[View], said: dict[str, set[str]]) -> list[View]:
    """Of one line's standing runs, those said in the most sources first, then the longest, none
    overlapping another, in the line's order."""
    taken: list[View] = []
    for run in sorted(runs, key=lambda r: (-len(said[normalised(r.text)]), -len(r.text.split()), r.first)):
        if all(run.last < t.first or run.first > t.last for t in taken):
            taken.append(run)
    return sorted(taken, key=lambda r: r.first)


def _a_statement(text: str, *, subject_words: int = 1) -> bool:
    """Whether a run cut from its line may state a fact: it names a value (``holds_value``) and
    holds two words that are no value and no stopword, a subject to say it of ("due the 19th" is a
    slot of its line, not a statement), or (``subject_words`` 1) one such word and two values ("The
    Heidelberg engineer is Colm Reddy", "The Parcelforce cut-off is 15:30"; "Tobias told me again"
    names one; "Midland Crate Hire" is a name and no statement with ``subject_words`` 2)."""
    if not holds_value(text):
        return False
    said = statement(text)
    subject = said.words - said.numbers - said.names
    return len(subject) >= 2 or (len(subject) == subject_words == 1 and len(said.numbers | said.names) >= 2)


def rule_cores(said: list[tuple[str, str, bool]]) -> list[tuple[str, str, bool]]:
    """Each line as the rule inside what wraps it: of the runs of its clauses that state a rule
    (``text.views``), the one whose rule (``conduct.key_text``) the most notes state, then the
    longest. "Dana again: please never reboot core routers in business hours" and "reminder:
    please never reboot core routers in business hours" both state "please never reboot core
    routers in business hours", where their whole lines are two rules said once each. A line
    stated as no rule is one when a run of it states a rule two notes state ("quoting Dana:
    \"please ...\""). Counted in one pass over the runs."""
    runs: list[list[str]] = []
    notes: dict[str, set[str]] = {}
    for line, source, _ in said:
        found = [v.text for v in views(line) if len(key_text(v.text).split()) >= 2 and is_rule(v.text)]
        runs.append(found)
        for text in found:
            notes.setdefault(_rule_key(text), set()).add(source)
    out = []
    for (line, source, as_rule), stated in zip(said, runs, strict=True):
        found = stated if as_rule else [text for text in stated if len(notes[_rule_key(text)]) >= 2]
        if not found:
            out.append((line, source, as_rule))
            continue
        best = max(found, key=lambda text: (len(notes[_rule_key(text)]), len(text)))
        out.append((best, source, True))
    return out


def _rule_key(text: str) -> str:
    return normalised(key_text(rule_said(text) or text))


def week_of(source: str) -> str:
    """The ISO week a source stands for: a note's week, a summary's name (else the path itself)."""
    from sidecar.consolidate.periods import note_day, period_of

    day = note_day(source)
    return period_of(day) if day is not None else source.rsplit("/", 1)[-1].removesuffix(".md")


def changed_later(found: Sequence[tuple[str, Collection[str]]], lines: Sequence[Line]) -> list[bool]:
    """For each statement cut from its lines and the sources it was said in: whether a line of a
    later day says its subject again with another value of the same kind (a number where it has a
    number, one it lacks, or a name it lacks where it has a name), holding all its subject words but
    one (two at least), or, with a change signal (``text.SIGNAL``), two of them or one and its
    name: "DCIM upgraded to version 9.1" after "from the handover sheet: The DCIM tool runs version
    8.2", "Guarding contract went to Corps, no longer Mitie" after "per Ama, Security guards are
    supplied by Mitie". A later line is read sentence by sentence. The old value must not be promoted where the wrappers kept the change search
    from reading the change. Lines are found through their words' postings, never pair by pair."""
    from sidecar.consolidate.periods import note_day

    dated = [
        (day, said)
        for ln in lines
        if (day := note_day(ln.source)) is not None and "\n" not in ln.text
        for said in _SENTENCE_END.split(unstamped(ln.text))
    ]
    read = [statement(said) for _, said in dated]
    postings: dict[str, list[int]] = {}
    for n, item in enumerate(read):
        for word in item.words:
            postings.setdefault(word, []).append(n)
    out = []
    for text, sources in found:
        days = [day for s in sources if (day := note_day(s)) is not None]
        old = statement(text)
        subject = old.words - old.numbers - old.names
        if not days or len(subject) < 2:
            out.append(False)
            continue
        need = max(2, len(subject) - 1)
        probes = [*sorted(subject, key=lambda w: (len(postings.get(w, ())), w))[: len(subject) - 1], *old.names]
        last = max(days)
        near = {n for word in probes for n in postings.get(word, ()) if dated[n][0] > last}
        out.append(
            any(
                _revalued(read[n], old)
                and (
                    len(subject & read[n].words) >= need
                    or (
                        SIGNAL.search(dated[n][1]) is not None
                        and len(subject & read[n].words) + _same_name(old, read[n], dated[n][1]) >= 2
                    )
                )
                for n in near
            )
        )
    return out


#: A name as written: capitalised words in a row ("Hause Farm", "Low Nest Farm", "DCIM").
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")


def _same_name(old: Statement, new: Statement, text: str) -> bool:
    """Whether a later line (``new``, written ``text``) names a name of ``old``'s whole: a word of
    it said in a longer name of other words is another name ("Low Nest Farm" after "the spring
    above Hause Farm"), where "the GTO" after "The GTO runs Toyo inks" is the same."""
    runs = [statement(m.group()).words for m in _NAME.finditer(text)]
    return any(all(run <= old.names for run in runs if word in run) for word in old.names & new.words)


def _revalued(new: Statement, old: Statement) -> bool:
    """Whether ``new`` holds a value of the kind ``old`` has that ``old`` lacks."""
    quantities = {n for n in old.numbers if n[0].isdigit()}
    if quantities and {n for n in new.numbers if n[0].isdigit()} - quantities:
        return True
    return bool(old.names and new.names - old.words)
