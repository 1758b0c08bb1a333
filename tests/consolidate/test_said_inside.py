"""A statement said inside a routine sentence, after the clauses that hold the mould's frame ("Chair
in surgery 3 squeaking again, Aoife oiled it, and while I remember, the code for the front door is
8137Y."), is read apart from the mould: the week's summary keeps it as a fact, where read whole the
line went to the log with its mould and out of the summary and its rest."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.periods import apart_parts, said_inside
from sidecar.consolidate.routine import SENTENCES, apart
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.weekly import summarise_week

MONDAY = date(2026, 3, 2)
STAFF = ("Aoife", "Rhys", "Kamala", "Declan", "Femi")
ITEMS = ("gauze", "gloves", "bibs", "masks", "sutures", "swabs", "needles", "aprons", "cups", "tips")
SITES = ("Harbour", "Quayside", "Millbrook", "Ferry", "Castle", "Abbey", "Bridge", "Orchard", "Market", "Station")
SIZES = ("small", "risky")
ALERTS = ("pod restarts", "disk pressure", "cert expiry", "queue depth", "latency spike")
PARTS = ("retry", "cache", "loader", "exporter", "schema")
FACT = "the spare projector bulbs are kept in cupboard 4B."
CARRIER = f"Chair in surgery 2 squeaking again, Rhys oiled it, and while I remember, {FACT}"


def _mould(day: int, n: int) -> str:
    return f"Chair in surgery {n % 4 + 1} squeaking again, {STAFF[(day + n) % len(STAFF)]} oiled it."


def _lines() -> list[tuple[str, str]]:
    out = []
    for day in range(5):
        source = f"daily/{(MONDAY + timedelta(days=day)).isoformat()}.md"
        out += [(source, _mould(day, n)) for n in range(3)]
        out += [(source, f"Stock check: {ITEMS[day * 2 + k]} running low at {SITES[day * 2 + k]}.") for k in range(2)]
        out += [
            (
                source,
                f"Reviewed merge request !{day * 10 + k} for the billing team: {SIZES[k]} changes to the {PARTS[(day + k) % 5]}.",
            )
            for k in range(2)
        ]
        out += [
            (source, f"INC-{day * 2 + k} postmortem draft shared ({PARTS[(day + k) % 5]} {ALERTS[(day * 2 + k) % 5]}).")
            for k in range(2)
        ]
    out.append(("daily/2026-03-04.md", CARRIER))
    return out


def test_a_statement_said_after_a_moulds_clauses_is_read_apart() -> None:
    lines = _lines()
    where = apart(lines)
    assert where[-1] is not None and where[-1] != SENTENCES
    mould, said = apart_parts(CARRIER, where[-1])
    assert said == FACT and mould.startswith("Chair in surgery 2 squeaking again")
    assert said in said_inside(CARRIER)  # a later run knows the part as its note's
    # the mould's own lines, an aside of two words, a short clause's frame of two and a mould's slot
    # ("small changes to the retry": "changes" said with "reviewed" in every such line; a name in
    # brackets, "(cache disk pressure)", no clause) stay whole
    assert all(at is None for at in where[:-1])


async def test_the_week_keeps_the_statement_said_inside_a_mould() -> None:
    texts: dict[str, list[str]] = {}
    for source, text in _lines():
        texts.setdefault(source, []).append(f"- {text}\n")
    notes = {source: f"# {source[6:16]}\n\n## Log\n\n" + "".join(lines) for source, lines in texts.items()}
    week = await summarise_week(
        "2026-W10", sorted(notes), notes, ExtractiveSummariser(), budget=2000, threshold=0.6, stale={}
    )
    kept = [line for line in (week.text + week.rest).splitlines() if FACT in line]
    assert kept == [f"- {FACT}"]


def test_a_labelled_value_said_inside_a_mould_is_read_apart() -> None:
    """A statement with no stop word that names a value ("Pellworth Supplies account number: PW4417",
    a name and a digit) is no bare slot of the mould: it is read apart as the statement with a stop
    word is, while the bracketed slots of the postmortem mould ("(cache disk pressure)") stay whole."""
    labelled = "Pellworth Supplies account number: PW4417."
    carrier = f"Chair in surgery 2 squeaking again, Rhys oiled it, and while I remember, {labelled}"
    lines = [*_lines()[:-1], ("daily/2026-03-04.md", carrier)]
    where = apart(lines)
    assert where[-1] is not None and where[-1] != SENTENCES
    assert apart_parts(carrier, where[-1])[1] == labelled
    assert all(at is None for at in where[:-1])


def _parking_week(carrier: str) -> list[tuple[str, str]]:
    """A week of a mould that runs over two clauses ("Parking complaint from Mr Arlott, told them
    about the side road."), and on two of its days nine orders of one sibling mould naming "Mr" and
    "side" too ("Mr Arlott's denture order went off today by the side door, docket DK-3100."):
    frequent, but on too few days to be a mould of the week."""
    names = ("Arlott", "Brisco", "Carrow", "Denholm", "Eckley", "Fairlie", "Gorran", "Hensby", "Ilsley")
    out = []
    for day in range(5):
        source = f"daily/{(MONDAY + timedelta(days=day)).isoformat()}.md"
        out += [
            (source, f"Parking complaint from Mr {names[(day + n) % 9]}, told them about the side road.")
            for n in range(3)
        ]
        if day < 2:
            out += [
                (source, f"Mr {names[n]}'s denture order went off today by the side door, docket DK-{3100 + n}.")
                for n in range(day * 5, min(9, day * 5 + 5))
            ]
    return [*out, ("daily/2026-03-06.md", carrier)]


def test_a_statement_after_a_mould_of_two_clauses_is_read_apart() -> None:
    """The mould's frame held in two clauses goes on past the first; the statement after it is read
    apart, though its words are written with one word of the mould's in the orders ("Mr", a name;
    "side"), not with the mould, and it says a word of the mould's in other words ("the side door")."""
    said = "Mrs Tregarthen's crown order went off today by the side door, docket DK-5521."
    carrier = f"Parking complaint from Mr Hensby, told them about the side road, and while I remember, {said}"
    lines = _parking_week(carrier)
    where = apart(lines)
    assert where[-1] is not None and where[-1] != SENTENCES
    assert apart_parts(carrier, where[-1]) == [
        "Parking complaint from Mr Hensby, told them about the side road, and while I remember",
        said,
    ]
    assert all(at is None for at in where[:-1])
