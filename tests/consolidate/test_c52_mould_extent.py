"""A statement said inside a routine sentence past where its mould's lines end is read apart, even
when it names what another mould's slot names ("Triaged 8 tickets in the infra queue, and while I
remember, the scheduler service listens on port 4760", in a week whose review mould names the
scheduler service); a mould's own slot, said where its lines go on, stays the mould's."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.periods import apart_parts
from sidecar.consolidate.routine import SENTENCES, apart

MONDAY = date(2026, 5, 4)
QUEUES = ("infra", "data", "growth", "billing", "mobile")
SERVICES = ("scheduler", "pricing", "ledger", "mailer", "search")
SIZES = ("small", "tidy", "risky")
PARTS = ("retry", "cache", "loader", "schema")
WHERE = ("xdist", "the session store", "pagination cursor", "health check", "webhook handler")
FACT = "the scheduler service listens on port 4760."


def _week(*carriers: str) -> list[tuple[str, str]]:
    out = []
    for day in range(5):
        source = f"daily/{(MONDAY + timedelta(days=day)).isoformat()}.md"
        out += [(source, f"Triaged {3 + day + k} new tickets in the {QUEUES[(day + k) % 5]} queue.") for k in range(2)]
        out += [
            (
                source,
                f"Reviewed PR #{100 * day + k} for the {SERVICES[(day + k) % 5]} service: "
                f"{SIZES[(day + k) % 3]} changes to the {PARTS[(day + k) % 4]}.",
            )
            for k in range(3)
        ]
        out += [
            (source, f"Error: `TimeoutError` in app/{PARTS[(day + k) % 4]}.py, only under {WHERE[(day + k) % 5]}.")
            for k in range(2)
        ]
        out += [
            (source, f"Error: `TypeError: bad operand` in app/{PARTS[k]}.py, a None from the {WHERE[day]} path.")
            for k in range(2)
        ]
    return out + [("daily/2026-05-06.md", carrier) for carrier in carriers]


def test_a_statement_past_where_the_moulds_lines_end_is_read_apart() -> None:
    carrier = f"Triaged 8 new tickets in the infra queue, and while I remember, {FACT}"
    where = apart(_week(carrier))
    at = where[-1]
    assert at is not None and at != SENTENCES
    assert apart_parts(carrier, at) == ["Triaged 8 new tickets in the infra queue, and while I remember", FACT]


def test_a_statement_past_the_moulds_slot_is_read_apart() -> None:
    carrier = f"Reviewed PR #7 for the search service: small changes to the retry, and while I remember, {FACT}"
    at = apart(_week(carrier))[-1]
    assert at is not None and at != SENTENCES
    assert apart_parts(carrier, at)[1] == FACT


def test_the_moulds_own_lines_stay_whole() -> None:
    """Its slot said where the mould's lines go on, and a joint inside a code span, are the
    mould's: "a None from the health check path" after "Error: `TypeError: bad operand` in
    app/x.py"."""
    where = apart(_week())
    assert all(at is None for at in where)
    carrier = "Reviewed PR #8 for the ledger service: risky changes to the loader, and to the cache."
    assert apart(_week(carrier))[-1] is None
