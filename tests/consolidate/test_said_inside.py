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
