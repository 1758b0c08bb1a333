"""Changed values found by what the newer line says, not by its grammar.

``supersede.claim`` reads "<subject> is/moved to <value>" lines. People write changes many other
ways: "We replaced Jenkins with GitHub Actions for CI", "Upgraded Postgres on the primary from 14
to 16", "The nightly backup now runs at 03:00 instead of 01:00", "We no longer deploy on Fridays".
Here a newer line changes an older one when
- both share at least two content words, and the shared words carry at least ``COVERAGE`` of the
  older line's words, weighted by rarity (a rare word such as a service name counts for more than
  "service"), and of its words that are no values (a word with a digit, a dotted, slashed or
  hyphenated identifier or one in snake case, a capitalised word past a line's first): they speak of the same subject
  and attribute ("invoice export kicks off at 03:30" and "search reindex kicks off at 07:00
  instead of 03:30" share a time, not a subject);
- and the newer line carries a change signal (``SIGNAL``: now, instead of, switched, moved, migrated,
  upgraded, replaced, no longer, from ... to ...) and says something the older did not (a newer
  line holding every word of the older one and more loses nothing when it ranks first), and names
  a value of the older line or one of its own when the older names any (``_valueless``);
- and the two lines do not both name the same two values or more (two statements of one change).

A value replaced with no signal ("hosted on ovh-gra7", later "hosted on gcp-europe-west4") is left
to ``supersede.claim``'s reading and the search's recency prior: read by its values alone, every
log line that differs in a number ("ticket 4411" / "ticket 5012", "12 errors" / "30 errors") would
be a changed value, and their old lines would pile up under ``## Superseded``.

Lines reporting what was done ("Reviewed ...") are never the older line. Candidates are found
through the newer line's rarest words (an inverted index), never by comparing every pair, so a
run over a full tier stays close to linear.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import date
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from sidecar.consolidate.periods import note_day, period_of
from sidecar.consolidate.promote import COMMENT, is_event, normalised
from sidecar.consolidate.routine import routine_by
from sidecar.consolidate.supersede import Said
from sidecar.consolidate.text import CLAUSE_TRIM, LINE_CACHE, SIGNAL, clause_spans, form
from sidecar.consolidate.text import learn_forms as learn_words

__all__ = [
    "ANCHORED_COVERAGE",
    "COVERAGE",
    "MAX_LINE_CHARS",
    "MEANING_COSINE",
    "MEANING_MARGIN",
    "SIGNAL",
    "WORDS_COSINE",
    "Vectors",
    "WordVectors",
    "changed_by_meaning",
    "changed_by_signal",
    "changed_by_value",
    "learn_forms",
    "meaning_texts",
    "reading_keys",
    "reverted",
    "routine_said",
    "word_vectors",
]

COVERAGE = 0.55
ANCHORED_COVERAGE = 0.4  # a newer line that names the older value as well covers less of its subject
MIN_STANDING_WEEKS = 2
#: A word said by this many standing lines or fewer is rare among them (``_same_slot``).
FEW_STANDING = 3
MAX_LINE_CHARS = 400  # longer lines are prose or pasted output, not one fact
_PROBE_WORDS = 4  # the newer line's rarest words its older lines are looked up by
_MAX_CANDIDATES = 400
#: Lines naming one value past which it names no one line's subject (``_named_anew``).
_MAX_HOLDERS = 20
#: The fewest words an older line holds for a newer line holding it word for word to restate it (``_quoted``).
_QUOTED_WORDS = 3
_STOP = frozenset(
    str.split(
        "a an the and or but of to in on at by for with from into as is are be been being was were it its this "
        "that these those we us our you your i me my they them their he she there here so than then too very "
        "just also do does did not no now instead longer switched moved migrated upgraded downgraded replaced "
        "replacing swapped changed bumped rotated renamed retired transferred handed over take takes took taken "
        "taking has have had "
        "become became went anymore favour favor will all any one s"
    )
)
#: What is left of a contraction split at its apostrophe ("don't" -> "don", "t"; "we've" -> "ve"): no
#: content word, so two lines both saying "don't" share no subject by it.
_CONTRACTED = frozenset(
    str.split("t ve ll re d m don doesn didn isn aren wasn weren won can couldn shouldn wouldn haven hasn hadn")
)
_WORD = re.compile(r"\w[\w.:/-]*\w|\w")
_APOSTROPHE = re.compile(r"['’]")
_STRUCK = re.compile(r"~~(.+?)~~")
_SENTENCE_START = re.compile(r"(?:^|[.!?;:]\s+|^\s*[-*+]\s+)$")
#: The words the lines being judged write in lower case somewhere (``_reading``): a capitalised
#: word opening a sentence that is one of them is a plain word, read as its form.
_PLAIN: ContextVar[frozenset[str]] = ContextVar("plain_words", default=frozenset())
P = ParamSpec("P")
R = TypeVar("R")


def _reading(fn: Callable[Concatenate[Sequence[Said], P], R]) -> Callable[Concatenate[Sequence[Said], P], R]:
    """Run ``fn`` over its lines with ``_PLAIN`` holding the words they write in lower case."""

    @functools.wraps(fn)
    def wrapper(said: Sequence[Said], /, *args: P.args, **kwargs: P.kwargs) -> R:
        token = _PLAIN.set(frozenset(_lowercase_words(s.text for s in said)))
        try:
            return fn(said, *args, **kwargs)
        finally:
            _PLAIN.reset(token)

    return wrapper


def learn_forms(texts: Iterable[str]) -> None:
    """Read the forms of every word of ``texts`` in one pass of the index's tokenizer, so that
    ``form`` finds them (a word looked up alone is tokenized alone, more slowly)."""
    learn_words(w for text in texts for w in (m.lower() for m in _WORD.findall(text)) if w.isalpha())


#: A weekday said of every week is that day ("on Thursdays" / "on Thursday": one value, no change).
_ONE_DAY = {f"{day}s": day for day in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")}


_EMPHASIS = re.compile(r"\*\*|__")


def _plain(text: str) -> str:
    """A line as its words read: comments aside, and markdown's bold markers ("**Owner:** Dana")
    left out, so a bold label is a label and its first word opens the line as plain text does."""
    return _EMPHASIS.sub("", COMMENT.sub(" ", text))


def _tokens(text: str) -> tuple[tuple[str, bool], ...]:
    """A line's content words in order, each with whether it names a value (``_read_tokens``), as
    the lines being judged write their words (``_PLAIN``)."""
    return _read_tokens(text, _PLAIN.get())


@functools.lru_cache(maxsize=LINE_CACHE)
def _read_tokens(text: str, plain: frozenset[str]) -> tuple[tuple[str, bool], ...]:
    """A line's content words in order (stop words left out; comments aside), each with whether it
    names a value (module docstring). A word written in lower case that names no value is read as
    its form (``_form``: "pickups", "pickup"); any other is lowercased as it is (a weekday's plural
    aside: "Thursdays" is "thursday") ("Installs" in a
    firm's name is no form of "installed", and a name that opens a sentence is no word to stem).
    A capitalised word opening a sentence that the lines being judged write in lower case elsewhere
    is a plain word, read as its form ("Morning milking starts at 5:30" / "Moved morning milking
    to 6:00"; ``_reading``). A possessive's "s" is no word ("the yard's alarm" is "yard alarm"), nor
    is what is left of a contraction ("don't": "don", "t")."""
    text = _plain(text)
    out = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        lower = word.lower()
        if lower in _STOP or (
            lower in _CONTRACTED and _APOSTROPHE.match(text, match.end() if len(lower) > 2 else match.start() - 1)
        ):
            continue
        identifier = any(ch.isdigit() or ch in ".:/-_" for ch in word)  # snake_case names a thing too
        name = len(word) > 1 and word[0].isupper() and not _SENTENCE_START.search(text[: match.start()])
        value = identifier or name
        if not value and word[:1].isupper() and word[1:].islower() and lower in plain:
            out.append((form(lower), False))  # a plain word opening a sentence
            continue
        out.append((form(word) if word.islower() and not value else _ONE_DAY.get(lower, lower), value))
    return tuple(out)


def _words(text: str) -> list[str]:
    """A line's content words in order, values as they are and other words as their forms."""
    return [word for word, _ in _tokens(text)]


def _weights(texts: Iterable[str]) -> dict[str, float]:
    """Each word's weight by its rarity among ``texts``, counted as written: a form weighs what
    its rarest word does ("export" stays rare where "exporter" is a common name). Keyed by the
    words as written and by their forms."""
    df: Counter[str] = Counter()
    total = 1
    for text in texts:
        df.update({w for w in (m.lower() for m in _WORD.findall(COMMENT.sub(" ", text))) if w not in _STOP})
        total += 1
    out: dict[str, float] = {}
    for word, n in df.items():
        weight = math.log(1 + total / n)
        for key in {word, form(word)}:
            out[key] = max(out.get(key, 0.0), weight)
    return out


def _content(text: str) -> frozenset[str]:
    return frozenset(_words(text))


@_reading
def changed_by_signal(said: Sequence[Said]) -> dict[str, Said]:
    """The key of every line a newer signalled line changed -> that newer line (module docstring)."""
    lines = [s for s in said if len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text]
    learn_forms(s.text for s in lines)
    last: dict[str, Said] = {}
    for item in sorted(lines, key=lambda s: s.when):
        last[normalised(item.text)] = item  # the last time each line was said
    content = {key: _content(item.text) for key, item in last.items()}
    values = {key: _values(item.text) for key, item in last.items()}
    df = Counter(w for words in content.values() for w in words)
    weight = _weights(item.text for item in last.values())
    postings: dict[str, list[str]] = {}
    for key, words in content.items():
        for w in words:
            postings.setdefault(w, []).append(key)
    out: dict[str, Said] = {}
    for newer in sorted(lines, key=lambda s: s.when):
        if not SIGNAL.search(newer.text):
            continue
        new_key = normalised(newer.text)
        new_words = content.get(new_key) or _content(newer.text)
        probe = sorted(new_words, key=lambda w: (df.get(w, 0), w))[:_PROBE_WORDS]
        candidates = dict.fromkeys(k for w in probe for k in postings.get(w, ())[:_MAX_CANDIDATES])
        for key in candidates:
            older = last[key]
            if key == new_key or key in out or older.when >= newer.when or is_event(key) or _quoted(key, new_key):
                continue
            if (
                _same_subject(content[key], new_words, values[key], weight)
                and not _same_values(content[key], values[key], new_words, _values(newer.text))
                and not _valueless(older.text, newer.text, content[key], new_words)
            ):
                out[key] = newer
    return out


def _valueless(old: str, new: str, old_words: frozenset[str], new_words: frozenset[str]) -> bool:
    """Whether a newer line leaves out every value the older one names and names none of its own:
    it says something else of the subject, no new value of it ("The orders service is owned by
    Priya" / "The orders service now owns the refunds queue": the service is the owner there, of
    another thing). A value is what ``_values`` reads, a label's name or the name a line opens with."""
    plain = _PLAIN.get()

    def named(text: str) -> frozenset[str]:
        return _values(text) | _labelled_names(text, plain) | ({_opening_name(text, plain)} - {""})

    old_values = named(old)
    return bool(old_values) and not old_values & new_words and not named(new) - old_words


def _quoted(old_key: str, new_key: str) -> bool:
    """Whether a newer line says the older one word for word inside it, with no change signal
    around it: a message quoted after its sender ('> Ines in #payments-oncall, 12:12: "Our PCI
    assessor is Brightline Assurance"'), a copy with an aside. It restates the older line, whatever
    values its sender, channel and time add. Keys are ``normalised`` lines."""
    if len(old_key.split()) < _QUOTED_WORDS:
        return False
    padded = f" {new_key} "
    at = padded.find(f" {old_key} ")
    if at < 0:
        return False
    return not SIGNAL.search(padded[:at] + padded[at + len(old_key) + 1 :])


def _same_subject(
    old: frozenset[str], new: frozenset[str], old_values: frozenset[str], weight: dict[str, float]
) -> bool:
    """Whether the lines share two words or more, and enough of the older one's words, of all of
    them and of those that are no values (its subject and attribute: a shared old value is no
    shared subject), and the newer says more."""
    shared = old & new
    if len(shared) < 2 or not new - old:
        return False

    def covered(words: frozenset[str]) -> bool:
        return sum(weight.get(w, 1.0) for w in shared & words) >= COVERAGE * sum(weight.get(w, 1.0) for w in words)

    return covered(old - old_values or old) and covered(old)


def _same_values(
    old: frozenset[str], old_values: frozenset[str], new: frozenset[str], new_values: frozenset[str]
) -> bool:
    """Whether two lines name the same two values or more, each line every one of them: two
    statements of one change ("Snakemake is gone, we are on Nextflow" / "Nextflow took over from
    Snakemake"), not a change of the first."""
    return len(old_values | new_values) >= 2 and old_values <= new and new_values <= old


def _values(text: str) -> frozenset[str]:
    """The words of a line that name a value (module docstring), lowercased."""
    return frozenset(word for word, value in _tokens(text) if value)


def routine_said(said: Sequence[Said], frames: Collection[frozenset[str]] | None = None) -> list[bool]:
    """For each line, whether it is routine where it was said (``routine.py``): a note's lines
    within its ISO week, a summary's or the evergreen file's within the file; a line holding one
    of ``frames`` (the run's moulds, ``routine.run_frames``) in any of them."""
    short = [n for n, s in enumerate(said) if len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text]
    flags = routine_by([(_week(said[n]), said[n].where, said[n].text) for n in short], frames)
    out = [False] * len(said)
    for n, flag in zip(short, flags, strict=True):
        out[n] = flag
    return out


#: The least share of the days the lines span on which a line's words are said, each day with a
#: value of its own, for the line to be a reading (``_readings``), and the fewest such days.
READING_DAYS = 0.25
READING_MIN_DAYS = 8


def reading_keys(said: Sequence[Said]) -> frozenset[str]:
    """The keys (``normalised``) of the lines of ``said`` that are readings, not facts
    (``_readings``), for the summaries and promotions to tell from facts. The change search still
    reads a reading as changed by the next one: that moves the old readings under ``## Superseded``,
    out of the week's bound, where left in a summary as standing lines they push facts out of it."""
    return frozenset(normalised(said[n].text) for n in _readings(said))


def _readings(said: Sequence[Said]) -> list[int]:
    """The lines that are readings, not facts: the same words said on a quarter of the days or more
    (``READING_DAYS``, eight at least), with values that differ on most of those days ("turbidity:
    0.21 NTU", "reservoir level: 81%" pasted every morning). A fact said nearly every day keeps its
    value, and a routine mould of many words is ``routine.py``'s."""
    days = {s.when[0] for s in said}
    if not days:
        return []
    moulds: dict[frozenset[str], list[int]] = {}
    for n, item in enumerate(said):
        if len(item.text) > MAX_LINE_CHARS or "\n" in item.text:
            continue
        tokens = _tokens(item.text)
        mould = frozenset(w for w, value in tokens if not value)
        if mould and any(value for _, value in tokens):
            moulds.setdefault(mould, []).append(n)
    least = max(READING_MIN_DAYS, READING_DAYS * len(days))
    found: list[int] = []
    for lines in moulds.values():
        by_day: dict[date, set[frozenset[str]]] = {}
        for n in lines:
            by_day.setdefault(said[n].when[0], set()).add(_values(said[n].text))
        if len(by_day) < least:
            continue
        ordered = [by_day[day] for day in sorted(by_day)]
        moved = sum(not (a & b) for a, b in itertools.pairwise(ordered))
        if moved * 2 > len(ordered) - 1:  # the value changes from one of its days to the next on most
            found.extend(lines)
    return found


def _week(item: Said) -> str:
    """The week a line was said in: a note's ISO week; a summary or the evergreen file, its path."""
    return period_of(item.when[0]) if note_day(item.where) is not None else item.where


@_reading
def changed_by_value(said: Sequence[Said], *, routine_left_out: bool = False) -> dict[str, Said]:
    """The key of every standing line a newer line restated with another value -> that newer line.

    A standing line is a statement (no past-tense opening, not ``routine``) said in
    ``MIN_STANDING_WEEKS`` weeks or more (a note's ISO week; a summary or the evergreen file is one
    of its own), with a value (``_values``): a line said on the days of one week only ("nothing
    blocking in sprint 10") is that week's status, not a fact the next week's changes. A newer line,
    first said after the older was last said and not routine either, restates it with another
    value when it brings a value the older line lacks and
    - either lost one of the older line's values (one only: "The QC notebook for moth-traps is
      notebooks/qc_moth.ipynb" and the same of another dataset lose two) and holds every other
      content word of it ("The
      MongoDB servers are at release 5.0" / "Finished the MongoDB rollout, the servers are at
      release 7.0");
    - or names the older value beside the new one and holds two of its other words or more,
      ``ANCHORED_COVERAGE`` of them by rarity ("For build pipelines the team relies on CircleCI" /
      "Dropped CircleCI; build pipelines go through Woodpecker from today").
    When the older line holds two values or more, the newer keeps one of them (the other names
    the subject: in "We are on Redis 6.2" the kept "Redis" is all the subject there is), and the
    older line does not open with the value it lost (a line opens with its subject:
    "ledger-db keeps 14 days of backups" then "audit-db keeps 14 days of backups" are two facts).
    A struck-out older statement followed by a new value ("~~X on tape-3~~ disk-7", ``_struck``)
    is a change too, and so is a newer line that names the older's subject by its noun phrase and
    fills its value's slot with a value of the same kind while its other words change
    (``_same_slot``: "New slot for the sensor ingest: 21:10 UTC"). A line's opening word counts as
    a value there when it is a name never written in lower case ("Haddad looks after the boat
    booking"), and so does a name given after a label's colon (``_labelled_names``: "Van
    tracking: Samsara"). A newer line the same as the older word for word, every value kept, but for a
    word of its subject swapped for a new one is another subject (``_other_subject``: "The router
    warranty runs out in August 2028" / "The e-bike warranty runs out in August 2028"). A newer line
    that says the older word for word inside it with no change signal around it restates it, whatever
    its sender, channel and time add (``_quoted``: '> Ines in #payments-oncall, 12:12: "<the line>"').
    No change word is needed; routine lines, which differ in a number every day, are never read
    so. Two facts in one mould whose subject is a plain word in the middle of the line and whose
    value is shared are told apart; names alone cannot always tell a subject from a value.
    Candidates are found through an inverted index of the older lines' words that are no values.
    ``routine_left_out``: the caller has left the routine lines out already (``routine_said``).
    """
    logged = [False] * len(said) if routine_left_out else routine_said(said)
    lines = [s for s, log in zip(said, logged, strict=True) if not log]
    lines = [s for s in lines if len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text]
    learn_forms(s.text for s in lines)
    first: dict[str, Said] = {}
    last: dict[str, Said] = {}
    sources: dict[str, set[str]] = {}
    for item in sorted(lines, key=lambda s: s.when):
        key = normalised(item.text)
        first.setdefault(key, item)
        last[key] = item
        sources.setdefault(key, set()).add(_week(item))
    content = {key: _content(item.text) for key, item in last.items()}
    lower = _lowercase_words(s.text for s in said)
    values = {key: _values(item.text) | _labelled_names(item.text, lower) for key, item in last.items()}
    weight = _weights(item.text for item in last.values())
    names = {key: _opening_name(item.text, lower) for key, item in last.items()}
    # how many of the lines open with each pair of words: a pair many open with is a mould's frame
    openers = Counter(tuple(content_seq[:2]) for content_seq in (_words(item.text) for item in last.values()))
    postings: dict[str, list[str]] = {}
    standing: list[frozenset[str]] = []
    holders = _Holders(first, last, {key: values[key] | ({names[key]} - {""}) for key in last})
    for key in last:
        subject = content[key] - values[key] - {names[key]}
        if len(sources[key]) < MIN_STANDING_WEEKS or is_event(key) or not (values[key] or names[key]):
            continue
        standing.append(subject)
        holders.standing(key)
        if subject or len(values[key]) >= 2:  # "We are on Redis 6.2": one value names the subject
            for word in subject or values[key]:
                postings.setdefault(word, []).append(key)
    # rarity among the standing lines: what tells a fact from the others in its mould ("audit" in
    # "The audit service listens on port 7863"), however often the log names it
    standing_df = Counter(w for words in standing for w in words)
    rarity = {w: math.log(1 + (len(standing) + 1) / n) for w, n in standing_df.items()}
    few = math.log(1 + (len(standing) + 1) / FEW_STANDING)
    cache: dict[tuple[str, bool], _Slots] = {}

    def _slots(key: str, text: str, named: bool = True) -> _Slots:
        """A line's slots; ``named``: its opening name counts as a value (``_opening_name``)."""
        if (key, named) not in cache:
            cache[key, named] = _Slots(text, values[key] | ({names[key]} if named else set()) - {""})
        return cache[key, named]

    out: dict[str, Said] = {}
    for newer in sorted(first.values(), key=lambda s: s.when):
        new_key = normalised(newer.text)
        new_words = content[new_key]
        signalled = bool(SIGNAL.search(newer.text))
        found = [k for w in new_words for k in postings.get(w, ())[:_MAX_CANDIDATES]]
        for key in dict.fromkeys([*found, *holders.naming(new_words)]):
            if key == new_key or key in out or last[key].when >= newer.when or _quoted(key, new_key):
                continue  # an older line said again after the newer one was said is still current
            old_text = last[key].text
            # both lines open with one capitalised word: the subject they share, no name either
            # lost ("Late clinic runs Tuesday evenings till 8" / "Late clinic moved to Thursdays"),
            # unless many lines open with the same two words: a mould's frame ("Alarm code for the
            # shop front is 8694#", "Alarm code for the container is 7921#": two subjects)
            named = (
                not names[key] or names[key] != names[new_key] or openers[tuple(_words(old_text)[:2])] > FEW_STANDING
            )
            old_slots, new_slots = _slots(key, old_text, named), _slots(new_key, newer.text, named)
            if _other_subject(old_slots, new_slots):
                continue
            if (
                _struck(newer.text, content[key], values[key])
                or (
                    bool(values[key])
                    and _restated(
                        content[key], values[key], new_words, values[new_key], weight=weight, opening=_opening(old_text)
                    )
                )
                or (
                    (not _reports(newer.text, new_key) or bool(SIGNAL.search(newer.text)))
                    and _same_slot(
                        old_slots, new_slots, rarity, names[key] if named else "", few, fresh=holders.anew(new_key)
                    )
                )
                or _named_left(
                    old_text,
                    newer.text,
                    old=content[key],
                    old_values=values[key],
                    new=new_words,
                    new_values=values[new_key],
                    weight=weight,
                )
                or (
                    not newer.text.rstrip().endswith("?")
                    and _given_anew(
                        old_slots,
                        new_slots,
                        holders,
                        (key, new_key),
                        rarity,
                        signalled=signalled,
                        done=is_event(new_key),
                    )
                )
            ):
                out[key] = newer
    return out


class _Holders:
    """Which lines name each value: a value no other line said before a standing line names is
    that line's own ("Pedalsure" in "Our insurance partner for new bikes is Pedalsure"), and one
    no line said before a newer line names is new there."""

    def __init__(
        self, first: Mapping[str, Said], last: Mapping[str, Said], values: Mapping[str, frozenset[str]]
    ) -> None:
        self.first, self.last, self.values = first, last, values
        self.lines: dict[str, list[str]] = {}
        for key, named in values.items():
            for value in named:
                self.lines.setdefault(value, []).append(key)
        self.standing_lines: dict[str, list[str]] = {}
        self.earliest = {v: min(first[k].when for k in keys) for v, keys in self.lines.items()}

    def standing(self, key: str) -> None:
        """Take ``key`` as a standing line, to be found by its values (``naming``)."""
        for value in self.values[key]:
            self.standing_lines.setdefault(value, []).append(key)
            if shape := _shape(value):  # found by another version of it too ("ts-2.2", "ts-4.2")
                self.standing_lines.setdefault(shape, []).append(key)

    def naming(self, words: frozenset[str]) -> list[str]:
        """The standing lines naming one of ``words`` as a value that few lines name: a newer line
        naming an older value anew without a word of its subject ("#plat-alerts is
        #platform-pager now") is found by the value."""
        looked = sorted((words | {_shape(w) for w in words}) & self.standing_lines.keys())
        return [k for w in looked if len(self.standing_lines[w]) <= _MAX_HOLDERS for k in self.standing_lines[w]]

    def own(self, key: str) -> frozenset[str]:
        """The values of ``key`` that no other line said before it was last said names."""
        until = self.last[key].when
        return frozenset(
            v
            for v in self.values[key]
            if len(self.lines[v]) <= _MAX_HOLDERS and all(k == key or self.first[k].when > until for k in self.lines[v])
        )

    def anew(self, key: str) -> frozenset[str]:
        """The values of ``key`` that no line said before it names."""
        since = self.first[key].when
        return frozenset(v for v in self.values[key] if self.earliest[v] >= since)


def _given_anew(
    old: _Slots,
    new: _Slots,
    holders: _Holders,
    keys: tuple[str, str],
    rarity: dict[str, float],
    *,
    signalled: bool,
    done: bool,
) -> bool:
    """Whether a newer line (no question) gives the older line's value anew without its words: by
    naming a value of the older line's own beside a new one (``_named_anew``), by giving another
    version of one (``_versioned``), by saying its subject in fewer words (``_narrowed``) or by
    giving it as a label (``_labelled_anew``). A report of work done (``done``: "Collected the
    spare key from Mrs Patel and left it with the Hendersons") that does not say it changed
    something is read the first way only, a word of the subject kept: what was done with the
    old value and a new one is where the value went; the other readings of a one-off report
    would take its values for a fact's. ``keys``: the older's and the newer's."""
    old_key, new_key = keys
    if done and not signalled:
        return _named_anew(old, new, holders.own(old_key), holders.anew(new_key), signalled=False)
    return (
        _named_anew(old, new, holders.own(old_key), holders.anew(new_key), signalled=signalled)
        or _versioned(old, new, holders.own(old_key), signalled=signalled)
        or _narrowed(old, new, rarity)
        or _labelled_anew(old, new)
    )


def _named_anew(old: _Slots, new: _Slots, own: Collection[str], fresh: Collection[str], *, signalled: bool) -> bool:
    """Whether a newer line names a value that only the older line names among the standing lines
    beside a value of its own of the same kind, and keeps a word of the older line's subject or
    says it changed something (``SIGNAL``): "Our insurance partner for new bikes is Pedalsure" /
    "Pedalsure is Velocover since the buyout, new leaflets came in the post"; "The espresso machine
    is serviced by BeanTech" / "Coffee machine maintenance is with Crema Engineering now, BeanTech
    never turned up". A value that other lines said before it name too (a person with several
    duties) tells no subject, a value said before the newer line is no new one (the line names
    a trial's value as the one it comes back from: "Gone back to Impregum, Aquasil kept tearing"),
    and a weekday is no name (``_alike``)."""
    named = frozenset(v for v in old.values & new.words if v in own)
    # a capitalised word opening the newer line may be a verb nobody writes in lower case ("Gone
    # back to Impregum"): no value given anew; nor is a weekday the older line names ("Mondays")
    gained = frozenset(
        v for v in new.values - old.words - set(new.seq[:1]) if v in fresh and _ONE_DAY.get(v, v) not in old.words
    )
    if not named or not gained or _mirrors(old, new):
        return False
    phrases = old.runs_of(named)
    if not any(set(run) <= new.words for run in phrases):
        return False  # one word of a longer name ("Leeds" of "Bakery Exchange Leeds") is no name of it
    if not any(_alike(g, v) for g in gained for v in named):
        return False
    if (old.words - old.values) & new.words:
        return True
    return signalled and new.seq[:1] == [w for w in old.seq if w in named][:1]  # "X is Y now"


def _versioned(old: _Slots, new: _Slots, own: Collection[str], *, signalled: bool) -> bool:
    """Whether a newer line gives another version of a name the older line alone names: the name
    with another number after it ("Registers are kept in ClassBook 2" / "ClassBook 3 logs everyone
    out at five, tell the teachers to save their registers"), or an identifier of its own written
    with other digits ("Wheels get trued on the Park TS-2.2" / "Truing stand upgraded to the
    TS-4.2"); and keeps a word of the older line's subject or says it changed something."""
    if _mirrors(old, new):
        return False
    before, after = _numbered(old.seq), _numbered(new.seq)
    moved = any(name in own and after.get(name, number) != number for name, number in before.items())
    if not moved:
        shapes = {_shape(w) for w in new.values - old.words} - {""}
        moved = any(v in own and _shape(v) in shapes for v in old.values - new.words)
    return moved and (signalled or bool((old.words - old.values) & new.words))


def _numbered(seq: Sequence[str]) -> dict[str, str]:
    """Each name of ``seq`` (a word of letters) written with a number after it: its version."""
    return {a: b for a, b in itertools.pairwise(seq) if a.isalpha() and _kind(b) in ("count", "dotted")}


_DIGITS = re.compile(r"\d+")
_DOTTED_IN = re.compile(r"\d\.\d")


def _shape(value: str) -> str:
    """A versioned identifier with its digits left out ("ts-2.2" -> "ts-#.#"): two identifiers of
    one shape are one name's versions. "" for a value of fewer than two letters (a count, "#5011"),
    a path, and an identifier whose number has no dot: a serial number ("INC-3849", "PR-5011")
    names one thing of many (two incidents are two facts, not two versions of one)."""
    if not _DOTTED_IN.search(value) or sum(ch.isalpha() for ch in value) < 2 or "/" in value:
        return ""
    return _DIGITS.sub("#", value)


def _narrowed(old: _Slots, new: _Slots, rarity: dict[str, float]) -> bool:
    """Whether a newer line says the older line's subject again in fewer words with another value
    in place of one it lost: every word of it that is no value is a word of the older line, two
    of them or more name its subject (its rarest word among the standing lines one of them), and
    it gains a value of the kind of one it lost: "The data team standup happens every morning at
    9:30, on the usual Meet link" / "The data team standup is at 10:05". An older line that opens
    with the value it lost speaks of another subject ("ledger-db keeps 14 days of backups" /
    "audit-db keeps 14 days of backups")."""
    subject = old.words - old.values
    plain = new.words - new.values
    lost = old.values - new.words
    gained = new.values - old.words
    if not subject or not lost or not gained or not plain <= subject or len(plain) < 2 or _mirrors(old, new):
        return False
    if old.seq[0] in lost or not _holds_rarest(subject, plain, rarity):
        return False
    return any(_alike(g, w) for g in gained for w in lost)


def _labelled_anew(old: _Slots, new: _Slots) -> bool:
    """Whether a newer line gives the older line's subject as its label and a value of its own
    after it: the label's words (two or more) are the older line's, every word of it that is no
    value among them, and the newer line gains a value of the kind of one the older lost ("Nina
    Castell is our finance contact for the monthly revenue extract" / "Finance contact for the
    monthly revenue extract: Tobias Wren"). A label of one word may be a topic of several facts
    ("Invoices: Sage" after "Bev does the storage invoicing on Saturdays"): no subject alone."""
    label = set(new.label)
    subject = old.words - old.values
    lost = old.values - new.words
    gained = new.values - old.words - label
    if len(label) < 2 or not subject <= label <= old.words or not lost or not gained:
        return False
    return any(_alike(g, w) for g in gained for w in lost)


def _holds_rarest(
    subject: frozenset[str] | set[str], words: frozenset[str] | set[str], rarity: dict[str, float]
) -> bool:
    """Whether ``words`` hold the rarest word of ``subject`` among the standing lines."""
    top = max(rarity.get(w, 0.0) for w in subject)
    return any(rarity.get(w, 0.0) >= top for w in subject & words)


@_reading
def reverted(said: Sequence[Said], stale: Mapping[str, Said]) -> dict[str, Said]:
    """``stale`` (the key of every line no longer current -> the newer line that changed it) with
    the changes taken back: a line said after a change that names again the value the change
    replaced, of the same subject, retires the change, and the older line is current again. "The
    weekly groceries come from Ocado", then "Giving Waitrose a go for the weekly groceries", then
    "Back to Ocado for the weekly groceries - Waitrose substituted too much": Ocado is current.

    - The value taken back is one of the older line's values the change does not name.
    - The later line names it, the older line's other values, and most of its subject: two of its
      words that are no values or more, ``ANCHORED_COVERAGE`` of them by rarity (as
      ``changed_by_value`` reads an older value named beside a new one).
    - It does not name the value as the one left (``_left``: "Buildkite took over from Jenkins"
      after "Buildkite runs the CI builds now" is the change said again) and is no report of work
      done (``is_event``: "Archived the old Jenkins jobs"). A change that names the value it
      replaced ("Replaced Jenkins with Buildkite") is never taken back: a later line naming
      Jenkins may be the same change said again.
    Candidates are found through an index of the later lines' words, so a run stays linear."""
    lines = [s for s in said if len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text]
    learn_forms(s.text for s in lines)
    first: dict[str, Said] = {}
    last: dict[str, Said] = {}
    for item in sorted(lines, key=lambda s: s.when):
        key = normalised(item.text)
        first.setdefault(key, item)
        last[key] = item
    out = dict(stale)
    wanted = {v for key in stale if key in last for v in _values(last[key].text)}  # values a change may take back
    by_word: dict[str, list[str]] = {}
    for key, item in first.items():
        if not is_event(key):
            for word in _content(item.text) & wanted:  # a value opening a line is no value there: "Jenkins is back"
                by_word.setdefault(word, []).append(key)
    weight: dict[str, float] | None = None
    for old_key, change in sorted(stale.items(), key=lambda kv: kv[1].when):
        older = last.get(old_key)
        change_key = normalised(change.text)
        if older is None or change_key not in last:
            continue
        old_values, old_words = _values(older.text), _content(older.text)
        change_words = _content(change.text)
        taken = old_values - change_words
        subject = old_words - old_values
        if not taken or not subject:
            continue
        until = last[change_key].when
        for key in dict.fromkeys(k for v in sorted(taken) for k in by_word.get(v, ())[:_MAX_CANDIDATES]):
            later = first[key]
            if key in (old_key, change_key) or later.when <= until:
                continue
            words = _content(later.text)
            if not old_values - taken <= words:
                continue  # the older line's other values name its subject: "Disk use on ceph-ocean ..."
            if _left(later.text, taken):
                continue
            shared = subject & words
            # naming the trial's value beside the one taken back, one subject word is enough
            # ("Calves are reared on Volac milk powder", "Trying Bonanza milk powder on the calves",
            # "Calves back on Volac, the Bonanza gave half of them scours")
            if not (shared and (_values(change.text) - old_values) & words):
                if len(shared) < min(2, len(subject)):
                    continue
                if weight is None:
                    weight = _weights(s.text for s in last.values())
                held = sum(weight.get(w, 1.0) for w in shared)
                if held < ANCHORED_COVERAGE * sum(weight.get(w, 1.0) for w in subject):
                    continue
            out.setdefault(change_key, later)
            out.pop(old_key, None)
            break
    return out


_LEFT = re.compile(r"\b(?:from|instead\s+of|replac\w*|not|no\s+longer|off|than|over)\s+(?:the\s+)?$", re.IGNORECASE)


def _left(text: str, values: frozenset[str]) -> bool:
    """Whether ``text`` names one of ``values`` as the value left ("took over from Jenkins",
    "instead of 03:30", "not Greenway"), not as the one it comes back to."""
    return any(_left_marks(text, value) for value in values)


def _left_marks(text: str, value: str) -> set[str]:
    """The words that name ``value`` as the value left in ``text`` ("from", "instead of", "not" ...)."""
    text = COMMENT.sub(" ", text)
    out = set()
    for match in re.finditer(rf"(?<![\w.:/-]){re.escape(value)}(?![\w:/-]|\.\w)", text, re.IGNORECASE):
        mark = _LEFT.search(text[: match.start()])
        if mark:
            out.add(" ".join(mark.group(0).lower().split()[:2]))
    return out


_HEAD = re.compile(r"(\w[\w-]*)\s+(?:is|are|was|were)\b")
_COPULA_WORD = re.compile(r"\b(?:is|are|was|were)\b")


class _Slots:
    """A line's content words in order (stop words left out) and those of them that name a value."""

    __slots__ = ("before", "heads", "label", "pairs", "plain", "seq", "values", "words")

    def phrase_of(self, lost: frozenset[str]) -> tuple[str, ...]:
        """The one name phrase (values side by side: "Sentinel Alarms") that holds every word of
        ``lost``, or () when ``lost`` is empty or spans more than one."""
        runs: list[list[str]] = [[]]
        for word in self.seq:
            if word in self.values:
                runs[-1].append(word)
            elif runs[-1]:
                runs.append([])
        held = [tuple(run) for run in runs if lost.intersection(run)]
        return held[0] if lost and len(held) == 1 and lost <= set(held[0]) else ()

    def runs_of(self, lost: frozenset[str]) -> list[tuple[str, ...]]:
        """The name phrases (values side by side) that hold a word of ``lost``, in order."""
        runs: list[list[str]] = [[]]
        for word in self.seq:
            if word in self.values:
                runs[-1].append(word)
            elif runs[-1]:
                runs.append([])
        return [tuple(run) for run in runs if lost.intersection(run)]

    def __init__(self, text: str, values: frozenset[str] | set[str]) -> None:
        self.seq = _words(text)
        self.label = _label_words(text)
        plain = _plain(text)
        # its words written in lower case, as their forms: no name, code or label among them
        self.plain = frozenset(form(w) for w in _WORD.findall(plain) if w.islower())
        # the words a copula follows: the last word of what the line speaks of ("gateway" in
        # "The payments api gateway is Kong")
        self.heads = frozenset(form(m.group(1).lower()) for m in _HEAD.finditer(plain))
        # the words before its first copula that name no value: what the line says is so
        # ("pipelines" in "Our pipelines are orchestrated with Airflow on the ETL virtual machine",
        # "clinic alarm company" in "The clinic's alarm company is Redline"); none when it names a
        # value there ("Census is what we use for reverse ETL")
        self.values = frozenset(values)
        copula = _COPULA_WORD.search(plain)
        self.before = frozenset(_words(plain[: copula.start()]) if copula else ()) - self.values
        self.words = frozenset(self.seq)
        # side by side in either order: "the autoclave in decon" and "the decon autoclave" name one
        # thing ("Customers book services" / "Service bookings all land in ...")
        self.pairs = {
            frozenset((a, b))
            for a, b in zip(self.seq, self.seq[1:], strict=False)
            if a not in self.values and b not in self.values and a != b
        }


def _same_slot(
    old: _Slots,
    new: _Slots,
    rarity: dict[str, float],
    opening_name: str,
    few: float = math.inf,
    *,
    fresh: Collection[str] = frozenset(),
) -> bool:
    """Whether a newer line names the older line's subject by its noun phrase and fills its value's
    slot with another value of the same kind, however its other words changed: "The sensor ingest
    is scheduled for 03:30 UTC each night" / "New slot for the sensor ingest: 21:10 UTC";
    "Haddad looks after the boat booking" / "boat booking contact changed to Moreau".

    - The noun phrase: two content words side by side in both lines, no value among them, one of
      them the older line's rarest word that is no value, rarest among the standing lines (the
      word that tells its subject from the other facts in its mould: "sensor ingest", not "each
      night"; "audit service", not "listens on port").
    - The slot: exactly one of the older line's values is missing from the newer (or one name of
      several words, its values side by side: "Sentinel Alarms"), which brings a value of the same
      kind (a time for a time, a name for a name: ``_kind``); the older line's other values are
      kept.
    - The newer line is no mirror of the older (``_mirrors``) unless only the words tying the
      value to the subject changed with it, every value of the older line lost and a value named
      first (``_relation_swapped``: "Uptime checks are done by Pingdom" / "Uptime checks run from
      Checkly") or only a weekday or time given anew (``_rescheduled``: "Sprint planning is Monday
      10:00" / "Sprint planning Wednesday 14:00"), and no report of work done
      (``is_event``: "Reviewed PR #6592 for the audit service" names no port) unless it says it
      changed something (``SIGNAL``: "Switched the fuel cards to Keyfuels, ...").
    - An older line that opens with the name it lost ("ledger-db keeps 14 days of backups") is
      another subject when the newer opens with its own new value or keeps every other word
      ("audit-db keeps 14 days of backups"): the same mould, said of another subject.
    - So is a newer line that says what it speaks of before its verb ("is", "are") with a word of
      its own, the older line's word there gone from it: "Extra matrix bands are kept in drawer
      12c" / "Extra local anaesthetic cartridges are kept in drawer 10c" share "kept in drawer",
      not a subject.
    """
    subject = old.words - old.values
    if not subject or (old.heads and new.heads and not old.heads & new.words):
        return False
    if old.before and not new.heads and old.before.isdisjoint(new.words):
        return False  # "Our pipelines are orchestrated with Airflow on the ETL box" / "Swapped the ETL box to ..."
    lost = old.values - new.words
    # A word beside a value it lost may qualify the value, not the subject ("the old Prestige
    # Classic", "on alternate Fridays"): when the line's other words are themselves rare (said by
    # ``FEW_STANDING`` standing lines or fewer: no mould), they may name its subject too. In a mould
    # ("Alarm code for the container is 7921#") they do not, and the word beside the value is its
    # subject ("Viking trade account": "trade" is).
    told = subject - _beside(old.seq, lost)
    readings = [subject, told] if told and max(rarity.get(w, 0.0) for w in told) >= few else [subject]
    if not any(_named_by(words, old.pairs & new.pairs, rarity) for words in readings):
        return False
    if _relabelled(old, new, lost):
        return True
    phrase = old.phrase_of(lost)
    if _mirrors(old, new) and not (
        phrase and lost == old.values and (_relation_swapped(old, new, lost, fresh) or _rescheduled(old, new, lost))
    ):
        return False
    if not phrase:
        return _refilled(old, new, lost, opening_name)
    gained = new.values - old.words
    if not any(_kind(w) == _kind(gone) for w in gained for gone in lost):
        return False
    return not (phrase[0] in (opening_name, old.seq[0]) and (new.seq[0] in gained or subject <= new.words))


def _rescheduled(old: _Slots, new: _Slots, lost: frozenset[str]) -> bool:
    """Whether the newer line is the older word for word but for its one value phrase, a time or a
    weekday (or both) given anew as a time or a weekday: "Sprint planning is Monday 10:00" /
    "Sprint planning Wednesday 14:00". A schedule's slot never holds its subject, as a name or a
    code may ("escalation policy for media-resizer: PJTQJKR" / "... for search-svc: PXUUBDZ")."""
    gained = new.values - old.words
    if not gained or old.seq[0] in lost:
        return False
    if [w for w in old.seq if w not in old.values] != [w for w in new.seq if w not in new.values]:
        return False
    return all(_kind(w) == "time" or w in _DAYS for w in lost | gained)


def _refilled(old: _Slots, new: _Slots, lost: frozenset[str], opening_name: str) -> bool:
    """Whether the newer line fills two slots of the older at once, each value phrase it lost with
    a value of its own of the same kind ("Gloves and bibs are ordered from Dental Sky every other
    Monday" / "Kent Express delivered the gloves and bibs, order placed Friday": a name for a name,
    a day for a day), each from a value phrase of its own ("Ashby Timber" fills one slot). Neither
    phrase opens the older line (a line opens with its subject)."""
    runs = old.runs_of(lost)
    if len(runs) != 2 or any(run[0] in (opening_name, old.seq[0]) for run in runs):
        return False
    gained = new.values - old.words
    phrases = new.runs_of(gained)  # one value phrase of the newer line fills one slot
    for run in runs:
        kinds = {_kind(w) for w in run if w in lost}
        pick = next((p for p in phrases if any(w in gained and _kind(w) in kinds for w in p)), None)
        if pick is None:
            return False
        phrases.remove(pick)
    return True


def _named_by(subject: frozenset[str] | set[str], pairs: set[frozenset[str]], rarity: dict[str, float]) -> bool:
    """Whether one of ``pairs`` holds the rarest word of ``subject``."""
    top = max(rarity.get(w, 0.0) for w in subject)
    rarest = {w for w in subject if rarity.get(w, 0.0) >= top}
    return any(rarest.intersection(pair) for pair in pairs)


def _beside(seq: Sequence[str], values: frozenset[str]) -> set[str]:
    """The words of ``seq`` next to one of ``values``."""
    return {seq[n + d] for n, w in enumerate(seq) if w in values for d in (-1, 1) if 0 <= n + d < len(seq)}


_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?([^:]{3,60}?):\s+\S")


def _label_words(text: str) -> tuple[str, ...]:
    """The content words of the label a line opens with ("Clinical waste: Sharpsmart, fortnightly"
    -> clinical, waste as forms), or () for a line that opens with no label."""
    match = _LABEL.match(_plain(text))
    return tuple(_words(match.group(1))) if match else ()


def _reports(text: str, key: str) -> bool:
    """Whether a line reports work done (``is_event``), also after the label it opens with ("PCI
    evidence: uploaded the MFA screenshots to the audit folder ... 14 items left on the list"): the
    label names the work, the statement after it is the report."""
    if is_event(key):
        return True
    match = _LABEL.match(_plain(text))
    return match is not None and is_event(normalised(_plain(text)[match.end(1) + 1 :]))


def _relabelled(old: _Slots, new: _Slots, lost: frozenset[str]) -> bool:
    """Whether the newer line restates the older whole under a label: the label is the older
    line's subject, the words it opens with ("Clinical waste is collected by Initial Medical on
    alternate Fridays" / "Clinical waste: Sharpsmart, fortnightly, next pick-up on the 14th"), and
    the newer line gives its own values in place of the older's, a name among them for a name the
    older lost. A label line states every value of its subject afresh, so the older line may lose
    more than one ("Initial Medical", "Fridays")."""
    label = new.label
    if len(label) < 2 or any(w in old.values for w in label) or set(label) != set(old.seq[: len(label)]):
        return False
    gained = new.values - old.words
    return any(_kind(w) == "name" for w in gained) and any(_kind(w) == "name" for w in lost)


def _other_subject(old: _Slots, new: _Slots) -> bool:
    """Whether the newer line is the older word for word, every value of it kept, but for a word
    of its subject swapped for a new one: "The router warranty runs out in August 2028" / "The
    e-bike warranty runs out in August 2028" are two facts that share a value; or whether it names
    a name of the older line inside a longer name of its own (``_qualified``), or one of the things
    the other line counts by its number (``_counted_then_numbered``: "6 nodes" / "node 4")."""
    if _qualified(old, new) or _counted_then_numbered(old, new) or _counted_then_numbered(new, old):
        return True
    if len(old.seq) != len(new.seq) or not old.values <= new.words:
        return False
    swapped = [x for x, y in zip(old.seq, new.seq, strict=True) if x != y]
    return bool(swapped) and all(x not in new.words and x not in old.values for x in swapped)


def _counted_then_numbered(one: _Slots, other: _Slots) -> bool:
    """Whether ``one`` counts things ("The search cluster has 6 nodes": a number before the word)
    and ``other`` names one of them by its number ("Search cluster node 4 restarted": the word,
    then a number ``one`` does not say): one thing of those counted, not a new count."""
    counted = {b for a, b in itertools.pairwise(one.seq) if a in one.values and _kind(a) == "count"}
    numbered = {
        a
        for a, b in itertools.pairwise(other.seq)
        if b in other.values and _kind(b) == "count" and b not in one.words and a not in other.values
    }
    return bool(counted & numbered)


def _qualified(old: _Slots, new: _Slots) -> bool:
    """Whether a name phrase of the older line (values side by side, a word of letters among them)
    is in the newer line inside a longer one, the words added numbers the older line does not say:
    "The Llanfair 4 kiosk key is on hook 37" names another kiosk than "The Llanfair kiosk key is on
    hook 13", not a new hook for it."""
    olds = {run for run in old.runs_of(old.values) if any(w.isalpha() for w in run)}
    for run in new.runs_of(new.values):
        for phrase in olds:
            added = set(run) - set(phrase)
            if (
                len(run) > len(phrase)
                and all(w.isdigit() for w in added)
                and not added & old.words
                and any(run[i : i + len(phrase)] == phrase for i in range(len(run) - len(phrase) + 1))
            ):
                return True
    return False


def _mirrors(old: _Slots, new: _Slots) -> bool:
    """Whether the newer line is the older's mould said of another subject: their words that are no
    values the same in number and order but for the older line's words the newer lacks ("The
    shipping service is owned by Rafael" / "The search service is owned by Dmitri")."""
    a = [w for w in old.seq if w not in old.values]
    b = [w for w in new.seq if w not in new.values]
    return len(a) == len(b) and all(x == y or x not in new.words for x, y in zip(a, b, strict=True))


def _relation_swapped(old: _Slots, new: _Slots, lost: frozenset[str], fresh: Collection[str]) -> bool:
    """Whether the older line's words that the newer lacks are all beside the value phrase it lost:
    the words that tie the value to the subject, said another way ("Uptime checks are done by
    Pingdom" / "Uptime checks run from Checkly"), not a word of the subject swapped for another
    ("The shipping service is owned by Rafael" / "The search service is owned by Dmitri"). Those
    words are written in lower case (a code beside the value, "PJTQJKR", is no tie word), and some
    are lacking: with none, the value phrase may hold the subject ("escalation policy for
    media-resizer: PJTQJKR" / "... for search-svc: PXUUBDZ"). And the newer line names a value
    first (``fresh``: no line said it before): a mould's next fill names what was said already
    ("pairing with tom on the on-call load" / "pairing with tom on flaky e2e"). A line that opens
    with the value it lost speaks of that value, no tie word of it, and a word a copula follows
    ends the subject ("The payments api gateway is Kong" / "Payments api queue is SQS")."""
    if old.seq[0] in lost:
        return False  # a line opens with its subject: "Isla on mash" / "Old Ewe, floor squeegeed"
    swapped = {w for w in old.seq if w not in old.values and w not in new.words}
    gained = new.values - old.words
    return (
        bool(swapped)
        and swapped <= _beside(old.seq, lost) & old.plain
        and swapped.isdisjoint(old.heads)
        and bool(gained.intersection(fresh))
    )


_CLOCK = re.compile(r"\d{1,2}:\d{2}")
_DOTTED_NUMBER = re.compile(r"\d+(?:\.\d+)+")
#: a name written as its web domain or with its language's suffix ("fly.io", "checkout.com", "next.js")
_DOMAIN_NAME = re.compile(r"[^\W\d_]{2,}\.[^\W\d_]{2,3}")


def _kind(word: str) -> str:
    """What a value is, by its shape: a path, a clock time, a version or measure, a count, a name
    (of letters, or a web domain's or a library's: "fly.io", "next.js"), another identifier."""
    if "/" in word:
        return "path"
    if _CLOCK.fullmatch(word):
        return "time"
    if _DOTTED_NUMBER.fullmatch(word):
        return "dotted"
    if word.isdigit():
        return "count"
    return "name" if word.isalpha() or _DOMAIN_NAME.fullmatch(word) else "identifier"


def _lowercase_words(texts: Iterable[str]) -> set[str]:
    """Every word written in lower case somewhere in ``texts``."""
    return {w for text in texts for w in _WORD.findall(text) if w.islower()}


def _opening_name(text: str, lower: Collection[str]) -> str:
    """The name a line opens with, lowercased, or "": a capitalised word of letters, no stop word,
    never written in lower case anywhere in the tier ("Haddad looks after ...", not "Standup with
    ..." when "standup" is written too). ``_values`` does not read a line's first word: most lines
    open with a capital."""
    match = _WORD.search(_plain(text))
    if match is None:
        return ""
    word = match.group(0)
    if len(word) < 2 or not word.isalpha() or not word[0].isupper() or word.lower() in _STOP:
        return ""
    return "" if word.lower() in lower else word.lower()


_LABELLED = re.compile(r":\s+([A-Z][a-z]+)\b")


def _labelled_names(text: str, lower: Collection[str]) -> frozenset[str]:
    """The names a line gives after a label's colon, lowercased: a capitalised word never written
    in lower case anywhere in the tier ("Van tracking: Samsara", "Invoices: Sage"). ``_values``
    reads a capital after a colon as a sentence's opening, as it is in "Note: Check the logs"."""
    found = (m.group(1) for m in _LABELLED.finditer(_plain(text)))
    return frozenset(w.lower() for w in found if w.lower() not in lower and w.lower() not in _STOP)


def _struck(text: str, old: frozenset[str], old_values: frozenset[str]) -> bool:
    """Whether ``text`` strikes the older line out and names a new value: "~~buoy archive on
    tape-3~~ disk-7", the struck words two or more of the older line's, one of its values among
    them, and a value past the strike that the older line lacks."""
    spans = _STRUCK.findall(text)
    if not spans:
        return False
    struck = _content(" ".join(spans))
    rest = _values(_STRUCK.sub(" ", text))
    return len(struck) >= 2 and struck <= old and bool(struck & old_values) and bool(rest - old)


def _opening(text: str) -> str:
    """A line's first content word, as a form."""
    return next(iter(_words(text)), "")


def _named_left(
    old_text: str,
    new_text: str,
    *,
    old: frozenset[str],
    old_values: frozenset[str],
    new: frozenset[str],
    new_values: frozenset[str],
    weight: dict[str, float],
) -> bool:
    """Whether a newer line names one of the older line's values as the value left (``_left``:
    "Car service booked at Brightwell Motors, not Greenway this year" after "The car goes to
    Greenway Garage for its service"), brings a value the older line lacks, and holds most of
    its subject, as ``_restated`` reads an older value named beside a new one. A value the older
    line names after the same word ("come from Ocado") is its mould, not a value left."""
    named = old_values & new
    if not named or not new_values - old:
        return False
    if not any(_left_marks(new_text, v) - _left_marks(old_text, v) for v in named):
        return False
    subject = old - old_values
    shared = subject & new
    if not subject or len(shared) < min(2, len(subject)):
        return False
    held = sum(weight.get(w, 1.0) for w in shared)
    return held >= ANCHORED_COVERAGE * sum(weight.get(w, 1.0) for w in subject)


def _restated(
    old: frozenset[str],
    old_values: frozenset[str],
    new: frozenset[str],
    new_values: frozenset[str],
    *,
    weight: dict[str, float],
    opening: str,
) -> bool:
    """Whether a newer line's words restate an older line's subject with another value
    (``changed_by_value``); ``opening`` is the older line's first content word."""
    if not new_values - old:
        return False  # no value the older line lacks
    if len(old_values) >= 2 and not old_values & new:
        return False  # the older line's values are all gone: another subject
    subject = old - old_values
    if opening in old_values - new:
        return False  # the name a line opens with is its subject: another subject, not a value
    if old_values - new:  # restated with one value replaced: the whole subject, word for word
        if len(old_values - new) != 1 or not subject <= new:
            return False
        # where a word or none is all the subject besides the values kept ("EHR: we're on
        # Medisphere 2023.2"), the value given in place of the lost one is of its kind: a vendor
        # table's "| Medisphere | EHR | - | MED-42687 |" gives a contract's number, not another version
        return len(subject) >= 2 or any(_alike(g, w) for g in new_values - old for w in old_values - new)
    if not subject:
        return False
    # the older value named beside the new one ("X is gone, we are on Y"): most of the subject
    if len(subject & new) < min(2, len(subject)):
        return False
    held = sum(weight.get(w, 1.0) for w in subject & new)
    return held >= ANCHORED_COVERAGE * sum(weight.get(w, 1.0) for w in subject)


#: The least cosine of a standing line and its nearest statement for the two to say one fact.
MEANING_COSINE = 0.45
#: How much nearer that statement must be than any other line the tier holds (``changed_by_meaning``).
MEANING_MARGIN = 0.05
#: ``MEANING_COSINE`` for the lines' words (``word_vectors``) where no model is loaded.
WORDS_COSINE = 0.2
Vectors = Mapping[str, npt.NDArray[np.float32]]


class _Meaning:
    """What ``changed_by_meaning`` reads of its lines: the standing ones and the later statements
    that may change them, each by key, with their words and values."""

    def __init__(self, said: Sequence[Said]) -> None:
        lines = [s for s in said if len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text]
        learn_forms(s.text for s in lines)
        self.first: dict[str, Said] = {}
        self.last: dict[str, Said] = {}
        weeks: dict[str, set[str]] = {}
        for item in sorted(lines, key=lambda s: s.when):
            key = normalised(item.text)
            self.first.setdefault(key, item)
            self.last[key] = item
            weeks.setdefault(key, set()).add(_week(item))
        lower = _lowercase_words(s.text for s in lines)
        # an identifier's words count among a line's words: "edge-rtr-02" names the edge routers
        self.content = {key: (words := _content(item.text)).union(_named_in(words)) for key, item in self.last.items()}
        names = {key: _opening_name(item.text, lower) for key, item in self.last.items()}
        self.lower = lower
        self.values = {key: self._values_of(item.text, names[key]) for key, item in self.last.items()}
        self.names = names
        self.standing = [
            key for key in self.last if len(weeks[key]) >= MIN_STANDING_WEEKS and not is_event(key) and self.values[key]
        ]
        self.later = [
            key
            for key, item in self.first.items()
            if self.values[key] and (not is_event(key) or SIGNAL.search(item.text))
        ]
        # how many standing lines say each word that is no value: the rarest tells a subject
        self.df = Counter(
            w for key in self.standing for w in self.content[key] if w not in self.values[key] or _compound(w)
        )
        self.parts = {key: parts for key in self.later if (parts := _parts(self.last[key].text, lower))}

    def _values_of(self, text: str, name: str) -> frozenset[str]:
        """The values of ``text``: ``_values``, a label's names, its opening name ``name``."""
        return _values(text) | _labelled_names(text, self.lower) | ({name} - {""})

    def read(self) -> list[str]:
        """Every line read: the standing ones and the later statements, once each."""
        return list(dict.fromkeys([*self.standing, *self.later]))

    def texts(self, keys: Sequence[str]) -> tuple[list[str], list[int]]:
        """The texts read of ``keys``: each key's line, then the parts of the later lines
        (``_parts``), with the index in ``keys`` of the line each text belongs to."""
        texts = [self.last[key].text for key in keys]
        owners = list(range(len(keys)))
        for n, key in enumerate(keys):
            for part in self.parts.get(key, ()):
                texts.append(part)
                owners.append(n)
        return texts, owners

    def restates_any(self, old: str, new: str, *, dropped: bool) -> bool:
        """Whether ``new`` as a whole, or one of its parts (``_parts``), restates ``old``."""
        return any(self.restates(old, new, dropped=dropped, part=part) for part in ("", *self.parts.get(new, ())))

    def restates(self, old: str, new: str, *, dropped: bool, part: str = "") -> bool:
        """Whether ``new`` (said first after ``old`` was said last) fills the one value slot of
        ``old`` (a value it names twice is one slot) with a value of the same kind and names its
        subject (``changed_by_meaning``);
        ``dropped``: or fills one of two, leaving the other out. ``part``: one of ``new``'s parts
        (``_parts``), read as the statement in place of the whole line ("Ines has gone to the
        Caerwen site; Tomasz signs the permits from this week": the part after the semicolon)."""
        if self.first[new].when <= self.last[old].when:
            return False
        if part:
            new_name = _opening_name(part, self.lower)
            new_values, new_content = self._values_of(part, new_name), _content(part)
            new_content = new_content.union(_named_in(new_content))
            new_text = part
        else:
            new_name, new_values, new_content = self.names[new], self.values[new], self.content[new]
            new_text = self.first[new].text
        # words of letters joined by hyphens ("out-of-hours", "permit-to-work") name a subject as
        # words do: no value of it is lost or gained
        old_values = frozenset(v for v in self.values[old] if not _compound(v))
        new_values = frozenset(v for v in new_values if not _compound(v))
        lost = old_values - new_content - {new_name}
        gained = new_values - self.content[old] - {self.names[old]}
        if not lost or not gained or not any(_alike(g, w) for g in gained for w in lost):
            return False
        old_slots = _Slots(self.last[old].text, old_values)
        new_slots = _Slots(new_text, new_values)
        # a value said twice in the line is one value phrase ("orders go through Tregarn, ... Tregarn's prices")
        lost_runs = list({frozenset(run) & lost: run for run in reversed(old_slots.runs_of(frozenset(lost)))}.values())
        # a detail left out: only its subject's rarest word then says the subject is the same
        detail = len(lost_runs) == 2 and not dropped
        if len(lost_runs) != 1 and not (
            len(lost_runs) == 2
            and len(new_slots.runs_of(frozenset(gained))) == 1
            and (dropped or (not part and _detail_left(lost_runs, frozenset(lost), frozenset(gained))))
        ):
            return False  # two value phrases gone: another subject in the same mould
        if _mirrors(old_slots, new_slots) or _other_subject(old_slots, new_slots):
            return False
        if detail and new_content - new_values - self.content[old]:
            return False  # words of its own in place of the detail: another subject's line
        subject = self.content[old] - old_values
        if not detail and old_values - lost & new_content:
            return True  # a value of the older line kept beside the new one names its subject
        if not subject:
            return False
        fewest = min(self.df[w] for w in subject)
        return any(w in new_content for w in subject if self.df[w] == fewest)


def _said_again(read: _Meaning, keys: Sequence[str], old: str, new: str, naming: Mapping[str, list[int]]) -> list[int]:
    """The lines (indexes in ``keys``) naming a value ``new`` gives anew of ``old``'s, first said
    after ``old`` was said last: the same change said again, when its value is named by
    ``_MAX_HOLDERS`` lines or fewer (a value named more often is no one change's)."""
    out = []
    for value in read.values[new] - read.content[old] - {read.names[old]}:
        held = naming[value]
        out += [
            n for n in (held if len(held) <= _MAX_HOLDERS else ()) if read.first[keys[n]].when > read.last[old].when
        ]
    return out


def _detail_left(runs: Sequence[tuple[str, ...]], lost: frozenset[str], gained: frozenset[str]) -> bool:
    """Whether of the two value phrases a newer line lost (``runs``), one holds a value of a kind
    it gained and the other none: the value given anew, and a detail of another kind left out as
    it was given ("standup 9:15, Bridge room + Meet link" / "Standup is at 9:45": a time for a
    time, the room's name not said). Two phrases of the kind gained are two subjects' values in
    one mould, whose words alone cannot tell which one changed."""
    kinds = {_kind(w) for w in gained}
    holding = [any(w in lost and _kind(w) in kinds for w in run) for run in runs]
    return holding.count(True) == 1


#: The most clauses a part of a later line joins (``_parts``).
PART_CLAUSES = 2


def _parts(text: str, lower: Collection[str] = frozenset()) -> list[str]:
    """The runs of one or two clauses of a line of several (split at a sentence's end, a semicolon,
    a comma, a colon, a dash between spaces or a bracket) that name a value (``_values``): a change
    said inside a line about something else ("Ama on the bridge with the carrier all evening,
    edge routers on 17.9.4 since the window") is near the fact it changes in its own clause, where
    the whole line's other words keep it far. A later clause opened by a name the tier never writes
    in lower case (``lower``: the words it does) names a value too ("Ines has gone to the Caerwen
    site; Tomasz signs the permits from this week")."""
    body = _plain(text)
    spans = clause_spans(body, quotes=False)
    found: list[str] = []
    for i, (start, _) in enumerate(spans):
        for j in range(i, min(i + PART_CLAUSES, len(spans))):
            part = body[start : spans[j][1]].strip(CLAUSE_TRIM)
            if (i, j) != (0, len(spans) - 1) and (_values(part) or (i > 0 and _opening_name(part, lower))):
                found.append(part)
    return list(dict.fromkeys(found))


_IDENTIFIER_JOINS = re.compile(r"[-_]")


def _compound(word: str) -> bool:
    """Whether ``word`` is words of letters joined by hyphens, in lower case ("out-of-hours",
    "permit-to-work"): a compound that names a subject, not an identifier such as "ovh-gra7"."""
    return "-" in word and word.islower() and all(part.isalpha() for part in word.split("-"))


def _named_in(words: Iterable[str]) -> list[str]:
    """The words the identifiers among ``words`` are made of, as forms: "ci-metal-01" names the
    ci boxes and the metal, "edge-rtr-02" an edge router ("edg", "rtr"). Read by meaning only: a
    change that names the subject by an identifier of its words ("edge-rtr-02 runs 17.9.4 since
    the window" after "The edge routers run 17.6.5") shares them with the fact it changes. A
    path's parts are no such words."""
    return [
        form(part)
        for word in words
        if "/" not in word and _IDENTIFIER_JOINS.search(word)
        for part in _IDENTIFIER_JOINS.split(word)
        if len(part) > 1 and part.isalpha()
    ]


def _alike(a: str, b: str) -> bool:
    """Whether two values are of one kind (``_kind``), two paths of one root: both absolute, both
    under a host ("wiki.acme.dev/rb/...", "10.5281/zenodo.6041508") or both relative. A dataset's
    folder and its citation are two facts of one subject, not one value given anew. A weekday is no
    name: "on Saturdays" given anew as "Sage" is another fact."""
    return _sort(a) == _sort(b)


def _sort(value: str) -> tuple[str, bool, str]:
    """What ``_alike`` compares of a value: its kind, whether it is a weekday, a path's root."""
    kind = _kind(value)
    return kind, value in _DAYS, _path_root(value) if kind == "path" else ""


_DAYS = frozenset({*_ONE_DAY, *_ONE_DAY.values()})


def _path_root(path: str) -> str:
    if path.startswith(("/", "~")):
        return "absolute"
    head = path.split("/", 1)[0]
    return "host" if "." in head or head.endswith(":") else "relative"


@_reading
def meaning_texts(said: Sequence[Said]) -> list[str]:
    """The texts ``changed_by_meaning`` reads the vectors of, one a line (its key's last wording)."""
    read = _Meaning(said)
    return list(dict.fromkeys(read.texts(read.read())[0]))


class WordVectors:
    """Each text's words as an L2-normalised sparse vector, each word weighted by its rarity among
    the texts (tf-idf over the forms ``_words`` reads): what ``changed_by_meaning`` reads where no
    embedding model is loaded, with ``WORDS_COSINE`` for its least cosine. Sparse: a tier of
    thousands of lines and tens of thousands of words holds its weights, not their product."""

    def __init__(self, texts: Sequence[str]) -> None:
        counted = {text: Counter([*(found := _words(text)), *_named_in(found)]) for text in texts}
        df = Counter(w for words in counted.values() for w in words)
        self.rows: dict[str, dict[str, float]] = {}
        for text, words in counted.items():
            row = {w: n * math.log(1 + len(counted) / df[w]) for w, n in words.items()}
            norm = math.sqrt(sum(x * x for x in row.values())) or 1.0
            self.rows[text] = {w: x / norm for w, x in row.items()}

    def __contains__(self, text: object) -> bool:
        return text in self.rows


def word_vectors(texts: Sequence[str]) -> WordVectors:
    """The texts' word vectors (``WordVectors``)."""
    return WordVectors(texts)


def _nearness(
    vectors: Vectors | WordVectors, olds: Sequence[str], texts: Sequence[str]
) -> Iterator[npt.NDArray[np.float32]]:
    """For each of ``olds`` (texts), its cosine with each of ``texts``, one row at a time (a block
    of rows at most is held: never the whole square of a large tier's lines)."""
    if isinstance(vectors, WordVectors):
        postings: dict[str, list[tuple[int, float]]] = {}
        for n, text in enumerate(texts):
            for w, x in vectors.rows[text].items():
                postings.setdefault(w, []).append((n, x))
        arrays = {
            w: (np.array([n for n, _ in p], dtype=np.int64), np.array([x for _, x in p], dtype=np.float32))
            for w, p in postings.items()
        }
        for old in olds:
            row = np.zeros(len(texts), dtype=np.float32)
            for w, x in vectors.rows[old].items():
                where, weights = arrays[w]
                row[where] += x * weights
            yield row
        return
    matrix = np.stack([vectors[text] for text in texts]).astype(np.float32)
    for start in range(0, len(olds), _BLOCK):
        block = np.stack([vectors[text] for text in olds[start : start + _BLOCK]]).astype(np.float32)
        yield from block @ matrix.T


_BLOCK = 256  # standing lines whose cosines with every line read are held at once


@_reading
def changed_by_meaning(
    said: Sequence[Said],
    vectors: Vectors | WordVectors,
    found: Collection[str] = (),
    *,
    cosine: float = MEANING_COSINE,
    margin: float = MEANING_MARGIN,
    dropped: bool = True,
) -> dict[str, Said]:
    """The key of every standing line whose nearest statement in the tier, by meaning, came after
    it and gives its value anew -> that statement. ``vectors``: an embedding model's L2-normalised
    vector of each line's text (``meaning_texts``); a line without one is not read. The keys in
    ``found`` (changes read by their words) are not read again.

    A change written without the older line's words is linked by what it means: "Registers are
    kept in ClassBook 2" and, weeks later, "ClassBook 3 logs everyone out at five"; "standup
    09:10 in the huddle" and "standup 09:40, huddle as usual". A standing line (said in
    ``MIN_STANDING_WEEKS`` weeks, no report of work done, with a value) is changed by a later line
    when
    - the later line is the one nearest to it of every line read, standing or later, at
      ``MEANING_COSINE`` or nearer, and nearer by ``MEANING_MARGIN`` of cosine than any other line
      naming a value of a sort the standing line names (``_alike``); and the standing line is the
      nearest of the standing lines to it in turn. A fact in a table of facts ("Credentials for
      the Zendesk API are in ...", "... for the Klaviyo export ...") has its siblings, which name
      such values, as near as the later one: no change. A line naming no such value is no sibling
      ("Never sell day-old bread as fresh" beside "A sourdough loaf sells for £4.20"). A later line
      is as near as its nearest run of one or two clauses (``_parts``): a change said inside a
      line about something else is read in its own words;
    - it was first said after the standing line was last said;
    - it lost one value phrase of the standing line and brings a value of the same kind
      (``_kind``), keeps a value of it or its rarest subject word (rarest among the standing
      lines: the word that tells its subject from the others), and is no mirror of it (the same
      mould said of another subject: ``_mirrors``, ``_other_subject``). With ``dropped`` (the
      model's vectors), it may lose two value phrases when it brings one: a detail left out as
      the value is given anew ("The data team standup happens every morning at 9:30, on the
      usual Meet link" / "The data team standup is at 10:05"). Words alone cannot tell that from
      a sibling fact whose subject is a value too ("Hatherley Engineers installed the e-bike" /
      "Castleton Engineers installed the router"), so ``word_vectors`` are read without it, but
      for a whole later line that only leaves a detail out: of the two value phrases lost, one
      holds a value of the kind it gives and the other none, it says no word the standing line
      lacks but its values, and it names the standing line's rarest subject word ("standup 9:15,
      Bridge room + Meet link for remote folks" / "Standup is at 9:45", ``_detail_left``)."""
    read = _Meaning(said)
    keys = [key for key in read.read() if read.last[key].text in vectors]
    if len(keys) < 2:
        return {}
    at = {key: n for n, key in enumerate(keys)}
    olds = [key for key in read.standing if key in at and key not in found]
    if not olds:
        return {}
    texts, owners = read.texts(keys)
    kept = [n for n, text in enumerate(texts) if text in vectors]
    texts, owner = [texts[n] for n in kept], np.array([owners[n] for n in kept], dtype=np.int64)
    holding: dict[tuple[str, bool, str], npt.NDArray[np.bool_]] = {}  # a sort of value -> the lines naming one
    naming: dict[str, list[int]] = {}  # a value -> the lines naming it
    for n, key in enumerate(keys):
        for sort in {_sort(v) for v in read.values[key]}:
            holding.setdefault(sort, np.zeros(len(keys), dtype=np.bool_))[n] = True
        for value in read.values[key]:
            naming.setdefault(value, []).append(n)
    links: dict[str, tuple[str, float]] = {}
    for old, near in zip(olds, _nearness(vectors, [read.last[key].text for key in olds], texts), strict=True):
        sims = np.full(len(keys), -1.0, dtype=np.float32)
        np.maximum.at(sims, owner, near)  # a line is as near as its nearest part
        sims[at[old]] = -1.0  # a line is not its own neighbour
        for near_at in np.flatnonzero(sims >= cosine - margin).tolist():  # nor is a line quoting it
            if _quoted(old, keys[near_at]):
                sims[near_at] = -1.0
        nearest_at = int(np.argmax(sims))
        best = float(sims[nearest_at])
        rivals = np.zeros(len(keys), dtype=np.bool_)  # the lines that could be its siblings
        for sort in {_sort(v) for v in read.values[old]}:
            rivals |= holding[sort]
        rivals[[nearest_at, at[old]]] = False
        new = keys[nearest_at]
        # a later line naming the value the nearest gives anew says that change again: no sibling
        rivals[_said_again(read, keys, old, new, naming)] = False
        runner_up = float(sims[rivals].max()) if rivals.any() else -1.0
        if best < cosine or best - runner_up < margin:
            continue
        if not read.restates_any(old, new, dropped=dropped):
            # the nearest, said later, names the new value without saying the change ("Nightly from
            # 02:30 UTC green"): a later line naming that value may say it ("Moved the nightly to
            # 02:30 UTC so it stops fighting the deploy window"), near the standing line through it
            later = read.first[new].when > read.last[old].when
            said_again = _said_again(read, keys, old, new, naming) if later else []
            new = next(
                (
                    keys[n]
                    for n in sorted(said_again, key=lambda n: -sims[n])
                    if read.restates_any(old, keys[n], dropped=dropped)
                ),
                "",
            )
            if not new:
                continue
        links[old] = (new, best)
    nearest: dict[str, tuple[str, float]] = {}
    for old, (new, cos) in links.items():
        if new not in nearest or cos > nearest[new][1]:
            nearest[new] = (old, cos)
    return {old: read.first[new] for old, (new, _) in links.items() if nearest[new][0] == old}
