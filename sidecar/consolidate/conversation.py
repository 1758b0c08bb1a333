"""Conversations in daily notes: transcripts ("- Caroline: I went to a support group yesterday")
rolled up as a line that says where they are, their whole text left to the archive.

A note section is a conversation when ``TURN_SHARE`` of its lines are turns (a speaker's name and
a colon, then what they said) of speakers who each speak at least twice, and there are two or more
of them: a work log's odd "Standup: ..." line does not make one, nor does a list of "Owner: Priya",
"Port: 8080" (each label once). And the speaker changes from one turn to the next at least
``ALTERNATION`` of the time, as people answer each other: a work log's labelled bullets ("Context:
...", "Done: ...", "Done: ...", "Learned: ...", "Next: ...") name fields, each said many times in a
row, and stay lines of their own. Its turns are not read for changed values either: in a
conversation "now" and "moved" tell a story, not a fact's new value. Every turn of a conversation may carry something (in LoCoMo's transcripts about a
third of the turns are the evidence for some question), so an extractive summary cannot drop
turns without losing what a search finds; and any part of a transcript in a summary ranks above
the archived whole (the archive's standing is half) and pushes the turn that answers a question
out of the top hits: a line of its topic words does, a tenth of the turns kept does. So a week's
summary holds one line per conversation, its day, speakers, number of turns and where it is in
full, and the transcript stays searchable whole in ``archive/daily/``, ranked as it was among the
other transcripts, until the archive's own cap compresses it (``archive.py``); from then on it is
read with ``zcat``, no longer searched. ``python -m tests.bench consolidation`` measures it on
LoCoMo conversations as notes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from sidecar.consolidate.periods import Line, archive_rel

__all__ = ["ALTERNATION", "TURN_SHARE", "Conversation", "conversations", "digest"]

TURN_SHARE = 0.6
ALTERNATION = 0.75  # of a conversation's turns, the share whose speaker is not the turn before's
#: A speaker's name (one or two capitalised words) and a colon opening a line.
_TURN = re.compile(r"^(?:[-*+]\s+)?([A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*)?):\s+(\S.*)$")


@dataclass(frozen=True, slots=True)
class Conversation:
    """A note section's turns: where they were written, under which heading, and by whom."""

    source: str
    heading: str
    turns: tuple[Line, ...]
    speakers: tuple[str, ...]


def conversations(lines: Sequence[Line]) -> tuple[list[Line], list[Conversation]]:
    """The lines that are not turns of a conversation, and the conversations (module docstring),
    in the order their notes come."""
    groups: dict[tuple[str, str], list[Line]] = {}
    for line in lines:
        groups.setdefault((line.source, line.heading), []).append(line)
    talks: list[Conversation] = []
    for (source, heading), members in groups.items():
        order = [m.group(1) for line in members if (m := _TURN.match(line.text))]
        said = Counter(order)
        speakers = [name for name, turns in said.items() if turns >= 2]
        if (
            len(speakers) >= 2
            and sum(said[name] for name in speakers) >= TURN_SHARE * len(members)
            and _answered(order) >= ALTERNATION
        ):
            talks.append(Conversation(source, heading, tuple(members), tuple(speakers)))
    inside = {(c.source, c.heading) for c in talks}
    return [line for line in lines if (line.source, line.heading) not in inside], talks


def _answered(order: Sequence[str]) -> float:
    """The share of turns after the first whose speaker is not the one before."""
    if len(order) < 2:
        return 0.0
    return sum(a != b for a, b in pairwise(order)) / (len(order) - 1)


def digest(talk: Conversation) -> str:
    """The conversation's line in its week's summary (module docstring)."""
    day = talk.source.rsplit("/", 1)[-1].removesuffix(".md")
    who = " and ".join(talk.speakers)
    return f"- Conversation of {who} on {day}, {len(talk.turns)} turns (in full: {archive_rel(talk.source)})\n"
