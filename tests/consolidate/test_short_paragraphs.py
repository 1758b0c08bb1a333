"""A short paragraph of two sentences, one of a mould the week writes over and over and one a fact
("Cost check: the dim_store model scanned 181 GB on its last run. Sqlfluff is pinned to version
2.3.5."), is one line of the note and routine as a line. A week's summary reads it as its
sentences: the fact is kept among the week's facts, not left to the log's second part with the
mould's line, out of the summary and of the rest of it."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import _dated_lines, consolidate
from sidecar.consolidate.routine import apart, routine, run_frames
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import SUPERSEDED

START = date(2026, 1, 5)  # a Monday
UNTIL = date(2026, 2, 2)
FACT = "Sqlfluff is pinned to version 2.3.5 in the analytics repository."


def _mould(day: int, k: int) -> str:
    return f"Cost check: the model_{day}_{k} model scanned {day * 7 + k * 13 + 40} GB on its last run."


def _aside(day: int, k: int) -> str:
    return f"Storage for int_refunds_{k} is now {day * 3 + k + 150} GB after the clean-up."


def _week(week: int, *, fact_day: int = 2, per_day: int = 3) -> list[tuple[str, str]]:
    out = []
    for d in range(5):
        source = f"daily/{START + timedelta(days=7 * week + d)}.md"
        out += [(source, _mould(d, k)) for k in range(per_day)]
        out += [(source, _aside(d, k)) for k in range(per_day)]
        if d == fact_day:
            out.append((source, f"{_mould(d, 9)} {FACT}"))  # a fact beside a routine sentence
            out.append((source, f"{_mould(d, 8)} {_aside(d, 8)}"))  # two routine sentences
    return out


def test_a_fact_beside_a_routine_sentence_is_said_apart() -> None:
    lines = _week(0)
    flags = dict(zip((text for _, text in lines), routine(lines), strict=True))
    read_apart = dict(zip((text for _, text in lines), [at is not None for at in apart(lines)], strict=True))
    assert flags[f"{_mould(2, 9)} {FACT}"]  # routine as a line: one of its sentences is the mould's
    assert read_apart[f"{_mould(2, 9)} {FACT}"]
    assert not read_apart[f"{_mould(2, 8)} {_aside(2, 8)}"]  # each sentence routine: one line of the log
    assert not read_apart[_mould(1, 0)] and not read_apart[_aside(1, 0)]


def test_a_mould_whose_frame_spans_its_sentences_stays_one_line() -> None:
    """ "Morning drizzle outside Leeds. 12 jobs booked today by two.": the week's frame is words
    of both sentences; neither holds one alone, so the line is one mould's, not said apart."""
    weather = str.split("drizzle sunshine gales fog frost hail sleet mist thunder haze")
    places = str.split("Leeds Hull York Bath Ely Wells Derby Truro Ripon Selby")
    lines = []
    for d in range(5):
        source = f"daily/{START + timedelta(days=d)}.md"
        for k in range(2):
            n = 2 * d + k
            said = f"Morning {weather[n]} outside {places[n]}. {n + 3} jobs {weather[9 - n]}ish {places[9 - n]} by two."
            lines.append((source, said))
    assert all(routine(lines))
    assert all(at is None for at in apart(lines))


def test_also_where_the_run_makes_the_mould_routine() -> None:
    """A quiet week's mould is routine by the run's frames (``run_frames``); the fact said beside
    one of its sentences is said apart there too."""
    busy = [_week(w) for w in range(3)]
    quiet = _week(3, per_day=1)
    frames = run_frames([*busy, quiet])
    assert not any(routine(quiet))  # the week alone sees no mould
    read_apart = dict(zip((text for _, text in quiet), [at is not None for at in apart(quiet, frames)], strict=True))
    assert read_apart[f"{_mould(2, 9)} {FACT}"]
    assert not read_apart[f"{_mould(2, 8)} {_aside(2, 8)}"]
    assert not read_apart[_mould(1, 0)]


def _tier(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    (root / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for w in range(2):
        for d in range(5):
            day = START + timedelta(days=7 * w + d)
            said = [f"{_mould(d, k)} {_aside(d, k)}" for k in range(3)]
            if d == 2:
                said.append(f"{_mould(d, 9)} {FACT}")
            (root / "daily" / f"{day.isoformat()}.md").write_text(
                f"# {day.isoformat()}\n\n## Notes\n\n" + "\n\n".join(said) + "\n"
            )


async def test_the_summary_keeps_the_fact_said_beside_a_mould(tmp_path: Path) -> None:
    _tier(tmp_path)
    await consolidate(tmp_path, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)
    summary = (tmp_path / "daily" / "summaries" / "2026-W02.md").read_text()
    facts = summary.split("## Notes (log)")[0]
    assert f"\n{FACT}\n" in facts  # a line of its own among the week's facts, not in its log
    assert _mould(2, 9) not in facts
    # a later run reads the fact in its note's line, on its day, not from the summary as a line of its own
    said, _ = _dated_lines(tmp_path, {}, {}, "AGENT.md", [])
    assert [s.where for s in said if FACT in s.text] == ["daily/2026-01-07.md", "daily/2026-01-14.md"]
    files = {p: p.read_bytes() for p in tmp_path.rglob("*.md")}
    report = await consolidate(tmp_path, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.md")} == files, report


OLD = "The autoclave in decon is the old Prestige Classic."
NEW = "Swapped the autoclave in decon for a Melag Vacuklav 41."


async def test_a_value_said_beside_a_mould_is_superseded(tmp_path: Path) -> None:
    """The old value, said beside a mould's sentence in two weeks, is read as a line of its own by
    the change search: the newer value supersedes it in its week's summary."""
    (tmp_path / "daily").mkdir(parents=True)
    for w in range(4):
        for d in range(5):
            day = START + timedelta(days=7 * w + d)
            said = [f"{_mould(d, k)} {_aside(d, k)}" for k in range(3)]
            if w < 2 and d in (1, 3):
                said.append(f"{_mould(d, 9)} {OLD}")
            if w == 3 and d == 2:
                said.append(NEW)
            (tmp_path / "daily" / f"{day.isoformat()}.md").write_text(
                f"# {day.isoformat()}\n\n## Notes\n\n" + "\n\n".join(said) + "\n"
            )
    await consolidate(tmp_path, since=None, until=date(2026, 2, 16), summariser=ExtractiveSummariser(), dry_run=False)
    summary = (tmp_path / "daily" / "summaries" / "2026-W02.md").read_text()
    current, _, superseded = summary.partition(f"## {SUPERSEDED}")
    assert OLD not in current
    assert OLD in superseded


RECURRING = "Rosalind does the stale table clean-up on Tuesdays."


async def test_a_fact_said_beside_moulds_on_several_days_is_promoted(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    (tmp_path / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for w in range(2):
        for d in range(5):
            day = START + timedelta(days=7 * w + d)
            said = [f"{_mould(d, k)} {_aside(d, k)}" for k in range(3)]
            if d in (1, 3):
                said.append(f"{_mould(d, 9)} {RECURRING}")
            (tmp_path / "daily" / f"{day.isoformat()}.md").write_text(
                f"# {day.isoformat()}\n\n## Notes\n\n" + "\n\n".join(said) + "\n"
            )
    await consolidate(tmp_path, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)
    agent = (tmp_path / "AGENT.md").read_text()
    assert any(RECURRING.rstrip(".") in line and "<!-- from daily/" in line for line in agent.splitlines()), agent
