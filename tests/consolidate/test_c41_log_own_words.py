"""A week's log keeps first the routine lines that say what no other line of the week says: the
archive holds every line of a mould, and a line that says something inside one (a fact said in
passing) would otherwise be left to the archive alone, where search reads it at half its score."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.extractive import SourceItem, extract
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.weekly import summarise_week

MONDAY = date(2026, 3, 2)
POTTERS = ("Orla", "Fintan", "Maeve", "Cian", "Aoife", "Ronan", "Sadhbh", "Tadhg")
PIECES = ("jug", "bowl", "platter", "mug", "vase", "teapot")
MOODS = ("slow", "steady", "good", "patchy")
#: Said once, in the mould of every other log line, with words of its own.
ASIDE = "Glazed the mug batch with Maeve; steady going, kiln two thermocouple reads eleven degrees hot."


def _note(day: int) -> str:
    lines = [
        f"- Glazed the {PIECES[(day + n) % len(PIECES)]} batch with {POTTERS[(day * 3 + n) % len(POTTERS)]}; "
        f"{MOODS[n % len(MOODS)]} going."
        for n in range(12)
    ]
    if day == 2:
        lines.insert(5, f"- {ASIDE}")
    return f"# {(MONDAY + timedelta(days=day)).isoformat()}\n\n## Studio\n\n" + "\n".join(lines) + "\n"


async def test_the_logs_routine_line_with_words_of_its_own_is_kept() -> None:
    texts = {f"daily/{(MONDAY + timedelta(days=d)).isoformat()}.md": _note(d) for d in range(5)}
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=600, threshold=0.6, stale={}
    )
    log = week.text.split("## Studio (log)", 1)[1]
    assert ASIDE in log  # kept in the summary's log, live
    assert sum(line.startswith("Glazed the ") for line in log.splitlines()) < 61  # the bound still cuts the log


def test_the_own_words_choice_reads_only_the_named_items() -> None:
    items = [
        SourceItem("0", "Glazed the jug batch with Orla; slow going."),
        SourceItem("1", "Glazed the bowl batch with Cian; good going."),
        SourceItem("2", "Glazed the vase batch with Ronan; patchy going, thermocouple reads hot."),
        SourceItem("3", "Kiln two thermocouple replaced by the supplier, invoice attached."),
    ]
    assert extract(items, 80, novel={"2"}).text == items[2].text  # its own words, first
    assert extract(items, 80, novel={"3"}).text == items[3].text
    assert extract(items, 80).text != items[2].text  # the frequent words' choice, as before
