"""A statement said inside a routine sentence whose mould goes on past its first clauses, through
its own slot ("Reviewed merge request !7 for the billing team: small changes to the retry, and
while I remember, the spare projector bulbs are kept in cupboard 4B."), is read apart from where
the mould ends, as one said right after the mould's frame is."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.periods import apart_parts
from sidecar.consolidate.routine import SENTENCES, apart

MONDAY = date(2026, 3, 2)
STAFF = ("Aoife", "Rhys", "Kamala", "Declan", "Femi")
ITEMS = ("gauze", "gloves", "bibs", "masks", "sutures", "swabs", "needles", "aprons", "cups", "tips")
SITES = ("Harbour", "Quayside", "Millbrook", "Ferry", "Castle", "Abbey", "Bridge", "Orchard", "Market", "Station")
SIZES = ("small", "risky")
PARTS = ("retry", "cache", "loader", "exporter", "schema")
FACT = "the spare projector bulbs are kept in cupboard 4B."


def _lines(carrier: str) -> list[tuple[str, str]]:
    out = []
    for day in range(5):
        source = f"daily/{(MONDAY + timedelta(days=day)).isoformat()}.md"
        out += [
            (source, f"Chair in surgery {n % 4 + 1} squeaking again, {STAFF[(day + n) % len(STAFF)]} oiled it.")
            for n in range(3)
        ]
        out += [(source, f"Stock check: {ITEMS[day * 2 + k]} running low at {SITES[day * 2 + k]}.") for k in range(2)]
        out += [
            (
                source,
                f"Reviewed merge request !{day * 10 + k} for the billing team: {SIZES[k]} changes to the "
                f"{PARTS[(day + k) % 5]}.",
            )
            for k in range(2)
        ]
    out.append(("daily/2026-03-04.md", carrier))
    return out


def test_a_statement_after_the_moulds_slot_is_read_apart() -> None:
    carrier = (
        f"Reviewed merge request !7 for the billing team: small changes to the retry, and while I remember, {FACT}"
    )
    where = apart(_lines(carrier))
    assert where[-1] is not None and where[-1] != SENTENCES
    mould, said = apart_parts(carrier, where[-1])
    assert said == FACT
    assert mould.startswith("Reviewed merge request !7 for the billing team: small changes to the retry")
    assert all(at is None for at in where[:-1])  # the mould's own lines, slot and all, stay whole


def test_a_mould_ending_in_its_slot_stays_whole() -> None:
    carrier = "Reviewed merge request !8 for the billing team: small changes to the retry, and to the cache."
    assert apart(_lines(carrier))[-1] is None
