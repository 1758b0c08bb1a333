"""The operator's wish quoted with who said it, however the line tells that ('Nell said on the
phone: "..."', '"..." That was Nell again.'), is read as what it says; an instruction asking to be
told ("Ring me before ...") is one."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.conduct import is_rule
from sidecar.consolidate.promote import preferences

_SAID = (
    'Nell said it again when she rang: "Bookings over twelve berths are not to be taken."',
    '"Never take a booking over twelve berths." That was Nell, twice this week.',
    'A card from Nell pinned by the till says "Don\'t take bookings for more than twelve berths."',
    'Nell, on her way out: "Bookings over twelve berths are not to be taken."',
)


def _notes() -> dict[str, str]:
    start = date(2026, 5, 4)
    texts = {}
    for n, said in enumerate(_SAID):
        day = start + timedelta(days=10 * n)
        lines = ["Pumped out the bilge on the launch", said, "Rain most of the afternoon"]
        texts[f"daily/{day.isoformat()}.md"] = f"# {day.isoformat()}\n\n## Log\n" + "".join(f"- {x}\n" for x in lines)
    return texts


def test_a_wish_quoted_with_who_said_it_is_promoted_as_what_it_says() -> None:
    found = [c for c in preferences(_notes()) if "twelve berths" in c.text]
    assert len(found) == 1, preferences(_notes())
    assert "Nell" not in found[0].text
    assert len(found[0].sources) == len(_SAID)


def test_an_instruction_to_be_told_first_is_a_rule() -> None:
    assert is_rule("Ring me before you turn anyone away.")
    assert is_rule("Phone us before any reprint goes on")
