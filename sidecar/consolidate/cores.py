"""The statement inside what wraps a line: a fact or a rule written inside another wrapper each
day (a time of day, a lead-in naming where it came from, a trailing aside, a quote, a sentence
among others) is found as the run of the line's clauses (``text.views``) said across days, so it
recurs where the whole lines, each wrapped its own way, never do. The rule is general: no list
of wrapper phrases, only where a line's clauses end and how often each run of them is said."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from sidecar.consolidate.conduct import is_rule, key_text, obeys_someone, rule_body
from sidecar.consolidate.periods import Line
from sidecar.consolidate.reworded import Statement, statement
from sidecar.consolidate.routine import BOILERPLATE_SHARE, ROUTINE_LINES
from sidecar.consolidate.text import (
    CLAUSE_TRIM,
    SIGNAL,
    View,
    holds_value,
    mould,
    normalised,
    reports_work,
    unstamped,
    views,
)
from sidecar.write.dedup import MIN_TOKENS

__all__ = ["MIN_SOURCES", "MIN_WEEKS", "MOULD_FILLS", "changed_later", "cores", "rule_cores", "week_of"]

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
    is in ``whole`` (a conversation's turn). A line none of whose runs of clauses recurs is cut to
    the runs of its words said inside a clause in as many sources (``_Shingles``: "I told her the
    drying room boiler runs on a timer from 17:00 to 22:00, which pleased her"), each said once
    at least as more than a lead-in and no mould filled with ``MOULD_FILLS`` values. Counted in
    one pass over the runs and one over the words, so linear in the lines."""
    from sidecar.scanner.scan import verdict

    said_whole: dict[str, set[str]] = {}
    for ln in lines:
        said_whole.setdefault(normalised(ln.text), set()).add(ln.source)
    limit = max(ROUTINE_LINES, len({ln.source for ln in lines}) * BOILERPLATE_SHARE)
    counted = _Counted()
    shingles = _Shingles()
    found: list[list[View]] = []
    reports: set[int] = set()  # lines said word for word in as many sources that report what was done
    for ln in lines:
        # a line said word for word in as many sources is itself, unless it reports what was done
        # ("Noted again: The back door code is 4471."): the statement after it may recur, not the report
        said = len(said_whole[normalised(ln.text)]) >= min_sources
        if said and reports_work(unstamped(ln.text)):
            said = False
            reports.add(id(ln))
        kept = "\n" in ln.text or id(ln) in whole or said
        runs = [] if kept else views(ln.text)
        found.append(runs)
        if not kept:
            shingles.add(ln.text, ln.source)
        for run in runs:
            counted.add(run, ln.source, normalised(ln.text))
    chosen_by_line: list[tuple[list[str], bool]] = []  # a line's cuts, and whether they are runs of words
    spans: set[str] = set()  # what was cut as a run of words, not of clauses
    plain: set[str] = set()  # such runs said once at least as more than a lead-in ("Ama said on the call:")
    inner: set[str] = set()  # such runs said once at least inside a clause, after words of it
    for ln, runs in zip(lines, found, strict=True):
        body = normalised(unstamped(ln.text))
        standing = [run for run in runs if counted.standing(run, body, min_sources, limit)]
        if id(ln) in reports:  # only a statement the notes say inside other words too: the line's own is a report
            standing = [run for run in standing if len(counted.lines[normalised(run.text)]) > 1]
        chosen = [run.text for run in _chosen(standing, counted.said)]
        if not chosen and runs and not reports_work(unstamped(ln.text)):
            # no run of its clauses recurs: a run of its words may, inside a clause, unless the line
            # reports work done ("Ordered 11 prophy paste from Trycare, due next week")
            cut = [item for item in shingles.spans(ln.text, min_sources, limit) if normalised(item[0]) != body]
            plain.update(normalised(span) for span, lead, _ in cut if not lead)
            inner.update(normalised(span) for span, _, inside in cut if inside)
            chosen = [span for span, _, _ in cut]
            spans.update(chosen)
            chosen_by_line.append((chosen, True))
        else:
            chosen_by_line.append((chosen, False))
    # a run of words filled with other values in other lines, or a run of clauses of its frame so
    # filled, is a mould's ("the Scouts from Kendal cooked a curry", "the Harrier running club
    # cooked a curry"; "Gradle build 35 min cold"), not a statement
    fills: dict[str, set[str]] = {}
    for text in spans:
        frame, fill = mould(text)
        fills.setdefault(frame, set()).add(fill)
    out = []
    for ln, (chosen, worded) in zip(lines, chosen_by_line, strict=True):
        texts = [
            text
            for text in chosen
            if not worded or (_unfilled(mould(text)[0], fills, counted.fills) and normalised(text) in plain & inner)
        ]
        if not texts or verdict(ln.text) is not None or obeys_someone(ln.text):
            out.append([ln])
        else:
            out.append([replace(ln, text=text) for text in texts])
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


#: Words in a row a line shares with lines of other days before they may be a statement said inside
#: a clause (``_Shingles``).
SHINGLE_WORDS = 4
#: Words that join a statement to what wraps it inside a clause ("I reminded myself that ...",
#: "... and left them to it"): never a span's first or last word.
_JOINERS = frozenset(str.split("that and so but or which as then when while because since though if"))
_TOKEN = re.compile(r"\S+")


@dataclass(slots=True)
class _Shingles:
    """The runs of ``SHINGLE_WORDS`` words of a run's lines and the sources each is said in: a
    statement said inside a clause, with no punctuation between it and what wraps it ("While the
    kettle boiled I reminded myself that the drying room boiler runs on a timer from 17:00 to
    22:00", "I told her the drying room boiler runs ...") is the longest run of words the line
    shares with lines of other days, where no run of its clauses is."""

    said: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    weeks: dict[tuple[str, ...], int] = field(default_factory=dict)

    def add(self, text: str, source: str) -> None:
        body = unstamped(text)
        tokens = _tokens(body)
        words = [word for word, _, _ in tokens]
        for n in _inside(body, tokens):
            self.said.setdefault(tuple(words[n : n + SHINGLE_WORDS]), set()).add(source)

    def recurs(self, shingle: tuple[str, ...], min_sources: int, limit: float) -> bool:
        sources = self.said.get(shingle, set())
        if len(sources) < min_sources or len(sources) >= limit:
            return False
        if shingle not in self.weeks:
            self.weeks[shingle] = len({week_of(s) for s in sources})
        return self.weeks[shingle] >= MIN_WEEKS

    def spans(self, text: str, min_sources: int, limit: float) -> list[tuple[str, bool, bool]]:
        """The statements ``text`` says inside its clauses: each longest run of its words whose every
        ``SHINGLE_WORDS`` words in a row are said in ``min_sources`` sources over ``MIN_WEEKS`` weeks
        (and in fewer than ``limit``: the writer's own wording is no fact), without the words that
        join it to its wrapper, when it states something (``_a_statement``), reports no work and runs
        to the end of its clause (``_ends_clause``): a statement is what is said, not a name said
        inside a clause about something else ("One of a pair of Dutch cyclists wanted to know").
        Each with whether it opens the line before a colon or comma, as a lead-in does, and whether
        words of its clause come before it."""
        body = unstamped(text)
        tokens = _tokens(body)
        words = [word for word, _, _ in tokens]
        inside = set(_inside(body, tokens))
        hits = [
            n in inside and self.recurs(tuple(words[n : n + SHINGLE_WORDS]), min_sources, limit)
            for n in range(len(words) - SHINGLE_WORDS + 1)
        ]
        out = []
        n = 0
        while n < len(hits):
            if not hits[n]:
                n += 1
                continue
            end = n
            while end + 1 < len(hits) and hits[end + 1]:
                end += 1
            first, last = n, end + SHINGLE_WORDS - 1
            while first < last and words[first] in _JOINERS:
                first += 1
            while last > first and words[last] in _JOINERS:
                last -= 1
            said = body[tokens[first][1] : tokens[last][2]].strip(CLAUSE_TRIM)
            whole = _ends_clause(body, tokens, last)
            if whole and len(normalised(said).split()) >= MIN_TOKENS and not reports_work(said) and _a_statement(said):
                # opening the line before a colon or comma, it may be how the line is wrapped
                lead = first == 0 and body[tokens[last][1] : tokens[last][2]].rstrip()[-1:] in (":", ",")
                # said inside a clause: words of the same clause before it ("I told her ...")
                within = first > 0 and not _punctuated(body, tokens, first - 1)
                out.append((said, lead, within))
            n = end + 1
        return out


def _inside(body: str, tokens: list[tuple[str, int, int]]) -> list[int]:
    """Where a run of ``SHINGLE_WORDS`` of ``body``'s words starts that lies inside one clause: no
    punctuation after any of its words but the last. Runs of whole clauses are ``views``'s."""
    stops = [_punctuated(body, tokens, n) for n in range(len(tokens))]
    return [n for n in range(len(tokens) - SHINGLE_WORDS + 1) if not any(stops[n : n + SHINGLE_WORDS - 1])]


def _punctuated(body: str, tokens: list[tuple[str, int, int]], n: int) -> bool:
    """Whether punctuation follows the word ``n`` of ``body`` (in it or between it and the next)."""
    word = body[tokens[n][1] : tokens[n][2]]
    after = body[tokens[n][2] : tokens[n + 1][1]] if n + 1 < len(tokens) else ""
    return word != word.rstrip(CLAUSE_TRIM) or bool(after.strip())


def _ends_clause(body: str, tokens: list[tuple[str, int, int]], last: int) -> bool:
    """Whether the word ``last`` of ``body`` ends a clause: the line's last word, a word with
    punctuation after it, or one before a word that joins clauses ("... from Penrith and left them
    to it")."""
    return last + 1 >= len(tokens) or _punctuated(body, tokens, last) or tokens[last + 1][0] in _JOINERS


def _tokens(body: str) -> list[tuple[str, int, int]]:
    """``body``'s words, lowercased without the punctuation around them, with where each starts and ends."""
    out = []
    for match in _TOKEN.finditer(body):
        word = match.group(0).strip(CLAUSE_TRIM).lower()
        if word:
            out.append((word, match.start(), match.end()))
    return out


def _unfilled(frame: str, *fills: dict[str, set[str]]) -> bool:
    """Whether ``frame`` is filled with fewer than ``MOULD_FILLS`` values in each of ``fills``."""
    return all(len(found.get(frame, ())) < MOULD_FILLS for found in fills)


def _chosen(runs: list[View], said: dict[str, set[str]]) -> list[View]:
    """Of one line's standing runs, those said in the most sources first, then the longest, none
    overlapping another, in the line's order."""
    taken: list[View] = []
    for run in sorted(runs, key=lambda r: (-len(said[normalised(r.text)]), -len(r.text.split()), r.first)):
        if all(run.last < t.first or run.first > t.last for t in taken):
            taken.append(run)
    return sorted(taken, key=lambda r: r.first)


def _a_statement(text: str) -> bool:
    """Whether a run cut from its line may state a fact: it names a value (``holds_value``) and
    holds two words that are no value and no stopword, a subject to say it of ("due the 19th" is a
    slot of its line, not a statement), or one such word and two values ("The Heidelberg engineer
    is Colm Reddy", "The Parcelforce cut-off is 15:30"; "Tobias told me again" names one)."""
    if not holds_value(text):
        return False
    said = statement(text)
    subject = said.words - said.numbers - said.names
    return len(subject) >= 2 or (len(subject) == 1 and len(said.numbers | said.names) >= 2)


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
    return normalised(key_text(rule_body(text) or text))


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
                        and len(subject & read[n].words) + bool(old.names & read[n].words) >= 2
                    )
                )
                for n in near
            )
        )
    return out


def _revalued(new: Statement, old: Statement) -> bool:
    """Whether ``new`` holds a value of the kind ``old`` has that ``old`` lacks."""
    quantities = {n for n in old.numbers if n[0].isdigit()}
    if quantities and {n for n in new.numbers if n[0].isdigit()} - quantities:
        return True
    return bool(old.names and new.names - old.words)
