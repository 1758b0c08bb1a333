"""A mould the run writes over and over is routine in every week, a quiet one too
(``routine.run_frames``): its lines go to the week's log, not to standing sections that outrank
the facts a later search asks for; a fact said a few times a week stays a fact."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.routine import ROUTINE_LINES, routine, routine_by, run_frames
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 2, 2)  # a Monday
CUSTOMERS = ["Okafor", "Brennan", "Lindqvist", "Moreau", "Tanaka", "Halloran", "Petrov", "Achebe"]


def _mould(day: int, n: int) -> list[str]:
    """A repair shop's mould: one line a job, another customer each time."""
    return [f"Wheel truing for {CUSTOMERS[(day + k) % len(CUSTOMERS)]} done, spokes checked." for k in range(n)]


def _week(week: int, per_day: int, days: int = 5) -> list[tuple[str, str]]:
    out = []
    for d in range(days):
        day = START + timedelta(days=7 * week + d)
        out += [(f"daily/{day}.md", line) for line in _mould(d, per_day)]
        out.append((f"daily/{day}.md", f"Opening hours on day {d} were as usual."))
    return out


def test_a_mould_routine_in_most_weeks_is_routine_in_a_quiet_one() -> None:
    busy = [_week(w, 3) for w in range(3)]  # fifteen a week: routine in each
    quiet = _week(3, 1, days=6)  # six: under ``ROUTINE_LINES`` alone
    moulded = [n for n, (_, text) in enumerate(quiet) if text.startswith("Wheel truing")]
    assert len(moulded) < ROUTINE_LINES
    assert not any(routine(quiet)[n] for n in moulded)  # the week alone does not see the mould
    frames = run_frames([*busy, quiet])
    flags = routine(quiet, frames)
    assert all(flags[n] for n in moulded)
    assert not any(flag for n, flag in enumerate(flags) if n not in moulded)  # its other lines stay
    items = [(w, source, text) for w, week in enumerate([*busy, quiet]) for source, text in week]
    by_week = routine_by(items)
    assert all(by_week[len(items) - len(quiet) + n] for n in moulded)


def test_a_mould_routine_in_too_few_weeks_stays_a_weeks_own() -> None:
    """Routine in two weeks only (fewer than ``RUN_WEEKS``), a mould does not reach the others."""
    weeks = [_week(0, 3), _week(1, 3), _week(2, 1, days=6)]
    assert run_frames(weeks) == frozenset()


async def test_a_quiet_weeks_mould_lines_go_to_its_log(tmp_path: Path) -> None:
    """Through a run: the quiet week's summary keeps its mould lines in its log, and a fact said
    on three days of that week stays in its standing part."""
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    fact = "Spoke orders go to Sapim through the Madison account."
    for week in range(4):
        for d in range(6 if week == 3 else 5):
            day = START + timedelta(days=7 * week + d)
            lines = _mould(d, 1 if week == 3 else 3) + ([fact] if week == 3 and d < 3 else [])
            (root / "daily" / f"{day}.md").write_text("## Log\n" + "".join(f"- {line}\n" for line in lines))
    await consolidate(
        root, since=None, until=START + timedelta(days=60), summariser=ExtractiveSummariser(), dry_run=False
    )
    name = f"{(START + timedelta(days=21)).isocalendar().year}-W{(START + timedelta(days=21)).isocalendar().week:02d}"
    summary = (root / "daily" / "summaries" / f"{name}.md").read_text()
    facts_part, _, log_part = summary.partition("## Log (log)")
    assert "Wheel truing" not in facts_part, summary
    assert "Wheel truing" in log_part
    assert fact in facts_part


def test_a_mould_routine_in_a_busy_spell_only_stays_that_spells() -> None:
    """Routine in three weeks of eight: under half the run's weeks, a busy spell, not the run's
    mould; the quiet weeks keep its lines as their own."""
    weeks = [_week(w, 3) for w in range(3)] + [_week(w, 1, days=6) for w in range(3, 8)]
    assert run_frames(weeks) == frozenset()
    assert run_frames(weeks[:6]) != frozenset()  # three of six: half the weeks


def test_a_weeks_reading_is_kept_for_the_next_pass() -> None:
    """A run reads its weeks' moulds, then its change search reads the same weeks (and each pass
    after its promotions, and the next run, again): the second reading of the same lines costs a
    small part of the first (thread CPU, not moved by the host's load)."""
    import time

    weeks = [[(src, f"{text} (run {w})") for src, text in _week(w, 12)] for w in range(12)]
    started = time.thread_time()
    frames = run_frames(weeks)
    first = time.thread_time() - started
    items = [(w, source, text) for w, week in enumerate(weeks) for source, text in week]
    started = time.thread_time()
    again = routine_by(items, frames)
    second = time.thread_time() - started
    assert frames and any(again)
    assert second < first / 4, (first, second)
