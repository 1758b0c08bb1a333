"""Routine lines: the ones a week's notes write over and over in one mould with other values.

An agent's log repeats a handful of moulds dozens of times a week: "Merge request 4411 for
billing needs another look", "team sync: 12 action items", "Disk use on nas-2 is 81 percent". Such a line reads like a statement (no past-tense verb opens it), yet it is the week's
log, not a fact a later search asks for, and in a summary it crowds the facts out of their budget.

A frame is ``FRAME_WORDS`` of a line's words (stop words and numbers aside) that many lines of
its week hold. A line is routine when ``ROUTINE_LINES`` or more lines of the week, from most of
the week's days (``ROUTINE_DAYS`` at least), hold every word of one of its frames: "merge request
needs" in every merge-request line. A frame said on a few of the week's days only is no mould,
whose lines come day after day: it is a table of facts ("ledger-api keeps its data on pg-3", one
line a service) or the same few facts said again on some days ("Airport runs from Heathrow are
done by Tadeusz" beside "... from Gatwick ... by Marlon"). Any of its frequent words may make the
frame, not only the most frequent: the slot of a mould (a van, a customer, a colleague named in half the week's moulds) can
be written more often than the mould's own words ("Deposit in from Moreau, job confirmed" in a week
that names Moreau in twenty lines is still the deposit mould). A short line is routine too when
every word of it but one is in a frame of two ("Takings yesterday: 762"; "Wren in late, 51
minutes"; "Fuel on the 18 tonner: 122 litres"). A fact said
a few times a week never is: its own words are rare, and its frame is one of them with words of
the day. Thirty thresholds listed in one note are a table,
not a log; a week of few lines has no routine at all. Counting the word pairs and triples of a
line's frequent words keeps it linear in the week's lines; a long line's frames are made of its
``FRAME_CAP`` most frequent words (a mould's line is short: its words all count), so a line of
ninety words costs a hundred-odd frames, not the hundred thousand its every triple would, and a
run never holds a week's worth of millions of them (building and freeing them held the GIL, and
with it the event loop, for a tenth of a second at a time).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from functools import lru_cache
from itertools import combinations
from typing import TypeVar

from sidecar.consolidate.extractive import sentences
from sidecar.consolidate.periods import JOINT
from sidecar.consolidate.text import COMMENT, LINE_CACHE, normalised
from sidecar.index.query import STOPWORDS
from sidecar.write.dedup import LIST_MARKER

__all__ = [
    "BOILERPLATE_SHARE",
    "FRAME_CAP",
    "FRAME_WORDS",
    "ROUTINE_DAYS",
    "ROUTINE_LINES",
    "RUN_WEEKS",
    "SENTENCES",
    "TAIL_WORDS",
    "Apart",
    "apart",
    "routine",
    "routine_by",
    "run_frames",
]

FRAME_WORDS = 3
#: The most of a line's frequent words its frames are made of (its most frequent ones).
FRAME_CAP = 8
ROUTINE_LINES = 8
ROUTINE_DAYS = 3
#: The fewest weeks a frame must be routine in to be routine in every week of a run (``run_frames``).
RUN_WEEKS = 3
#: A line said word for word in this share of the notes or more (and on ``ROUTINE_LINES`` days at
#: least) is the writer's boilerplate ("Nothing unusual there."), in ``routine_by``.
BOILERPLATE_SHARE = 1 / 4
#: The weeks whose routine reading is kept for the next pass or run to read again (``_judged``).
JUDGED_WEEKS = 64
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
K = TypeVar("K", bound=Hashable)


@lru_cache(maxsize=LINE_CACHE)
def _words(text: str) -> tuple[str, ...]:
    """A line's words without digits, lowercased, stop words aside, in order."""
    text = LIST_MARKER.sub("", COMMENT.sub(" ", text))
    return tuple(w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS and len(w) > 1)


def routine(lines: Sequence[tuple[str, str]], frames: Collection[frozenset[str]] = frozenset()) -> list[bool]:
    """For each of one week's lines, (source, text) pairs, whether it is routine (module docstring);
    a line that holds one of ``frames`` (``run_frames``: routine across the run's weeks) is too."""
    flags = _judged(lines)[0]
    return _or_framed(lines, flags, frames)


def run_frames(weeks: Iterable[Sequence[tuple[str, str]]]) -> frozenset[frozenset[str]]:
    """The frames that make lines routine in half of ``weeks`` or more (each a week's (source,
    text) lines), and in ``RUN_WEEKS`` at least: a mould the run writes over and over is routine in
    every week, in one where it was written fewer than ``ROUTINE_LINES`` times too. A mould
    routine in a busy spell only stays that spell's."""
    judged = [_judged(lines)[1] for lines in weeks]
    return _frequent(judged)


def _frequent(found: Sequence[Collection[frozenset[str]]]) -> frozenset[frozenset[str]]:
    """The frames among ``found`` (each week's) routine in half the weeks or more, and in
    ``RUN_WEEKS`` at least: frequent across the run, not in a busy spell."""
    count = Counter(frame for frames in found for frame in frames)
    least = max(RUN_WEEKS, (len(found) + 1) // 2)
    return frozenset(frame for frame, n in count.items() if n >= least)


def _or_framed(
    lines: Sequence[tuple[str, str]], flags: Sequence[bool], frames: Collection[frozenset[str]]
) -> list[bool]:
    """``flags`` with every line holding one of ``frames`` set: every word of a frame of three, or,
    for a short line (``FRAME_WORDS`` words or fewer), of a frame of two."""
    if not frames:
        return list(flags)
    by_word = _by_word(frames)
    out = []
    for (_, text), flag in zip(lines, flags, strict=True):
        out.append(flag or _holds_frame(set(_words(text)), by_word))
    return out


def _by_word(frames: Collection[frozenset[str]]) -> dict[str, list[frozenset[str]]]:
    by_word: dict[str, list[frozenset[str]]] = {}
    for frame in frames:
        by_word.setdefault(min(frame), []).append(frame)
    return by_word


def _holds_frame(words: set[str], by_word: dict[str, list[frozenset[str]]]) -> bool:
    """Whether ``words`` hold every word of a frame (``by_word``: frames by their first word): of
    three, or of two when they are ``FRAME_WORDS`` words or fewer."""
    return any(
        frame <= words and (len(frame) == FRAME_WORDS or len(words) <= FRAME_WORDS)
        for w in words
        for frame in by_word.get(w, ())
    )


#: Where a routine line is read apart (``apart``): None, whole; ``SENTENCES``, as its sentences; or
#: (end, start): its mould up to ``end``, and the statement said inside it from ``start`` on.
Apart = tuple[int, int] | None
SENTENCES = (0, 0)
Judged = tuple[tuple[bool, ...], frozenset[frozenset[str]], tuple[Apart, ...]]


def _judged(lines: Sequence[tuple[str, str]]) -> Judged:
    """``routine`` of one week's lines alone, the frames that made them routine, and which of its
    routine lines say a statement beside their mould, and where (``apart``). A run reads
    each week's lines more than once (its moulds, its change search, each pass after its
    promotions), and the next run the same weeks again: the answer for the same lines is kept."""
    return _judged_once(tuple(lines))


def apart(lines: Sequence[tuple[str, str]], frames: Collection[frozenset[str]] = frozenset()) -> list[Apart]:
    """For each of one week's lines, (source, text) pairs, where a routine line (``routine``,
    ``frames`` as there) says a statement beside its mould, to be read apart (``Apart``); None for
    the others. Of two sentences or more, one holds a frame and one none: a fact said beside a
    mould in one short paragraph ("Cost check: the raw_orders model scanned 385 GB on its last run.
    Rosalind does the stale table clean-up on Tuesdays."), read as its sentences. Or one sentence
    whose first clauses hold the frame and whose last ones, after a comma, semicolon, colon, dash or
    bracket, are a statement of their own (``_tail``): "Chair in surgery 3 squeaking again, Aoife
    oiled it, and while I remember, the code for the front door is 8137Y.", read as the mould and
    "the code for the front door is 8137Y." A week's summary keeps the statement as a fact, not
    left to the log with the mould's line."""
    flags, _, mixed = _judged(lines)
    by_word = _by_word(frames)
    df: Counter[str] | None = None
    pairs: Counter[frozenset[str]] = Counter()
    out: list[Apart] = []
    for (_, text), flag, was in zip(lines, flags, mixed, strict=True):
        if was is not None or flag or not by_word or not _holds_frame(set(_words(text)), by_word):
            out.append(was)
            continue
        if df is None:
            df = Counter(w for _, said in lines for w in set(_words(said)))
            for _, said in lines:
                words = _most_frequent(sorted({w for w in _words(said) if df[w] >= ROUTINE_LINES}), df)
                pairs.update(frozenset(pair) for pair in combinations(words, 2))
        out.append(_apart_at(text, lambda said: _holds_frame(set(said), by_word), df, pairs))
    return out


def _apart_at(
    text: str, framed: Callable[[Sequence[str]], bool], df: Counter[str], pairs: Counter[frozenset[str]]
) -> Apart:
    """Where a routine line says a statement beside its mould (``apart``): ``SENTENCES`` when one
    of its sentences holds a frame and another none, else the clauses ``_tail`` finds, else None."""
    if _partly_framed(text, framed):
        return SENTENCES
    return _tail(text, framed, df, pairs)


#: The fewest words of a statement said after a mould's clauses (``_tail``): fewer are the mould's
#: own aside ("Aoife oiled it", "leaflet given").
TAIL_WORDS = 3


def _tail(
    text: str, framed: Callable[[Sequence[str]], bool], df: Counter[str], pairs: Counter[frozenset[str]]
) -> Apart:
    """A statement said inside a routine sentence, after the clauses that hold its frame (a clause,
    ``_clause``, not a bare name): from the
    first clause of ``TAIL_WORDS`` words or more after the shortest run of clauses holding a frame
    (``framed``; more than ``FRAME_WORDS`` words) to the end, when that holds no frame and a word the week writes fewer than
    ``ROUTINE_LINES`` times (the mould's own words are frequent: "due end of the month"), and no
    frequent word the week writes with one of the mould's clauses' frequent words in
    ``ROUTINE_LINES`` lines or more (``pairs``: the mould's slot, "small changes to the retry" after
    "Reviewed !4411 for billing"). The mould ends where the statement starts; the joints between are
    the mould's ("and for the record")."""
    joints = list(JOINT.finditer(text))
    held = next(  # a frame of three: a short clause's frame of two ("Stock check") is no mould's whole
        (n for n, j in enumerate(joints) if len(said := _words(text[: j.start()])) > FRAME_WORDS and framed(said)),
        None,
    )
    if held is None:
        return None
    for n in range(held, len(joints)):
        end = joints[n + 1].start() if n + 1 < len(joints) else len(text)
        if len(_words(text[joints[n].end() : end])) < TAIL_WORDS:
            continue
        said = _words(text[joints[n].end() :])
        if all(df[w] >= ROUTINE_LINES for w in said) or not _clause(text[joints[n].end() :]):
            return None
        mould = {w for w in _words(text[: joints[n].start()]) if df[w] >= ROUTINE_LINES}
        if framed(said) or any(
            pairs[frozenset((m, w))] >= ROUTINE_LINES for w in said if df[w] >= ROUTINE_LINES for m in mould - {w}
        ):
            # the mould goes on past this joint, its frame or its own slot ("Reviewed !4411 for
            # billing: small changes to the retry, and while I remember, ..."): a later joint may
            # start the statement
            continue
        return joints[n].start(), joints[n].end()
    return None


def _clause(text: str) -> bool:
    """Whether ``text`` reads as a clause, not a bare name: it holds a stop word ("Code for the
    front door is 8137Y"), where a mould's slot often holds none ("checkout-web error budget burn",
    the alert a postmortem mould names in brackets)."""
    return any(w.lower() in STOPWORDS for w in _WORD.findall(text))


@lru_cache(maxsize=JUDGED_WEEKS)
def _judged_once(lines: tuple[tuple[str, str], ...]) -> Judged:
    word_lists = [list(dict.fromkeys(_words(text))) for _, text in lines]
    df = Counter(w for words in word_lists for w in words)
    frequent = [_most_frequent([w for w in words if df[w] >= ROUTINE_LINES], df) for words in word_lists]
    together: Counter[frozenset[str]] = Counter()
    days: dict[frozenset[str], set[str]] = {}
    # most of the week's days: a frame said on a few of them only is a table of facts
    least = max(ROUTINE_DAYS, (len({source for source, _ in lines}) + 1) // 2)
    for (source, _), words in zip(lines, frequent, strict=True):
        for size in (FRAME_WORDS, FRAME_WORDS - 1):
            for subset in combinations(sorted(words), size):
                key = frozenset(subset)
                together[key] += 1
                if len(days.setdefault(key, set())) < least:
                    days[key].add(source)
    out = []
    mixed: list[Apart] = []
    found: set[frozenset[str]] = set()
    for (_, text), words, frequent_words in zip(lines, word_lists, frequent, strict=True):
        frame = next(
            (
                f
                for top in combinations(sorted(frequent_words), FRAME_WORDS)
                if _framed(f := frozenset(top), together, days, least)
            ),
            None,
        )
        # a short line: every word of it but one in a frame of two ("Takings yesterday: 762";
        # "Wren in late, 51 minutes", a name of the day its one other word)
        if frame is None and len(words) <= FRAME_WORDS:
            frame = next(
                (
                    f
                    for short in combinations(sorted(frequent_words), FRAME_WORDS - 1)
                    if _framed(f := frozenset(short), together, days, least)
                ),
                None,
            )
        out.append(frame is not None)
        if frame is not None:
            found.add(frame)
            in_week = functools.partial(_week_framed, df=df, together=together, days=days, least=least)
            mixed.append(_apart_at(text, in_week, df, together))
        else:
            mixed.append(None)
    return tuple(out), frozenset(found), tuple(mixed)


def _partly_framed(text: str, framed: Callable[[Sequence[str]], bool]) -> bool:
    """Whether a line of two sentences or more (of two words or more each) has one that holds a
    frame of its own words (``framed``, given a sentence's words) and one that holds none: a fact
    said beside a mould ("Cost check: 181 GB scanned. Sqlfluff is pinned to 2.3.5."). A line whose
    frame spans its sentences ("Quiet morning, rain. 12 jobs by two.") is one mould."""
    parts = sentences(LIST_MARKER.sub("", COMMENT.sub(" ", text)).strip())
    said = [words for part in parts if len(words := _words(part)) > 1]  # "(run 3)" states nothing
    if len(said) < 2:
        return False
    flags = [framed(words) for words in said]
    return any(flags) and not all(flags)


def _week_framed(
    words: list[str],
    df: Counter[str],
    together: Counter[frozenset[str]],
    days: dict[frozenset[str], set[str]],
    least: int,
) -> bool:
    """Whether a sentence's words hold a frame of the week (``_framed``): three of its frequent
    words, or two when it has ``FRAME_WORDS`` words or fewer."""
    frequent = _most_frequent(sorted({w for w in words if df[w] >= ROUTINE_LINES}), df)
    sizes = (FRAME_WORDS, FRAME_WORDS - 1) if len(words) <= FRAME_WORDS else (FRAME_WORDS,)
    return any(
        _framed(frozenset(f), together, days, least) for size in sizes for f in combinations(sorted(frequent), size)
    )


def _most_frequent(words: list[str], df: Counter[str]) -> list[str]:
    """``words`` (a line's frequent ones), at most ``FRAME_CAP`` of them: the most frequent in the week."""
    if len(words) <= FRAME_CAP:
        return words
    return sorted(words, key=lambda w: (-df[w], w))[:FRAME_CAP]


def _framed(
    frame: frozenset[str], together: Counter[frozenset[str]], days: dict[frozenset[str], set[str]], least: int
) -> bool:
    """Whether ``ROUTINE_LINES`` lines or more of the week, from ``least`` notes or more, hold ``frame``."""
    return together[frame] >= ROUTINE_LINES and len(days.get(frame, ())) >= least


def routine_by(items: Sequence[tuple[K, str, str]], frames: Collection[frozenset[str]] | None = None) -> list[bool]:
    """``routine`` for lines of many weeks at once: (week key, source, text), each week judged
    apart, and a line holding one of ``frames`` routine in every one (by default the frames
    routine in half its weeks or more, ``run_frames``'s reading of them). A line said word for word
    in ``BOILERPLATE_SHARE`` of the notes or more is routine too: a paragraph's lead-in or aside
    ("Quiet stretch, so here is the rundown.") said day after day is the writer's manner, not a
    fact said again; a fact stated on several days is stated on a few of them."""
    normal = [normalised(text) for _, _, text in items]  # each line's words, read once
    said_on: dict[str, set[str]] = {}
    for said, (_, source, _) in zip(normal, items, strict=True):
        said_on.setdefault(said, set()).add(source)
    notes = len({source for _, source, _ in items})
    boilerplate = {k for k, days in said_on.items() if len(days) >= max(ROUTINE_LINES, notes * BOILERPLATE_SHARE)}
    weeks: dict[K, list[int]] = {}
    for n, (key, _, _) in enumerate(items):
        weeks.setdefault(key, []).append(n)
    out = [False] * len(items)
    judged = {key: _judged([items[m][1:] for m in members]) for key, members in weeks.items()}
    if frames is None:
        frames = _frequent([found for _, found, _ in judged.values()])
    for key, members in weeks.items():
        lines = [items[m][1:] for m in members]
        for n, flag in zip(members, _or_framed(lines, judged[key][0], frames), strict=True):
            out[n] = flag or normal[n] in boilerplate
    return out
