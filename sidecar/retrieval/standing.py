"""How current a chunk's text is, by where it sits: a search ranks stale text below current text.

Consolidation keeps everything it rolls up: daily notes move to ``archive/`` (kept readable, out
of the prompt) and a line whose value a newer line changed moves under a ``## Superseded``
heading of its summary. Both stay searchable, so nothing is lost, but a query about a fact should
show its current value first. A hit's score is multiplied by its standing: 1 for live text,
``ARCHIVED`` under ``archive/``, ``SUPERSEDED`` under a ``Superseded`` heading (both when both).
The lines a week's summary left out (``archive/summaries/``, ``REST_PREFIX``) rank as live text: no
live file holds them and a note's archived copy ranks each of them inside a note-long chunk at half
its score, where a summary line sharing the query's words but not the answer would rank above it.
A line there that a newer value changed moves under its ``Superseded`` heading like a summary's.

Dated notes (``daily/YYYY-MM-DD.md``, its archived copy, a weekly summary ``YYYY-Www.md``) also
lose up to ``RECENCY`` of their score with age, linearly over ``RECENCY_DAYS``: of two notes that
match a query alike, the newer one ranks first, which is what a fact stated again with a new value
needs before any consolidation has run. Undated files (the evergreen file, topic files) keep 1.
The factor only reorders hits a query earned; it never makes or removes one. ``explain`` shows it.

A factor of a few percent cannot put a value said once above the value it replaced, said three
times and promoted. So a BM25 answer is also read line by line (``restated_first``): a dated line
that a newer dated line restates with another value ranks below that newer line. Restated means:
both lines match one of the query's terms (the same subject, as the query asked it), and the
newer line names one of the older line's values with a value of its own beside it ("Millbrook got
bought out - the invoices say Harvest Grain Co"), or holds a value of the same written form in its
place ("£4.20" -> "£4.60", "7:00" -> "6:30", or beside it: "08:15 instead of 03:30") and matches every query term the older line matches
(or two of them, with more words of its own than it lost: one word swapped for another is another
subject), or writes one of the older line's names with another number after it (a version: "Parlour software
is DairyPlan 5" / "Parlour's been on DairyPlan 7"; a month's day is a date, no version).
A value is a name (a capitalised word that does not open a sentence, or one with a capital inside
it; not one written just after a number, its unit: "08:15 UTC") or a number written with a unit or
a separator; a bare count or an identifier is none ("Sold
14 loaves" restates nothing). A weekday is a time as well as a name: another weekday in its place
restates a line as a number of the same form does ("the second Saturday" / "the first Sunday").
A line's day is its note's, or the newest day of the notes a promoted line says it came from.
A line the evergreen file keeps (promoted: said on several days, dated by the notes it came from)
is also restated by a newer line that shares a query term with it and puts another value of the
same written form where one of its values was, its letters read too ("A100" / "H100", "Harrow
Tankers" / "Vale Haulage", "us-west-2" / "us-east-2"), though worded otherwise: the kept line
stood for the fact while it was said, the newer line says what came after ("Sludge is taken away
by Harrow Tankers" / "Vale Haulage tanker came at 14:10 for the sludge"). Not a line of the kept
line's mould for another subject, which swaps a word or two of it for as many ("Tokenizer for the
gate model: sp-22k-r6" / "Tokenizer for the rank model: sp-32k-r9"): the newer line must say twice
as many words of its own as it lost of the kept line's, or none but its values: the kept line said
shorter, where the capitalised words after a label's colon are values too ("On-call owner for
billing is Priya" / "Billing on-call: Marek"). A kept line that opens with who holds its
duty ("Tomasz owns the ledger-recon service"; its first word a name because another line of the
answer writes it inside a sentence) is restated by a newer line that names that holder after a
first word of its own, no stopword and no word of the kept line ("Amara took over ledger-recon
when Tomasz moved to the card-issuing team"). A line of a note is never restated so: said
once, it may be one row of a table of like facts. No word list: what changes is read from the
values alone (the days of the week aside).
The newer hit moves up to just above the first hit it restates; nothing else moves.

Whatever the words of a change, two of the hits an answer shows that say one thing alike, a value
apart, are one question answered at two times (``newest_first``): the newest of them and the
first of them (the highest ranked) swap places; nothing else moves, and no hit enters or leaves
the answer. Alike means: their lines matching the most query terms of the answer (two at least
when the query asks two) match the same terms, and either the words each says and the other
does not are values of one written form (two names, two versions, two times, two weekdays, two
numbers of one form: "Crash reports go to Crashlytics" / "Crash reports go to Sentry now"),
beside at most two words one of them adds and the other lacks, or the newer line says the older
whole, its value too, with a value of that form beside it and at most three words of its own
("catalog lives on ovh-gra7" / "catalog was migrated off ovh-gra7 and lives on gcp-europe-west4
now"). A word one line says in place of another's is another subject, not a value: "Vault keeps
its shipping secrets under secret/shipping/core-241" / "... its invoicing secrets under ...". A
value in the form of a name against a sentence, or a name against a time, is no value apart.
The first moves down only when it holds no query term the newest lacks: else it may answer what
the newest does not say, and moved out of sight, that answer would go with it. A line's day, and
the lines that take no part, are as for ``restated_first``.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import NamedTuple, Protocol, TypeVar

from sidecar.index.query import STOPWORDS
from sidecar.index.snippet import held_terms_each, term_spans

__all__ = [
    "ARCHIVED",
    "RECENCY",
    "RECENCY_DAYS",
    "REST_PREFIX",
    "SLACK",
    "SUPERSEDED",
    "by_standing",
    "more_terms_first",
    "newest_first",
    "note_date",
    "restated_first",
    "standing",
]

ARCHIVED = 0.5
SUPERSEDED = 0.25
#: The archive's copies of the lines its weekly summary left out: ranked as live text.
REST_PREFIX = "archive/summaries/"
RECENCY = 0.2
RECENCY_DAYS = 365
#: Extra hits a search reads beyond its limit, so live text ranked just below it can move up.
SLACK = 10
_SUPERSEDED_HEADING = "Superseded"
_DAY = re.compile(r"(?:^|/)(\d{4})-(\d{2})-(\d{2})\.md$")
_WEEK = re.compile(r"(?:^|/)(\d{4})-W(\d{2})\.md$")
#: A line read for restated values: at most this many characters (a longer one is prose, not a fact).
LINE_CHARS = 240
_COMMENT = re.compile(r"<!--(.*?)-->")
_SOURCE_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\.md\b")
_VALUE_WORD = re.compile(r"[£$€#]?\w+(?:[.:/,'’-]\w+)*%?")
_DIGIT = re.compile(r"\d")
#: The words that may be values (a capital or a digit in them), found without reading the others.
_VALUE_LIKE = re.compile(r"[£$€#]?(?<![\w.:/,'’-])(?=[\w.:/,'’-]*[A-Z0-9])\w+(?:[.:/,'’-]\w+)*%?")
_NEWLINE = re.compile(r"\n")
#: A digit, a capital inside a word, a capital one space after a word that ends no sentence, or one
#: after a label's colon (``_label_values``): a line without one holds no value (``_is_value``) and
#: is passed over with one search (led by the character class, which the regular expression engine
#: scans for quickly).
_MAYBE_VALUE = re.compile(
    r"[0-9A-Z](?:(?<=[0-9])|(?<=[a-z][A-Z])|(?<=[^\s.!?:;*+>-] [A-Z])|(?<=[^\s.!?:;*+>-]\t[A-Z])|(?<=\w: [A-Z]))"
)
#: A name and the bare number written just after it: a version ("DairyPlan 7", "Windows 11").
#: At most three digits a part, and no number after it: "UK 720557 41821" is an ear tag, no version.
_VERSION = re.compile(r"\b([A-Z][\w'’-]*) (\d{1,3}(?:\.\d+)*)\b(?![.:/,]\d|%| \d)")
#: A day of the month after its month's name is a date, not a version ("May 7" / "May 8").
_MONTHS = frozenset(
    [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "Jan",
        "Feb",
        "Mar",
        "Apr",
        "Jun",
        "Jul",
        "Aug",
        "Sep",
        "Sept",
        "Oct",
        "Nov",
        "Dec",
    ]
)
#: The days of the week as written, singular and plural, each to its day: one written form of time.
_WEEKDAYS = {
    form: day
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    for form in (day, f"{day}s")
}
_WEEKDAY = "weekday"
#: A line opening with a label and its colon, and the capitalised words just after it: the label's
#: value ("Billing on-call: Marek", "iOS CI: Xcode Cloud, workflow release-ios").
_LABELLED = re.compile(
    r"[\s>*+-]*(?:\[[ xX]\][ \t]*)?[^:.!?\s][^:.!?]{0,40}?:[ \t]+([A-Z][\w'’.-]*(?:[ \t]+[A-Z][\w'’.-]*)*)"
)
_LABEL_WORD = re.compile(r"\w[\w'’.-]*\w|\w")
_SPEAKER = re.compile(r"^[-*+]?[ \t]*([A-Z][\w'’-]*):[ \t]", re.MULTILINE)


class _Ranked(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def heading(self) -> str: ...
    @property
    def score(self) -> float: ...


R = TypeVar("R", bound=_Ranked)


def standing(path: str, heading: str, today: date | None = None) -> float:
    """The factor a hit's score is multiplied by (module docstring)."""
    return _standing(path, heading, today or datetime.now(UTC).date())


@lru_cache(maxsize=4096)
def _standing(path: str, heading: str, today: date) -> float:
    """``standing`` on a given day: a pure function of its arguments, kept for the hits searches
    meet again (it costs a few microseconds a hit, a visible share of a BM25 answer)."""
    factor = ARCHIVED if path.startswith("archive/") and not path.startswith(REST_PREFIX) else 1.0
    if heading.rsplit(" > ", 1)[-1].strip() == _SUPERSEDED_HEADING:
        factor *= SUPERSEDED
    return factor * _aged(path, today)


@lru_cache(maxsize=4096)
def _aged(path: str, today: date) -> float:
    """The recency part of a hit's standing: 1 for an undated file."""
    day = note_date(path)
    if day is None:
        return 1.0
    return 1.0 - RECENCY * min(max((today - day).days, 0), RECENCY_DAYS) / RECENCY_DAYS


class _Matched(_Ranked, Protocol):
    @property
    def text(self) -> str: ...
    @property
    def terms(self) -> list[str]: ...


M = TypeVar("M", bound=_Matched)
T = TypeVar("T")


def by_standing(hits: Sequence[M], today: date | None = None) -> list[tuple[M, float, float]]:
    """BM25 ``hits`` (best first) reranked by score times standing: ``(hit, standing, score)``, ties
    in their BM25 order, then a line a newer line restates below that line (``restated_first``).
    The one ranking of a BM25 answer, whoever asks (the server, the CLI)."""
    today = today or datetime.now(UTC).date()  # once for the answer, not once a hit
    weighed = [(hit, factor := _standing(hit.path, hit.heading, today), hit.score * factor) for hit in hits]
    weighed.sort(key=lambda item: -item[2])  # stable
    if not weighed:
        return weighed
    weighed = more_terms_first(weighed, weighed[0][0].terms, today)
    return restated_first(weighed, lambda item: (item[0].path, item[0].heading, item[0].text), weighed[0][0].terms)


def more_terms_first(
    weighed: Sequence[tuple[M, float, float]], tokens: Sequence[str], today: date
) -> list[tuple[M, float, float]]:
    """``weighed`` (``(hit, standing, score)``, best first) with a hit that matches every query term
    another matches and more (stopwords aside) moved above it when their ages alone put it below:
    the recency factor breaks ties on the same match, it never ranks a hit that answers less of the
    query above one that answers more ("Escalations for reviews go to Chen" asked as "who handles
    reviews escalations", below newer lines of the same mould for other teams). Its BM25 score
    times its standing without the recency part must be at least the other's."""
    terms = [t for t in tokens if t not in STOPWORDS]
    if len(terms) < 2 or len(weighed) < 2:
        return list(weighed)
    matched = held_terms_each([hit.text for hit, _, _ in weighed], terms)
    unaged: list[float] = []
    seen: list[frozenset[int]] = []  # the distinct term sets of the hits placed so far: a few at most
    order: list[int] = []
    for at, mine in enumerate(matched):
        place = len(order)
        # Else it passes no hit (the usual case). One term is more only than none; none, than nothing.
        if mine and ((_NO_TERMS in seen) if len(mine) == 1 else any(mine > other for other in seen)):
            unaged = unaged or [hit.score * factor / _aged(hit.path, today) for hit, factor, _ in weighed]
            mine_unaged = unaged[at]
            for k, above in enumerate(order):
                if mine > matched[above] and mine_unaged >= unaged[above]:
                    place = k
                    break
        if mine not in seen:
            seen.append(mine)
        order.insert(place, at)
    return [weighed[i] for i in order]


_NO_TERMS: frozenset[int] = frozenset()


class _Line:
    """One line of a hit that matches a query term, as ``restated_first`` reads it."""

    __slots__ = (
        "day",
        "holder",
        "kept",
        "labelled",
        "matched",
        "named",
        "names",
        "opening",
        "shapes",
        "values",
        "versions",
        "words",
    )

    def __init__(
        self,
        day: date,
        matched: frozenset[int],
        words: frozenset[str],
        values: list[str],
        versions: dict[str, str],
        *,
        named: frozenset[int] = frozenset(),
        weekdays: frozenset[str] = frozenset(),
        kept: bool = False,
        opening: str = "",
        labelled: frozenset[str] = frozenset(),
    ) -> None:
        self.labelled = labelled  # the capitalised words after its opening label's colon ("on-call: Marek")
        self.day = day
        self.opening = opening  # its capitalised first word: a name, or a word opening a sentence
        self.holder = ""  # that word, when another line of the answer writes it as a name
        self.kept = kept  # a line of the evergreen file (its day: the newest note it came from)
        self.named = named  # the query terms it writes as a name or an identifier ("Galaxy S22")
        self.versions = versions  # a name -> the number written just after it ("DairyPlan 7")
        self.matched = matched  # the query terms it matches, by index
        self.words = words  # every word as written
        self.values = frozenset(values)
        self.names = frozenset(v for v in values if not _DIGIT.search(v))
        # Its numbers by written form; an identifier ("#5011") is no quantity another replaces.
        shapes: dict[str, set[str]] = {}
        for v in values:
            if _DIGIT.search(v) and not v.startswith("#"):
                shapes.setdefault(_shape(v), set()).add(v)
        if weekdays and (days := {_WEEKDAYS[v] for v in values if v in weekdays}):
            shapes[_WEEKDAY] = days  # a weekday is a time too: given anew as another weekday
        self.shapes = {shape: frozenset(found) for shape, found in shapes.items()}

    def restates(self, older: _Line) -> bool:
        """This line gives ``older``'s subject another value (module docstring). Naming one of the
        older line's names, it needs a query term in common with it; a number of the same form in
        place of the older one, every query term the older line matches (a number alone does not
        tell one subject from another: "error budget for gateway: 99.5%", "... for reviews: 99.9%")."""
        if self.day <= older.day or not self.matched & older.matched:
            return False
        if older.names & self.words and self.values - older.words:
            return True
        if any(older.versions.get(name, number) != number for name, number in self.versions.items()):
            return True  # the same name with another number after it: another version ("DairyPlan 5" -> "7")
        if older.kept and self._fills_kept(older):
            return True
        if older.holder and older.holder in self.words and self._names_first(older):
            return True  # another holder named first, the kept line's after it
        if not older.matched <= self.matched and not self._says_more(older):
            return False
        # a number of that form the older line lacks (beside its old one too: "08:15 instead of 03:30")
        return any(shape in older.shapes and found - older.shapes[shape] for shape, found in self.shapes.items())

    def _fills_kept(self, older: _Line) -> bool:
        """Whether this line holds a value of the same written form as one of a kept line's values
        that it lacks, where the kept line lacks its own, without a query term the kept line writes
        as a name, and is no line of the kept line's mould for another subject: it says at least
        twice as many words of its own as it lost of the kept line's, or none but its values (the
        kept line said shorter: "On-call owner for billing is Priya" / "Billing on-call: Marek").
        The capitalised words after its opening label's colon count among its values here."""
        if older.named - self.matched:
            return False
        lost = {_form(v) for v in older.values - self.words}
        given = self.values | self.labelled
        if not lost or not any(_form(v) in lost for v in given - older.words):
            return False
        mine, theirs = _plain(self.words), _plain(older.words)
        return not mine - theirs - {v.lower() for v in given} or len(mine - theirs) >= 2 * len(theirs - mine)

    def _names_first(self, older: _Line) -> bool:
        """Whether this line opens with a word the kept line ``older`` does not say, no stopword:
        the subject's new holder ("Amara took over ledger-recon when Tomasz moved teams")."""
        first = self.opening.lower()
        return bool(first) and first not in STOPWORDS and first not in {w.lower() for w in older.words}

    def _says_more(self, older: _Line) -> bool:
        """Missing a query term the older line matches, a line still restates its number when it
        shares two query terms with it and says more words of its own than it lost ("Morning
        milking starts at 5:30" / "Moved morning milking to 6:00, the tanker comes later"); a line
        that swaps one word of the older for another names another subject ("Error budget for
        gateway: 99.5%" / "Error budget for reviews: 99.9%"), and so does a line without a query term
        the older line writes as a name or an identifier: a table's next row ("Test phone Galaxy S22
        is asset DL-7279" / "Test phone Galaxy Tab A8 is asset DL-5039")."""
        if len(self.matched & older.matched) < 2 or older.named - self.matched:
            return False
        mine, theirs = _plain(self.words), _plain(older.words)
        return len(mine - theirs) > len(theirs - mine)


def _plain(words: frozenset[str]) -> frozenset[str]:
    """The words of a line that are no value and no stopword, lowercased."""
    return frozenset(w.lower() for w in words if w.islower() or (w[:1].isupper() and w[1:].islower())) - STOPWORDS


def _terms(tokens: Sequence[str]) -> list[str]:
    """The query's terms a line is read by: "in" of "walk-in fridge" says nothing of a subject, so
    the query's stopwords match no line (unless the query is stopwords alone)."""
    return [t for t in tokens if t not in STOPWORDS] or list(tokens)


def _answer(
    hits: Sequence[T], view: Callable[[T], tuple[str, str, str]], tokens: Sequence[str]
) -> tuple[list[str], list[tuple[str, str, str]], list[list[_Line]]] | None:
    """The query's terms (``_terms``), each hit's view and the lines it ranks for (``_lines``);
    None when fewer than two hits hold such a line, so nothing can be restated or alike."""
    if len(hits) < 2 or not tokens:
        return None
    terms = _terms(tokens)
    views = [view(item) for item in hits]
    lines = [_lines(*seen, terms) for seen in views]
    if sum(1 for found in lines if found) < 2:
        return None
    return terms, views, lines


def restated_first(ranked: Sequence[T], view: Callable[[T], tuple[str, str, str]], tokens: Sequence[str]) -> list[T]:
    """``ranked`` (best first) with each hit moved up to just above the first hit above it that
    holds a line one of its lines restates (module docstring). ``view``: a hit's path, heading
    and text; ``tokens``: the query's tokens (``snippet.query_tokens``)."""
    answer = _answer(ranked, view, tokens)
    if answer is None:
        return list(ranked)
    _, views, lines = answer
    # Who speaks in the answer ("Caroline: ..." lines, "### Caroline" turns) is named in every other
    # line of a conversation, so naming them restates nothing.
    speakers = {name for _, _, text in views for name in _SPEAKER.findall(text)}
    speakers.update(heading.rsplit(" > ", 1)[-1] for _, heading, _ in views)
    if speakers:
        for found in lines:
            for line in found:
                line.names -= speakers
    # A kept line's first word is a name when another line of the answer writes it inside a
    # sentence ("Tomasz owns the recon service" / "... when Tomasz moved to the issuing team").
    inner = {name for found in lines for line in found for name in line.names}
    for found in lines:
        for line in found:
            if line.kept and line.opening in inner and line.opening not in speakers:
                line.holder = line.opening
    order: list[int] = []
    for at, mine in enumerate(lines):
        place = len(order)
        if mine:
            for k, above in enumerate(order):
                if any(new.restates(old) for old in lines[above] for new in mine):
                    place = k
                    break
        order.insert(place, at)
    return [ranked[i] for i in order]


def newest_first(shown: Sequence[T], view: Callable[[T], tuple[str, str, str]], tokens: Sequence[str]) -> list[T]:
    """``shown`` (the hits an answer shows, best first) with the newest of the hits that say one
    thing alike, a value apart, swapped with the first of them (module docstring). ``view``: a
    hit's path, heading and text; ``tokens``: the query's tokens (``snippet.query_tokens``)."""
    answer = _answer(shown, view, tokens)
    if answer is None:
        return list(shown)
    terms, views, read = answer
    most = max(len(line.matched) for lines in read for line in lines)
    if most < min(2, len(terms)):
        return list(shown)  # one term of several asked names no subject
    links: dict[int, set[int]] = {}  # the hits alike, each to the others it is alike with
    day: dict[int, date] = {}  # a hit's day: its newest line alike with another's
    for a, b in itertools.combinations(range(len(shown)), 2):
        for mine in read[a]:
            for theirs in read[b]:
                if len(mine.matched) < most or theirs.matched != mine.matched or theirs.day == mine.day:
                    continue
                if _alike(*sorted((mine, theirs), key=lambda line: line.day)):
                    links.setdefault(a, set()).add(b)
                    links.setdefault(b, set()).add(a)
                    day[a] = max(day.get(a, mine.day), mine.day)
                    day[b] = max(day.get(b, theirs.day), theirs.day)
    if not links:
        return list(shown)
    held: list[frozenset[int]] = []  # the query terms each hit holds, read once a swap is asked
    out = list(shown)
    done: set[int] = set()
    for start in sorted(links):
        if start in done:
            continue
        group: set[int] = set()
        todo = [start]
        while todo:
            if (at := todo.pop()) not in group:
                group.add(at)
                todo.extend(links[at] - group)
        done |= group
        first = min(group)
        newest = max(sorted(group), key=lambda at: day[at])  # of two as new, the higher
        if newest == first or newest not in links[first]:
            continue  # the newest leads already, or the first says the same value as the newest
        held = held or held_terms_each([text for _, _, text in views], terms)
        if held[first] <= held[newest]:  # else the first answers what the newest does not: it stays
            out[first], out[newest] = shown[newest], shown[first]
    return out


def _alike(old: _Line, new: _Line) -> bool:
    """Whether ``new`` says what ``old`` says with another value (module docstring): the words
    each says and the other does not are values of one written form, beside at most two words one
    of them adds; or ``new`` says ``old`` whole, its value too, and a value of that form beside it,
    with at most three words of its own."""
    only_old, only_new = old.words - new.words, new.words - old.words
    gone = {w for w in only_old if w in old.values or w in old.labelled}
    given = {w for w in only_new if w in new.values or w in new.labelled}
    if not given:
        return False
    added = _plain(frozenset(only_new - given))
    if not only_old:  # said whole: "catalog lives on ovh-gra7" / "... migrated off ovh-gra7 and lives on ..."
        if not old.values or len(added) > 3 or not _plain(old.words):
            return False
        return bool({_coarse(v) for v in given} & {_coarse(v) for v in old.values})
    if not gone or {_coarse(v) for v in gone} != {_coarse(v) for v in given}:
        return False
    lost = _plain(frozenset(only_old - gone))
    if lost and added:
        return False  # a word swapped for another: another subject ("shipping" / "invoicing" secrets)
    extra = len(lost) + len(added)
    return extra <= 2 and len(_plain(old.words & new.words)) >= max(2, 2 * extra)


def _coarse(value: str) -> str:
    """A value's written form (``_form``) with a run of lowercase parts joined by hyphens read as
    one ("ovh-gra7" and "gcp-europe-west4" -> "a-a9"); a weekday is one form of its own."""
    if value in _WEEKDAYS:
        return _WEEKDAY
    return _PARTS.sub("a-", _form(value))


_PARTS = re.compile(r"(?:a-)+")


def _lines(path: str, heading: str, text: str, terms: list[str]) -> list[_Line]:
    """The dated lines of a hit that match the most query terms among its lines of at most
    ``LINE_CHARS`` (a longer one is prose, and a heading states no value): the lines its rank
    stands for. None under a superseded heading (text already ranked as stale changes nothing).
    What does not depend on the query is read once per chunk (``_reading``)."""
    if len(text) > LINE_CHARS and "\n" not in text:
        return []  # one paragraph of prose: asked before the cache, which it would only crowd
    reading = _reading(path, heading, text)
    if reading is None:
        return []  # no line of it can hold a value, whatever the query
    breaks, short = reading
    found_in: dict[int, set[int]] = {}
    for i, spans in enumerate(term_spans(text, terms)):
        for a, _ in spans:
            if (at := bisect.bisect_left(breaks, a)) in short:
                found_in.setdefault(at, set()).add(i)
    matched = {at: frozenset(found) for at, found in found_in.items()}
    top = max((len(found) for found in matched.values()), default=0)
    out = []
    for at, found in sorted(matched.items()):
        if len(found) < top or not found or (line := short[at]) is None:
            continue
        by_term = term_spans(line.raw, terms)
        spans = [span for term in by_term for span in term]
        values = [  # a word the query asked for is the subject, not a value
            word for start, end, word in line.candidates if not any(a < end and start < b for a, b in spans)
        ]
        # a query term is the subject, never its holder
        opening = line.opening if line.opening and not any(a == line.opening_at for a, _ in spans) else ""
        labelled = frozenset(word for a0, b0, word in line.labelled if not any(a < b0 and a0 < b for a, b in spans))
        if values or (line.kept and opening) or labelled:  # a line with no value neither restates nor is restated
            versions = {name: number for name, number in line.versions if name in values}
            named = frozenset(  # the query terms written as a name: the subject's own ("Galaxy S22")
                i
                for i, term in enumerate(by_term)
                if any(a < end and start < b for a, b in term for start, end, _ in line.candidates)
            )
            out.append(
                _Line(
                    line.day,
                    found,
                    line.words,
                    values,
                    versions,
                    named=named,
                    weekdays=line.weekdays,
                    kept=line.kept,
                    opening=opening,
                    labelled=labelled,
                )
            )
    return out


class _Read(NamedTuple):
    """What a short line of a chunk holds whatever the query: its text, its day, the words that may
    be its values (in order, as written; units left out), every word, its versions and its weekdays,
    and its first word when a capital and no stopword, with where it starts (-1 without one)."""

    raw: str
    day: date
    candidates: list[tuple[int, int, str]]
    words: frozenset[str]
    versions: list[tuple[str, str]]
    weekdays: frozenset[str]
    kept: bool
    opening: str
    opening_at: int
    labelled: tuple[tuple[int, int, str], ...]


@lru_cache(maxsize=4096)
def _reading(path: str, heading: str, text: str) -> tuple[list[int], dict[int, _Read | None]] | None:
    """A chunk's line breaks and its short lines that may hold a value (``_MAYBE_VALUE``), by line
    number: each read as ``_Read`` when it has a day and a value, else None (it still counts among
    the lines matching the most query terms). None when no line can ever give ``_lines`` a line:
    under a superseded heading, undated, or without a short dated line holding a value. A pure
    function of the chunk, kept for the chunks searches meet again (most of ``_lines`` otherwise,
    on every answer)."""
    if heading.rsplit(" > ", 1)[-1].strip() == _SUPERSEDED_HEADING:
        return None
    note_day = note_date(path)
    if note_day is None and "<!--" not in text:
        return None  # an undated file: no line of it is older or newer than another
    breaks = [found.start() for found in _NEWLINE.finditer(text)]
    ends = [*breaks, len(text)]
    short: dict[int, _Read | None] = {}
    for at, end in enumerate(ends):
        start = ends[at - 1] + 1 if at else 0
        if 2 < end - start <= LINE_CHARS and not text.startswith("#", start) and _MAYBE_VALUE.search(text, start, end):
            short[at] = _read_line(text[start:end], note_day)
    if not any(short.values()):
        return None  # paragraphs of prose, or lines without a value
    return breaks, short


def _read_line(raw: str, note_day: date | None) -> _Read | None:
    """A short line as ``_Read``; None when it has no day or no word that may be a value."""
    named = (note_date(name) for c in _COMMENT.findall(raw) for name in _SOURCE_DAY.findall(c))
    sources = [day for day in named if day is not None]  # a name that is no day names none
    day = max(sources, default=note_day)
    if day is None:
        return None
    line = _COMMENT.sub(lambda c: " " * len(c.group()), raw)
    candidates = [  # a unit is no value either
        (w.start(), w.end(), w.group())
        for w in _VALUE_LIKE.finditer(line)
        if _is_value(w.group(), opens=_opens(line, w.start())) and not _a_unit(line, w)
    ]
    kept = note_day is None  # a line of an undated file, dated by the notes it was promoted from
    opening = _OPENING.match(line)  # its first word, when a capital and no stopword
    first = opening[1] if opening and opening[1] != "I" and opening[1].lower() not in STOPWORDS else ""
    labelled = _label_values(line)
    if not candidates and not (kept and first) and not labelled:
        return None
    versions = [(m[1], m[2]) for m in _VERSION.finditer(line) if m[1] not in _MONTHS]
    weekdays = frozenset(word for _, _, word in candidates if word in _WEEKDAYS)
    at = opening.start(1) if opening and first else -1
    words = frozenset(_VALUE_WORD.findall(line))
    return _Read(raw, day, candidates, words, versions, weekdays, kept, first, at, labelled)


def _label_values(line: str) -> tuple[tuple[int, int, str], ...]:
    """The capitalised words just after the label a line opens with, each with where it is (no
    stopword: "Note: The ..."); none when it opens with no label."""
    label = _LABELLED.match(line)
    if label is None:
        return ()
    base = label.start(1)
    found = ((base + m.start(), base + m.end(), m.group()) for m in _LABEL_WORD.finditer(label.group(1)))
    return tuple((a, b, word) for a, b, word in found if word.lower() not in STOPWORDS)


#: A line's first word when it is capitalised (after a list mark, a quote mark or a check box).
_OPENING = re.compile(r"[\s>*+-]*(?:\[[ xX]\][ \t]*)?[\"'“‘]?([A-Z][\w-]*)")


_AFTER_NUMBER = re.compile(r"\d[\w.:,%]*[ \t]+$")


def _a_unit(line: str, word: re.Match[str]) -> bool:
    """A capitalised word written just after a number is its unit ("08:15 UTC", "40 GB"), no name
    of the line's: two lines about other subjects at times in UTC name no value in common."""
    return not _DIGIT.search(word.group()) and bool(_AFTER_NUMBER.search(line, 0, word.start()))


def _is_value(word: str, *, opens: bool) -> bool:
    """A name (a capitalised word that does not open a sentence, or one with a capital inside) or
    a number with a unit or separator in it ("£4.20", "7:30", "v16.2"); a bare count is no value."""
    if _DIGIT.search(word):
        return not word.isdigit()
    if word[0].isupper() and re.split(r"['’]", word)[0] != "I":
        return not opens or word[1:] != word[1:].lower()
    return False


def _opens(line: str, at: int) -> bool:
    """The word at ``at`` opens its line (after any list mark) or a sentence, so its capital says
    nothing of a name."""
    before = line[:at].rstrip()
    return not before.strip("-*+> ") or before[-1] in ".!?:;"


@lru_cache(maxsize=4096)
def _form(value: str) -> str:
    """A value's written form, its letters read too: each run of capitals as A, of small letters
    as a, of digits as 9 ("us-west-2" and "eu-central-1" -> "a-a-9"; "A100" and "H100" -> "A9";
    a name -> "Aa")."""
    return _SMALL.sub("a", _CAPITALS.sub("A", _DIGITS.sub("9", value)))


_DIGITS = re.compile(r"\d+")
_CAPITALS = re.compile(r"[A-Z]+")
_SMALL = re.compile(r"[a-z]+")


def _shape(value: str) -> str:
    """A number's written form: its digits as 9 ("£4.20" -> "£9.99")."""
    return re.sub(r"\d", "9", value)


def note_date(path: str) -> date | None:
    """The day a dated note stands for (a weekly summary: its Sunday); None for any other file."""
    try:
        if match := _DAY.search(path):
            return date(int(match[1]), int(match[2]), int(match[3]))
        if match := _WEEK.search(path):
            return date.fromisocalendar(int(match[1]), int(match[2]), 7)
    except ValueError:
        return None  # a name that is no day ("2026-02-30.md", "2026-W99.md")
    return None
