"""A terse writer's line of fragments, joined by semicolons or spaced dashes, says a standing fact
beside the day's routine fragments, first or last ("Glycol chiller valve behind FV3; Sight glass
FV2 cleaned; Hose 4 leaking - taped"). The fact is read apart from the mould, where read whole the
line went to the log with its mould and the fact never recurred."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.periods import apart_parts
from sidecar.consolidate.routine import apart

MONDAY = date(2026, 3, 2)
PUBS = ("Kings Head", "Blue Bell", "Station Tap", "Fell Hotel", "Tarn Inn")
MALTS = ("Munich", "Vienna", "Crystal", "Chocolate", "Amber")
STAFF = ("Carys", "Olga", "Tomas", "Niamh", "Bashir")
EVENTS = ("open day", "tasting night", "quiz", "cask festival", "tour")
HEAD = "Glycol chiller valve behind FV3"
HEAD_LINE = f"{HEAD}; Sight glass FV2 cleaned; Hose 4 leaking - taped"
TAIL = "Pallet jack max load 1800 kg"
TAIL_LINE = f"Sight glass FV4 cleaned; Hose 2 leaking - taped - {TAIL}"
REPORT_LINE = "Checked the glycol chiller behind FV3; Sight glass FV1 cleaned; Hose 5 leaking - taped"


def _lines() -> list[tuple[str, str]]:
    """A week of a brewery crew's fragments: every mould names a vessel ("FV"), and one opens with
    a fragment of its own slot (someone asked about something)."""
    out = []
    for day in range(5):
        source = f"daily/{(MONDAY + timedelta(days=day)).isoformat()}.md"
        for k in range(2):
            n = day * 2 + k
            out += [
                (source, f"Sight glass FV{n % 6 + 1} cleaned; Hose {n % 9 + 1} leaking - taped"),
                (source, f"{n + 11} kegs out to {PUBS[n % 5]}; FV{n % 6 + 1} CIP - done"),
                (source, f"Grain in: {n + 20} sacks {MALTS[n % 5]} - FV{n % 6 + 1} temp {n + 14}C"),
                (
                    source,
                    f"{STAFF[n % 5]} asked about the {EVENTS[(n + day) % 5]}; said we would confirm by the weekend",
                ),
            ]
    out += [("daily/2026-03-04.md", HEAD_LINE), ("daily/2026-03-05.md", TAIL_LINE)]
    out.append(("daily/2026-03-06.md", REPORT_LINE))
    return out


def test_a_fact_said_as_a_lines_first_or_last_fragment_is_read_apart() -> None:
    lines = _lines()
    where = apart(lines)
    head_at, tail_at = where[-3], where[-2]
    # first: a fragment with no small word that names a value, whose one frequent word ("FV", said
    # in every mould) is no mould's slot
    assert head_at is not None
    assert apart_parts(HEAD_LINE, head_at) == [HEAD, "Sight glass FV2 cleaned; Hose 4 leaking - taped"]
    # last, after the mould's fragments and an aside of one word
    assert tail_at is not None
    assert apart_parts(TAIL_LINE, tail_at)[1] == TAIL


def test_a_moulds_own_fragments_stay_whole() -> None:
    where = apart(_lines())
    # the moulds, the one that opens with its slot ("Carys asked about the quiz", said with
    # "confirm" line after line) among them, and a first fragment that reports what was done
    assert all(at is None for at in where[:-3])
    assert where[-1] is None
