"""A mould the run writes a few times a week with other numbers each time is routine in every
week (``routine.reading_frames``): its lines go to the week's log, not to standing sections that
outrank the facts a later search asks for; a fact said as often keeps its value and stays a fact,
and so does a fact whose value changed once."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.routine import ROUTINE_LINES, _words, apart, reading_frames, routine, run_frames
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 2, 2)  # a Monday
WEEKS = 5
FACT = "The kiln room key hangs on hook 14 behind the glaze store."
OLD, NEW = (
    "The pottery van is serviced at Trevenna Motors, bay 2.",
    "The pottery van is serviced at Polgrain Motors, bay 7.",
)
ASIDE = "The clay for the spring courses comes from Wenford, 25 kg bags."


def _mould(week: int, day: int) -> str:
    """A studio's mould, said on three days a week: a firing log with its own numbers each time."""
    n = week * 7 + day
    return f"Firing log: bisque load packed in kiln B, batch FL-{4100 + 37 * n}, {40 - n} pots left to fire"


def _notes() -> dict[date, list[str]]:
    notes: dict[date, list[str]] = {}
    for week in range(WEEKS):
        for day in range(5):
            when = START + timedelta(days=7 * week + day)
            lines = [f"Opened the studio at 9 for the {day + 1}th class of the week."]
            if day in (0, 2, 4):
                lines.append(f"{_mould(week, day)}.")
            if day in (1, 3):  # said on ten days, the same number each time
                lines.append(FACT)
            if day == 1:  # changed once, in the run's third week
                lines.append(OLD if week < 3 else NEW)
            notes[when] = lines
    # the mould once more, with a fact said after it in the same line
    notes[START + timedelta(days=7 * 4 + 3)].append(f"{_mould(4, 3)}, and while I remember, {ASIDE.lower()}")
    return notes


def _weeks() -> list[list[tuple[str, str]]]:
    weeks: dict[int, list[tuple[str, str]]] = {}
    for when, lines in _notes().items():
        weeks.setdefault((when - START).days // 7, []).extend((f"daily/{when}.md", line) for line in lines)
    return [weeks[w] for w in sorted(weeks)]


def test_a_mould_said_with_other_numbers_is_a_frame_of_the_run() -> None:
    weeks = _weeks()
    frames = reading_frames(weeks)
    assert frames and all(frame <= _words_of(_mould(0, 0)) for frame in frames)  # its two sentences'
    week = weeks[1]
    moulded = [n for n, (_, text) in enumerate(week) if text.startswith("Firing log")]
    assert 0 < len(moulded) < ROUTINE_LINES
    assert not any(routine(week)[n] for n in moulded)  # the week alone does not see the mould
    flags = routine(week, run_frames(weeks))
    assert all(flags[n] for n in moulded)
    assert not any(flag for n, flag in enumerate(flags) if n not in moulded)  # the facts stay facts


def test_a_fact_said_as_often_or_changed_once_is_no_such_mould() -> None:
    """The key's hook, said on ten days, keeps its number; the van's garage changed once: neither
    line has eight numbers. Nor are the studio's opening lines one (five numbers, a week's days)."""
    frames = reading_frames(_weeks())
    said = {text for week in _weeks() for _, text in week}
    held = {text for text in said if any(frame <= _words_of(text) for frame in frames)}
    assert all(text.startswith("Firing log") for text in held)
    assert any(text.startswith("Firing log") for text in held)


def test_a_line_saying_more_than_the_mould_is_read_as_it_was() -> None:
    """A line holding the mould's words and a fact's is no line of the mould: a paragraph holding
    them says more than it, and stays as its week reads it."""
    weeks = _weeks()
    last = weeks[-1]
    frames = run_frames(weeks)
    [said] = [n for n, (_, text) in enumerate(last) if text.endswith(ASIDE.lower())]
    assert routine(last, frames)[said] is False
    assert apart(last, frames)[said] is None


def _words_of(text: str) -> frozenset[str]:
    return frozenset(_words(text))


async def test_the_moulds_lines_go_to_the_weeks_log(tmp_path: Path) -> None:
    """Through a run: each week's summary keeps the mould's lines in its log, the facts in its
    standing part."""
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    for when, lines in _notes().items():
        (root / "daily" / f"{when}.md").write_text("## Log\n" + "".join(f"- {line}\n" for line in lines))
    await consolidate(
        root, since=None, until=START + timedelta(days=90), summariser=ExtractiveSummariser(), dry_run=False
    )
    summaries = sorted((root / "daily" / "summaries").glob("*.md"))
    assert len(summaries) == WEEKS
    for path in summaries:
        standing, _, log = path.read_text().partition("## Log (log)")
        assert all(ASIDE.lower() in line for line in standing.splitlines() if line.startswith("- Firing log")), (
            path.read_text()
        )
        assert "Firing log" in log
        assert FACT in standing
    standing = summaries[-1].read_text().partition("## Log (log)")[0]
    assert ASIDE.lower() in standing  # the line saying more than the mould stands, whole
