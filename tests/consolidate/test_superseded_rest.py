"""A week's own superseded lines: the first of them in its summary's ``## Superseded`` (within a
quarter of the section budget), the others of the budget's worth in the rest of the summary
(``archive/summaries/``), out of the tier's cap and ranked there as in the summary: at a quarter."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.weekly import SUPERSEDED_SHARE, rest_path
from sidecar.retrieval.standing import SUPERSEDED, standing

START = date(2026, 1, 5)  # a Monday
BUDGET = 2000
OLD = [f"The alarm threshold of probe P{n} is {10 + n} degrees." for n in range(30)]
NEW = [f"The alarm threshold of probe P{n} is {50 + n} degrees." for n in range(30)]


async def test_a_weeks_old_values_past_a_share_go_with_the_rest(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    for day, lines in ((0, OLD), (8, OLD), (35, NEW)):
        (tmp_path / "daily" / f"{START + timedelta(days=day)}.md").write_text(
            "## Probes\n" + "".join(f"- {line}\n" for line in lines)
        )
    report = await consolidate(
        tmp_path,
        since=None,
        until=START + timedelta(days=60),
        summariser=ExtractiveSummariser(),
        dry_run=False,
        section_budget=BUDGET,
    )
    summary = (tmp_path / "daily" / "summaries" / "2026-W02.md").read_text()
    head, _, shown = summary.partition("## Superseded\n")
    rest = (tmp_path / rest_path("2026-W02")).read_text()
    _, _, kept = rest.partition("## Superseded\n")
    assert shown and len(shown) <= BUDGET // SUPERSEDED_SHARE + max(len(ln) for ln in shown.splitlines(True))
    assert kept and len(shown) + len(kept) <= BUDGET
    assert not any(line in head for line in OLD)  # no old value is shown as current
    assert not any(line in rest.partition("## Superseded\n")[0] for line in OLD)
    in_shown = {line for line in OLD if line in shown}
    in_rest = {line for line in OLD if line in kept}
    assert in_shown and in_rest and not in_shown & in_rest
    left_out = {d.text.lstrip("- ") for d in report.dropped if d.reason == "budget" and d.period == "2026-W02"}
    assert set(OLD) == in_shown | left_out and in_rest <= left_out  # each is shown, or reported as left out
    # the rest's old values rank as the summary's: at a quarter, for their week's age
    summary_path = "daily/summaries/2026-W02.md"
    for path in (rest_path("2026-W02"), summary_path):
        assert standing(path, "Left out > Superseded") == SUPERSEDED * standing(path, "Left out > Probes")
    assert standing(rest_path("2026-W02"), "Superseded") == standing(summary_path, "Superseded")
