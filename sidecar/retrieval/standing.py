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

An answer's few slots go to what it has not said yet (``one_place``, after the rest, before the
answer is cut to its limit). Each hit is read by its best line: the first of its lines (headings
aside) that matches the most query terms. One line, one place: a hit whose best line is the same
line as a hit's above it (its case and spaces, list marks, an opening day or time, a closing
stop and comments aside: the evergreen file's promoted copy and a week's summary), and whose text
holds no query term that hit lacks, moves to just below the answer: a caller asking for more
still gets it. One mould, one place: a hit whose best line has the frame of hits above it (its
words with each run of values taken out: words with a capital or a digit in them, quoted text;
as many words, at most one plain word in place of another, two in common) and holds no query
term they lack gives way to the first hit below that holds one ("Glenrock Services installed the
heat-pump" / "Ashdown Services installed the tumble-dryer", asked "which garage services the
car"); with none below, it stays. The first line of a mould, a line said once and a line matching
more of the query never move. Nor does a hit that says more than its best line: another of its
lines holding a query term and a value no hit above holds (a form pasted per booking: two
bookings of one group share the group's line, and each its own ref on the line below it). Nor,
for a mould, a line naming the subject the question names as the line above does (two values of
one subject are two answers, "The Corner Deli pays on 45-day terms" / "... 28-day terms").
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
    "one_place",
    "one_place_shown",
    "restated_first",
    "restated_first_picked",
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
L = TypeVar("L")


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


def restated_first_picked(
    shown: Sequence[tuple[T, L | None]],
    read: Sequence[T],
    view: Callable[[T], tuple[str, str, str]],
    tokens: Sequence[str],
    limit: int,
) -> list[tuple[T, L | None]]:
    """``restated_first`` over the hits the graph's lift picked (``shown``: each with its lift),
    each consolidated hit among them (one holding the ``<!-- from ... -->`` comment a run writes
    after a line it rolled up: the evergreen file's promoted lines, a week's summary) joined by the
    best hit read below it (``read``, best first; it comes without a lift) that restates it, cut to
    ``limit``. The lift orders by the graph's names, so a newer line saying the subject otherwise
    ("ledger-recon" for the entity "ledger-recon service") can be passed over while the
    consolidated line it changes is picked: it comes in above that line, and the last hit picked
    makes room. Nothing else read below comes in."""
    pair: Callable[[tuple[T, L | None]], tuple[str, str, str]] = lambda item: view(item[0])  # noqa: E731
    raised = [item for item in shown if "<!-- from " in view(item[0])[2]]
    if not raised:
        return restated_first(shown, pair, tokens)
    taken = {id(hit) for hit, _ in shown}
    newer: list[tuple[T, L | None]] = []
    for up in raised:  # the best hit read below that restates it, one at most
        for hit in read:
            item: tuple[T, L | None] = (hit, None)
            if id(hit) not in taken and restated_first([up, item], pair, tokens)[0] is item:
                newer.append(item)
                taken.add(id(hit))
                break
    return restated_first([*shown, *newer], pair, tokens)[:limit]


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
        values = [  # a word the query asked for is the subject, not a value (``_asked``)
            word for start, end, word in line.candidates if not _asked(line.raw, start, end, spans)
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


def _asked(raw: str, start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether the word at ``start:end`` of a line is what the query asked for: it holds a query
    term, and nothing it writes beside the terms is a number. A number written onto the subject's
    name is its value: "which python image" asks for "python:3.11-slim", "which postgres" for
    "postgres-15", while "ci-runner-2" asked as "ci runner 2" stays the subject."""
    inside = [(max(a, start), min(b, end)) for a, b in spans if a < end and start < b]
    if not inside:
        return False
    rest, at = [], start
    for a, b in sorted(inside):
        rest.append(raw[at:a])
        at = max(at, b)
    rest.append(raw[at:end])
    return not any(ch.isdigit() for part in rest for ch in part)


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
    candidates = [(w.start(), w.end(), w.group()) for w in _value_matches(line)]
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


def _value_matches(line: str) -> list[re.Match[str]]:
    """The words of ``line`` that are values (``_is_value``), a unit aside (``_a_unit``)."""
    return [
        w
        for w in _VALUE_LIKE.finditer(line)
        if _is_value(w.group(), opens=_opens(line, w.start())) and not _a_unit(line, w)
    ]


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


def one_place(
    ranked: Sequence[T], view: Callable[[T], tuple[str, str, str]], tokens: Sequence[str], limit: int
) -> list[T]:
    """``ranked`` (best first, more than the ``limit`` an answer shows when the search read more)
    with the answer's slots kept for what it has not said yet (module docstring): among its first
    ``limit``, a hit whose best line is the same line as a hit's above it moves to just below the
    ``limit``, and one whose best line is of the mould of lines above it, matching no query term
    they lack, gives way to the first hit below that matches one; neither when another of its
    lines says what is asked with a value not shown above (``_says_more``), nor a mould line of the
    named subject of a line above (``_same_subject``). ``view``: a hit's path, heading
    and text; ``tokens``: the query's tokens (``snippet.query_tokens``). No hit is dropped."""
    if len(ranked) < 2 or limit < 2 or not tokens:
        return list(ranked)
    terms = _terms(tokens)
    texts = [view(item)[2] for item in ranked]
    known: dict[int, frozenset[int]] = {}  # the query terms each hit's text holds, read when asked

    def held(i: int) -> frozenset[int]:
        if i not in known:
            known[i] = held_terms_each([texts[i]], terms)[0]
        return known[i]

    best: dict[int, _Best | None] = {}
    order = list(range(len(ranked)))
    moved: list[int] = []
    at = 1
    while at < min(limit, len(order)):
        signs = _signs(texts[order[at]])
        near = [i for i in order[:at] if not signs.isdisjoint(_signs(texts[i]))]
        mine = _best_of(best, order[at], texts, terms) if near else None
        if mine is None:
            at += 1  # no line of it is a line above again, nor of a mould of one (read without the query)
            continue
        own = frozenset(_line_signs(mine.frame))
        above = [
            (i, line)
            for i in near
            if not own.isdisjoint(_signs(texts[i])) and (line := _best_of(best, i, texts, terms)) is not None
        ]
        same = [i for i, line in above if line.key == mine.key]
        mould = [(i, line) for i, line in above if line.key != mine.key and _one_mould(line.frame, mine.frame)]
        if not same and not mould:
            at += 1
            continue
        if any(held(order[at]) <= held(i) for i in same) and not _says_more(texts, order, at, mine.key, terms):
            moved.append(order.pop(at))  # the same line again, and nothing more
            continue
        theirs = frozenset().union(*(held(i) for i, _ in mould)) if mould else frozenset()
        if (
            not mould
            or not held(order[at]) <= theirs
            or _says_more(texts, order, at, mine.key, terms)
            or _same_subject(texts[order[at]], mine, [(texts[i], line) for i, line in mould], terms)
        ):
            at += 1
            continue
        giver = next((k for k in range(at + 1, len(order)) if not held(order[k]) <= theirs), None)
        if giver is not None:  # a line of the mould again, matching nothing new: the two swap places
            order[at], order[giver] = order[giver], order[at]
        at += 1
    if not moved:
        return [ranked[i] for i in order]
    return [ranked[i] for i in (*order[:limit], *moved, *order[limit:])]


def _says_more(texts: list[str], order: list[int], at: int, key: str, terms: list[str]) -> bool:
    """Whether the hit at ``at`` says, on a line other than its best (``key``), what no hit above it
    has said: a value none of them holds, on a line holding a query term (a form pasted per
    booking, its own ref on the line under the group's line the question matches best). A value on
    a line holding no query term is other business (the rest of a day's note) and says nothing of
    what is asked."""
    others = [(line, values) for k, line, values in _line_values(texts[order[at]]) if k != key and values]
    if not others:
        return False
    shown = frozenset().union(*(values for i in order[:at] for _, _, values in _line_values(texts[i])))
    new = [line for line, values in others if not values <= shown]
    return bool(new) and any(held_terms_each(new, terms))


def _same_subject(text: str, mine: _Best, theirs: list[tuple[str, _Best]], terms: list[str]) -> bool:
    """Whether the names of a hit's best line that hold a query term (the subject the question
    names) are all names of one line of its mould above: the two lines then say two values of one
    subject ("The Corner Deli pays on 45-day terms" / "... 28-day terms"), two answers to the
    question, not a repeat; ``newest_first`` orders them."""
    named = [run for run in _runs(_raw_of(text, mine.key)) if any(held_terms_each([run], terms))]
    return bool(named) and any(all(run in _runs(_raw_of(above, line.key)) for run in named) for above, line in theirs)


def _raw_of(text: str, key: str) -> str:
    """The line of a chunk read as ``key`` (``_plain_lines``), as written."""
    return next((raw for raw, line in _plain_lines(text) if line.key == key), "")


@lru_cache(maxsize=4096)
def _runs(raw: str) -> tuple[str, ...]:
    """A line's names: each run of words with a capital or a digit in them, as ``_normal`` reads a
    line's values (its comments, opening marks, day and time aside)."""
    line = _bare(raw)
    runs: list[list[str]] = []
    last = -2
    for n, word in enumerate(_FRAME_WORD.findall(line)):
        if _DIGIT.search(word) or word != word.lower():
            if last == n - 1:
                runs[-1].append(word)
            else:
                runs.append([word])
            last = n
    return tuple(" ".join(run) for run in runs)


@lru_cache(maxsize=4096)
def _line_values(text: str) -> tuple[tuple[str | None, str, frozenset[str]], ...]:
    """Each line of a chunk (headings and comments aside) as ``_normal`` keys it (None for prose),
    as written (its opening marks, day and time aside) and with the values it holds
    (``_is_value``: names, identifiers, numbers with a unit or a separator, dates)."""
    out = []
    for raw in text.split("\n"):
        if raw.lstrip().startswith("#"):
            continue
        line = _bare(raw)
        if not line:
            continue
        normal = _normal(raw)
        values = frozenset(w.group() for w in _value_matches(line))
        out.append((normal.key if normal is not None else None, line, values))
    return tuple(out)


def one_place_shown(
    shown: Sequence[tuple[T, L | None]],
    read: Sequence[T],
    view: Callable[[T], tuple[str, str, str]],
    tokens: Sequence[str],
) -> list[tuple[T, L | None]]:
    """``one_place`` over an answer's hits (``shown``: each with its lift, None without) and the
    hits read below them (``read``: every hit read, best first, ``shown``'s among them), as many
    hits as ``shown``: a hit that comes up from below comes without a lift."""
    if len(shown) < 2:
        return list(shown)
    taken = {id(hit) for hit, _ in shown}
    ranked: list[tuple[T, L | None]] = [*shown, *((hit, None) for hit in read if id(hit) not in taken)]
    return one_place(ranked, lambda item: view(item[0]), tokens, len(shown))[: len(shown)]


class _Best(NamedTuple):
    """A hit's best line (the first matching the most query terms) as ``one_place`` compares it: the
    line normalised (``key``) and its frame (its words with the values taken out)."""

    key: str
    frame: tuple[str, ...]


def _best_of(cache: dict[int, _Best | None], at: int, texts: list[str], terms: list[str]) -> _Best | None:
    """``_best``, read once an answer."""
    if at not in cache:
        cache[at] = _best(texts[at], terms)
    return cache[at]


def _best(text: str, terms: list[str]) -> _Best | None:
    """The first of a chunk's lines (headings and prose aside, ``_plain_lines``) that matches the
    most query terms, as ``_Best``; None when none matches one."""
    lines = _plain_lines(text)
    if not lines:
        return None
    held = held_terms_each([raw for raw, _ in lines], terms)
    top = max(len(found) for found in held)
    return None if not top else next(line for (_, line), found in zip(lines, held, strict=True) if len(found) == top)


@lru_cache(maxsize=4096)
def _plain_lines(text: str) -> tuple[tuple[str, _Best], ...]:
    """A chunk's lines as ``_Best`` with each as written, headings and lines of prose aside (with
    no other line, its headings are read as lines); a pure function of the chunk, kept for the chunks searches
    meet again."""
    raws = text.split("\n")
    found = [(raw, line) for raw in raws if not raw.lstrip().startswith("#") and (line := _normal(raw)) is not None]
    if not found:  # no line but headings: read as lines
        found = [(raw, line) for raw in raws if (line := _normal(raw.lstrip("# "))) is not None]
    return tuple(found)


@lru_cache(maxsize=4096)
def _signs(text: str) -> frozenset[int]:
    """The signs of a chunk's lines (``_line_signs``): two chunks share none when no line of one is
    a line of the other again or of its mould."""
    return frozenset(sign for _, line in _plain_lines(text) for sign in _line_signs(line.frame))


def _line_signs(frame: tuple[str, ...]) -> list[int]:
    """Hashes two frames of one mould (``_one_mould``) share at least one of: the frame itself; its
    first two words or its last two when it has four or more (one word in place of another leaves
    one pair whole); each word masked in turn when it has three."""
    n = len(frame)
    signs = [hash(frame)]
    if n >= 4:
        signs += [hash((n, 0, frame[0], frame[1])), hash((n, 1, frame[-2], frame[-1]))]
    elif n == 3:
        signs += [hash((n, k, *frame[:k], *frame[k + 1 :])) for k in range(3)]
    return signs


#: What a line opens with that says nothing of what it says: list marks, a check box, a day, a time.
_LEAD = re.compile(
    r"^(?:[\s>*+-]|\[[ xX]\]|\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]m)?\b|[:|,])+",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"(?<!\w)(?:'[^']+'|\"[^\"]+\"|‘[^’]+’|“[^”]+”)(?!\w)")
_FRAME_WORD = re.compile(r"\w+(?:[.:/,'’-]\w+)*")


def _bare(raw: str) -> str:
    """A line without its comments and its opening marks, day and time (``_LEAD``)."""
    return _LEAD.sub("", _COMMENT.sub(" ", raw).strip())


def _normal(raw: str) -> _Best | None:
    """A line as ``_Best``: its comments, its opening marks, day and time and its closing stop taken
    out, its spaces and case made one; its frame, each run of words with a capital or a digit in
    them (a name, a number, an identifier) or of quoted text read as one value. None for an empty
    line or one of prose."""
    line = _bare(raw).strip().rstrip(".!;, ")
    if not line or len(line) > LINE_CHARS:
        return None
    frame: list[str] = []
    for word in _FRAME_WORD.findall(_QUOTED.sub(" 0 ", line)):
        plain = word if not (_DIGIT.search(word) or word != word.lower()) else ""
        if plain or not frame or frame[-1]:
            frame.append(plain)
    return _Best(" ".join(line.lower().split()), tuple(frame))


def _one_mould(theirs: tuple[str, ...], mine: tuple[str, ...]) -> bool:
    """Whether two frames are of one mould: as many words, a value in them, at least two plain
    words in common and at most one other plain word in place of another."""
    if len(theirs) != len(mine) or "" not in mine:
        return False
    apart = sum(1 for a, b in zip(theirs, mine, strict=True) if a != b)
    common = sum(1 for a, b in zip(theirs, mine, strict=True) if a == b and a)
    return apart <= 1 and common >= 2
