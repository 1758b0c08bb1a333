"""Consolidation on notes of other shapes: the seen histories of ``consolidation.py`` written again
as prose paragraphs or as meeting minutes, with the same facts, queries, changes, recurrences and
preferences, measured as that bench measures them.

Each day's lines are the history's own; only their shape changes:

- ``prose``: a shift handoff. The day's lines are joined into paragraphs of three to six sentences,
  one paragraph a line, with lead-in sentences and connectives; a planted fact is most often the
  last sentence of a routine paragraph, now and then inside a quoted chat message, and a recurring
  fact is said word for word inside a different paragraph each day.
- ``minutes``: a day's meeting minutes under a heading naming the day in words (no ISO date):
  attendees, decisions (most facts), action items and updates (two thirds of the log's lines,
  so the tier starts near its cap as the log's does), a question and answer with a question of
  the day's own ("Q (name): ... A: ..."), and a pasted bot output block.
- ``handoff``: ``prose`` under a heading naming the day in words ("Tuesday handoff, March 3"),
  with no section under it.
- ``paragraphs``: running prose, each day one or two long paragraphs (600 to 4,000 characters, no
  bullets, no headings); a planted fact is most often said inside a sentence about something else
  ("Swapped the waiting room magazines, and for the record, The key safe code is ...", word for word, so
  a recurring fact is promoted in its planted words), and now and
  then the day ends in a pasted ``key: value`` block of the day's counters.
- ``mixed``: a page of sections in many forms: a checklist of the day's work (``- [x]`` and
  ``- [ ]``), short paragraphs of one or two sentences, pasted settings (``key: value`` lines; a
  fact "The X is Y" written ``X: Y``) and a quoted email (``> From:``, ``> Subject:``, the fact in
  its body). Each planted fact keeps one form on every day it is said (chosen by its words), as an
  author keeps a setting in its settings block; its ``key: value`` wording is then the planted text
  a recurring fact's promotion is checked by.

Pasted blocks (``RAW|`` lines) and the lines written to the files directly (injections, one-note
orders) stay as the history wrote them. The planted facts are the history's lines word for word,
so every figure of ``consolidation.py`` reads the same: facts in a top 5, latest value first,
recurring facts in AGENT.md, preferences in the block, the tier against its cap.

    python -m tests.bench.consolidation_shapes fresh12 fresh9 --shape prose
    python -m tests.bench.consolidation_shapes fresh12 --shape minutes --show 40   # one day, as written
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime

from sidecar.logs import configure_logging
from tests.bench import consolidation as bench
from tests.bench.consolidation_gen import INJECTION, History

SHAPES = ("prose", "minutes", "mixed", "handoff", "paragraphs")
#: The lines written to a note directly (a shell edit): kept as they are, one a line.
_DIRECT = frozenset(
    {INJECTION}.union(
        *(
            getattr(__import__(f"tests.bench.{module}", fromlist=[name]), name)
            for module, name in (
                ("consolidation_gen_lab", "DIRECT"),
                ("consolidation_gen_home", "DIRECT_HOME"),
                ("consolidation_gen_bakery", "DIRECT_BAKERY"),
                ("consolidation_gen_farm", "DIRECT_FARM"),
                ("consolidation_gen_removals", "DIRECT_REMOVALS"),
                ("consolidation_gen_bikeshop", "DIRECT_BIKESHOP"),
                ("consolidation_gen_dental", "DIRECT_DENTAL"),
                ("consolidation_gen_school", "DIRECT_SCHOOL"),
                ("consolidation_gen_platform", "DIRECT_PLATFORM"),
                ("consolidation_gen_dataeng", "DIRECT_DATAENG"),
                ("consolidation_gen_mobile", "DIRECT_MOBILE"),
                ("consolidation_gen_mleng", "DIRECT_MLENG"),
                ("consolidation_gen_payments", "DIRECT_PAYMENTS"),
            )
        )
    )
)
_NAMES = str.split("Ade Bea Cato Dev Efe Fen Gil Hiro Ines Jun Kit Lou Mo Nell Oz Pia Quin Ravi Sol Tam")
_LEAD_INS = [
    "Handoff for whoever picks this up next.",
    "Quick summary of the shift before I log off.",
    "Picking up where the last handoff left off.",
    "Mostly a quiet stretch, so here is the rundown.",
    "A few things from this afternoon.",
    "Morning was busier than expected.",
    "Catching up on notes from earlier.",
    "Nothing on fire, but a few bits to pass on.",
]
_CONNECTIVES = [
    "Nothing unusual there.",
    "That took longer than it should have.",
    "No one seemed worried about it.",
    "Worth keeping an eye on tomorrow.",
    "I checked it twice to be sure.",
    "Anyway, moving on.",
    "The rest was the usual.",
    "Someone asked about it in standup too.",
]
#: What joins a planted fact to the routine sentence it is said inside (``_paragraphs_day``).
_INSIDE = [", and for the record, ", ", and while I remember, ", " - also, ", "; by the way, ", " (reminder: "]
_CHAT = ["{who} wrote in the channel:", "{who} posted in chat:", "From {who}'s message:", "{who} said on the call:"]
_MONTHS = str.split("January February March April May June July August September October November December")


def _sentence(line: str) -> str:
    """A note line as a sentence: ending in a full stop unless it ends in one already."""
    text = " ".join(line.split())
    return text if text[-1:] in ".!?" else f"{text}."


def _facts(history: History) -> set[str]:
    """The day lines that carry a planted fact, a change or a preference."""
    planted = {p.text for p in (*history.static, *history.recurring)}
    planted |= {t for c in history.changed for t in (c.old, c.new)}
    answers = [p.answer.lower() for p in history.preferences]
    return planted | {line for day in history.notes for line in day if any(a and a in line.lower() for a in answers)}


def _connected(rng: random.Random, sentence: str) -> str:
    """A routine sentence with a connective in front when its first word is a verb in the past
    tense (lowercased without changing a name), else as it is."""
    head, _, rest = sentence.partition(" ")
    if head.endswith("ed") and head[:1].isupper() and head[1:].islower() and rng.random() < 0.5:
        return f"{rng.choice(['Then I', 'After that I', 'Later I', 'Also'])} {head.lower()} {rest}"
    return sentence


def _prose_day(rng: random.Random, lines: list[str], facts: set[str], keep: float = 1.0) -> list[str]:
    """A day's lines as paragraphs of three to six sentences, each paragraph a ``RAW|`` line;
    ``keep`` below one leaves that share of the routine lines in (the others unsaid)."""
    out: list[str] = []
    said = [ln for ln in lines if ln not in facts and not _kept(ln) and (keep >= 1 or rng.random() < keep)]
    routine = [_connected(rng, _sentence(ln)) for ln in said]
    planted = [_sentence(ln) for ln in lines if ln in facts and not _kept(ln)]
    out += [ln for ln in lines if _kept(ln)]
    paragraphs: list[list[str]] = []
    while routine:
        take = rng.randint(2, 4)
        paragraphs.append([rng.choice(_LEAD_INS)] if rng.random() < 0.4 else [])
        paragraphs[-1] += routine[:take]
        del routine[:take]
        if rng.random() < 0.3:
            paragraphs[-1].insert(rng.randint(1, len(paragraphs[-1])), rng.choice(_CONNECTIVES))
    if not paragraphs:
        paragraphs.append([rng.choice(_LEAD_INS)])
    for fact in planted:
        paragraph = rng.choice(paragraphs)
        if rng.random() < 0.25:
            said = f'{rng.choice(_CHAT).format(who=rng.choice(_NAMES))} "{fact}"'
        else:
            said = fact
        if rng.random() < 0.7:
            paragraph.append(said)
        else:
            paragraph.insert(rng.randint(0, len(paragraph)), said)
    rng.shuffle(paragraphs)
    out += [f"RAW|{' '.join(p)}\n\n" for p in paragraphs]
    return out


def _paragraphs_day(rng: random.Random, lines: list[str], facts: set[str], keep: float = 1.0) -> list[str]:
    """A day's lines as one or two long paragraphs of running prose, each a ``RAW|`` line, a
    planted fact most often inside a routine sentence (``_INSIDE``), now and then a pasted block of
    counters after them (module docstring)."""
    said = [ln for ln in lines if ln not in facts and not _kept(ln) and (keep >= 1 or rng.random() < keep)]
    sentences = [rng.choice(_LEAD_INS), *(_connected(rng, _sentence(ln)) for ln in said)]
    for fact in (_sentence(ln) for ln in lines if ln in facts and not _kept(ln)):
        n = rng.randrange(1, len(sentences)) if len(sentences) > 1 else 0
        if n and rng.random() < 0.7:  # inside a sentence about something else
            joint = rng.choice(_INSIDE)
            sentences[n] = sentences[n].rstrip(".!?") + joint + (fact[:-1] + ")." if joint.startswith(" (") else fact)
        else:
            sentences.insert(n, fact)
    text = " ".join(sentences)
    cut = len(sentences) // 2 if len(text) > 4000 or (len(text) > 1200 and rng.random() < 0.5) else len(sentences)
    out = [f"RAW|{' '.join(part)}\n\n" for part in (sentences[:cut], sentences[cut:]) if part]
    if rng.random() < 0.3:
        out.append(f"RAW|queue_depth: {rng.randint(3, 90)}\nrestarts_today: {rng.randint(0, 4)}\n\n")
    return out + [ln for ln in lines if _kept(ln)]


def _kept(line: str) -> bool:
    """A line the day keeps as the history wrote it: a pasted block or a direct edit."""
    return line.startswith("RAW|") or line in _DIRECT


def _minutes_day(rng: random.Random, day: date, n: int, lines: list[str], facts: set[str]) -> list[str]:
    """A day's lines as one meeting's minutes, under a heading naming the day in words."""
    people = rng.sample(_NAMES, rng.randint(3, 5))
    # minutes are terser than a log: a third of the routine lines go unminuted (the tier is near its cap)
    routine = [_sentence(ln) for ln in lines if ln not in facts and not _kept(ln) and rng.random() < 2 / 3]
    planted = [_sentence(ln) for ln in lines if ln in facts and not _kept(ln)]
    asked = planted.pop(rng.randrange(len(planted))) if planted and rng.random() < 0.4 else None
    asked = asked or (routine.pop(rng.randrange(len(routine))) if routine else "Nothing new.")
    actions = routine[: len(routine) // 3]
    updates = routine[len(routine) // 3 :]
    body = [
        f"## {day.strftime('%A')} sync, {_MONTHS[day.month - 1]} {day.day}\n\n",
        f"Attendees: {', '.join(people)}\n\n### Decisions\n\n",
        *(f"- {fact}\n" for fact in planted),
        "- No other decisions.\n" if not planted else "",
        "\n### Action items\n\n",
        *(f"- [ ] {rng.choice(people)}: {line}\n" for line in actions),
        "\n### Updates\n\n",
        *(f"- {line}\n" for line in updates),
        "\n### Q&A\n\n",
        f"Q ({rng.choice(people)}): what came of item {n * 7 + rng.randint(1, 6)} from the board? A: {asked}\n\n",
        "### Bot output\n\n```\n",
        *(
            f"ci-bot | pipeline {n * 100 + k} | {rng.choice(['passed', 'passed', 'failed'])} | {rng.randint(2, 40)}m\n"
            for k in range(rng.randint(3, 6))
        ),
        "```\n\n",
    ]
    return ["RAW|" + "".join(body), *(ln for ln in lines if _kept(ln))]


_SETTING = re.compile(r"^(?:The |the )?(?P<key>[^.:;,!?]{3,60}?) (?:is|are) (?P<value>[^;!?]{1,80}?)\.?$")
_SUBJECTS = ["Re: this week's queue", "Quick one", "Following up", "Handover", "Re: settings", "FYI"]


def _form(line: str) -> int:
    """Which form a planted line takes in a mixed note (0 setting, 1 email, 2 checklist, 3
    paragraph): the same on every day it is said."""
    return zlib.crc32(line.encode()) % 4


def _setting(line: str) -> str | None:
    """A fact "The X is Y" as a pasted setting ``X: Y``; None when it is not of that form."""
    match = _SETTING.match(" ".join(line.split()))
    if match is None or any(ch in match["key"] for ch in "()[]`"):
        return None
    return f"{match['key']}: {match['value']}"


def _mixed_text(line: str) -> str:
    """How a planted line is written in a mixed note: as a setting when its form is one and it
    reads as one, else as written."""
    return (_setting(line) or line) if _form(line) == 0 else line


def _mixed_day(rng: random.Random, n: int, lines: list[str], facts: set[str]) -> list[str]:
    """A day's lines as a mixed page: a checklist, short paragraphs, pasted settings and quoted
    emails, each under a heading of its own (module docstring)."""
    people = rng.sample(_NAMES, 3)
    routine = [ln for ln in lines if ln not in facts and not _kept(ln)]
    planted = [ln for ln in lines if ln in facts and not _kept(ln)]
    rng.shuffle(routine)
    cut = len(routine) // 2
    checklist = [f"- [{rng.choice('xx ')}] {ln}\n" for ln in routine[:cut]]
    sentences = [_sentence(ln) for ln in routine[cut:]]
    settings = [f"queue_depth: {rng.randint(3, 90)}\n", f"sla_breaches_today: {rng.randint(0, 4)}\n"]
    emails: list[str] = []
    for fact in planted:
        form = _form(fact)
        if form == 0 and (setting := _setting(fact)) is not None:
            settings.append(f"{setting}\n")
        elif form == 1:
            who = rng.choice(people)
            emails.append(
                f"> From: {who} <{who.lower()}@example.org>\n> Subject: {rng.choice(_SUBJECTS)}\n>\n"
                f"> Hi all,\n> {_sentence(fact)}\n> Thanks, {who}\n\n"
            )
        elif form == 2:
            checklist.insert(rng.randint(0, len(checklist)), f"- [x] {fact}\n")
        else:
            sentences.insert(rng.randint(0, len(sentences)), _sentence(fact))
    paragraphs: list[str] = []
    while sentences:
        take = rng.randint(1, 2)
        paragraphs.append(" ".join(sentences[:take]) + "\n\n")
        del sentences[:take]
    body = [
        "## Checklist\n\n",
        *checklist,
        "\n## Notes\n\n",
        *paragraphs,
        "## Settings (pasted)\n\n",
        *settings,
        "\n",
    ]
    if emails:
        body += ["## Email\n\n", *emails]
    return ["RAW|" + "".join(body), *(ln for ln in lines if _kept(ln))]


def reshaped(history: History, shape: str, seed: int) -> History:
    """``history`` with each day's lines written in ``shape`` (``prose`` or ``minutes``). Prose
    over the bench's tier cap as written says fewer routine lines, a twentieth less at a time,
    until it fits (a history within the cap is written with all of them)."""
    facts = _facts(history)
    for keep in (1.0, 0.95, 0.9, 0.85, 0.8):
        rng = random.Random(f"{shape}:{seed}")
        notes = []
        for n, lines in enumerate(history.notes):
            day = history.start.fromordinal(history.start.toordinal() + n)
            if shape == "prose":
                notes.append(_prose_day(rng, lines, facts, keep))
            elif shape == "handoff":  # prose under a heading naming the day, no section under it
                title = f"RAW|## {day.strftime('%A')} handoff, {_MONTHS[day.month - 1]} {day.day}\n\n"
                notes.append([title, *_prose_day(rng, lines, facts, keep)])
            elif shape == "mixed":
                notes.append(_mixed_day(rng, n, lines, facts))
            elif shape == "paragraphs":
                notes.append(_paragraphs_day(rng, lines, facts, keep))
            else:
                notes.append(_minutes_day(rng, day, n, lines, facts))
        written = sum(
            len(f"# {n}\n\n## Log\n") + sum(len(bench._markdown(ln)) for ln in day) for n, day in enumerate(notes)
        )
        if shape not in ("prose", "handoff", "paragraphs") or written <= 0.98 * bench.CAP:
            break
    static, recurring = history.static, history.recurring
    if shape == "mixed":  # a fact written as a setting is planted in that wording
        static = [replace(p, text=_mixed_text(p.text)) for p in static]
        recurring = [replace(p, text=_mixed_text(p.text)) for p in recurring]
    return History(
        history.start,
        notes,
        static,
        recurring,
        history.changed,
        history.preferences,
        history.markers,
    )


def _shaped_maker(shape: str) -> Callable[[str, int, date], History]:
    seen = bench._history

    def make(kind: str, seed: int, today: date) -> History:
        return reshaped(seen(kind, seed, today), shape, seed)

    return make


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("kinds", nargs="+", help="seen histories of consolidation.py (fresh12 fresh9 ...)")
    parser.add_argument("--shape", choices=SHAPES, required=True)
    parser.add_argument("--show", type=int, default=None, help="print day N of each history as written, no run")
    args = parser.parse_args(argv)
    make = _shaped_maker(args.shape)
    if args.show is not None:
        for kind in args.kinds:
            history = make(kind, bench.SEEDS[kind], datetime.now(UTC).date())
            print("".join(bench._markdown(ln) for ln in history.notes[args.show]))
        return
    bench._history = make  # the bench's runs read their history through this name
    bench.apply_budget()
    configure_logging("console", "error")
    started = time.perf_counter()
    print(f"load average at start: {os.getloadavg()[0]:.1f}; search: {bench.EMBEDDER}; shape: {args.shape}")
    for kind in args.kinds:
        result = asyncio.run(bench._generated(kind, bench.SEEDS[kind]))
        bench._table(f"{kind} written as {args.shape} (seed {bench.SEEDS[kind]})", result)
    print(f"\n{time.perf_counter() - started:.0f} s in all; load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
