"""A standing fact a diarist says inside a sentence about the day, with no punctuation between it
and the words around it ("I reminded myself that ...", "I told her ..."), recurs as the run of
words its days share; a name said inside a clause about something else does not."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.periods import Line
from sidecar.consolidate.promote import recurring

_FACT = "the weir gate key hangs in locker 12"
_DAYS = [
    f"While the porridge cooked I reminded myself that {_FACT}, which I keep forgetting.",
    f"A canoeist asked at the slipway and I told him {_FACT} and off he went.",
    f"It came up again over lunch that {_FACT} and nobody minded.",
    f"Writing it down for the relief keeper: {_FACT}.",
    f"Mostly rain, and the ferry was late, but I did tell the new volunteer {_FACT}.",
]
_OTHER = [
    "One of the Ormerod party wanted to know about the tide, so I showed them the table.",
    "I lent a pump to one of the Ormerod party before breakfast.",
    "The kettle went again and one of the Ormerod party fixed the plug for us.",
    "Cleared the moss off the slipway with one of the Ormerod party helping.",
    "Later one of the Ormerod party asked for the bus times.",
]


def _lines() -> list[Line]:
    start = date(2026, 4, 6)
    out = []
    for n, (said, other) in enumerate(zip(_DAYS, _OTHER, strict=True)):
        source = f"daily/{(start + timedelta(days=9 * n)).isoformat()}.md"
        out += [Line(said, source, "Log"), Line(other, source, "Log")]
    return out


def test_a_fact_said_inside_a_clause_recurs_with_its_days() -> None:
    found = [c for c in recurring(_lines()) if _FACT in c.text.lower()]
    assert found, recurring(_lines())
    assert len(found[0].sources) == len(_DAYS)


def test_a_name_said_inside_a_clause_about_something_else_is_no_fact() -> None:
    assert not [c for c in recurring(_lines()) if "ormerod" in c.text.lower()]


def test_a_line_reporting_work_done_is_not_cut_to_a_run_of_its_words() -> None:
    start = date(2026, 4, 6)
    said = [
        "Ordered two fenders from Harbour Chandlery for the launch, due next week",
        "Ordered six fenders from Harbour Chandlery for the launch, due Friday",
        "Ordered four fenders from Harbour Chandlery for the launch, due soon",
        "Ordered a boat hook from Harbour Chandlery for the launch, due Monday",
    ]
    lines = [Line(s, f"daily/{(start + timedelta(days=8 * n)).isoformat()}.md", "Log") for n, s in enumerate(said)]
    assert not [c for c in recurring(lines) if "chandlery" in c.text.lower()]
