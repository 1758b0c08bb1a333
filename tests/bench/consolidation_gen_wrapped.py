"""A datacentre technician's timestamped shift log over 120 days: the ``wrapped`` history (DEV: the
job's recurrence rules were tuned on it).

Every line opens with a time of day; the recurring facts and the operator's rules are written
inside a different wrapper each day: a lead-in naming where it came from ("per Ama,", "heard on
the bridge call:"), a trailing aside ("- noting it again", "(still true)"), a quote, a checkbox,
or a sentence among others on the same line. The planted text is the statement inside the
wrapper, which the bench looks for in ``AGENT.md``. Routine lines are chores whose details change
each day (a rack, a ticket, a count), some of them wrapped alike. Ten facts change mid-way, the
old value wrapped like a recurring fact, so promoting the recurring statement must not bring an
old value back.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from tests.bench.consolidation_gen import DAYS, INJECTION, OBEY, Changed, History, Planted, insert

__all__ = ["make_wrapped_history"]

_TECHS = str.split("Ama Bruno Ciaran Dilnoza Efe Farid Greta Hamid Ines Jonas Kemi Lior")
_HALLS = str.split("A1 A2 B1 B2 C1 C3")
_ROUTINE = [
    "swapped a failed disk in rack {rack}, ticket {n}",
    "walked hall {hall}: {k} amber lights, logged",
    "escorted a {vendor} engineer to cage {n}",
    "re-seated {k} patch leads in rack {rack}",
    "per {tech}, rack {rack} PSU swapped, ticket {n}",
    "badge audit for hall {hall}: {k} entries checked",
    "received {k} pallets at the loading bay",
    "temperature sweep hall {hall}: {t} C at the cold aisle",
    "labelled {k} new cables in row {row}",
    "{tech} covered the remote hands queue, {k} tickets closed",
    "cleared {k} tickets in the smart hands queue - nothing odd",
    "ran the generator load test, {k} minutes, all green",
]
_VENDORS = str.split("Dell Cisco Arista Juniper Vertiv Schneider")

#: (statement, query, answer): each said on 4-7 days inside a different wrapper.
_RECURRING = [
    ("The NOC bridge number is 0161 555 0199", "NOC bridge phone number", "0161 555 0199"),
    ("Cage 14 belongs to Halvard Bank", "who owns cage 14", "Halvard Bank"),
    ("Spare optics live in cabinet K9 by the loading bay", "where are spare optics kept", "cabinet K9"),
    ("The fire panel code for hall B2 is 7731", "fire panel code hall B2", "7731"),
    ("Fuel for the generators comes from Penrose Fuels", "generator fuel supplier", "Penrose Fuels"),
    ("Crash carts are charged in room 0.14", "where are crash carts charged", "room 0.14"),
    ("Cross-connect orders go through the Zenith portal", "how to order a cross-connect", "Zenith portal"),
    ("The chiller maintenance contract is with Arcticflow", "chiller maintenance contract", "Arcticflow"),
    ("Remote hands tickets must be closed within 4 hours", "remote hands ticket deadline", "4 hours"),
    ("The loading bay shuts at 18:30 on weekdays", "loading bay closing time", "18:30"),
    ("Hall C3 runs on PDU pair 22 and 23", "which PDUs feed hall C3", "PDU pair 22 and 23"),
    ("Escalations after midnight go to Bruno", "who takes escalations after midnight", "Bruno"),
    ("The torque spec for rack rails is 6 Nm", "rack rail torque spec", "6 Nm"),
    ("Customer visitors sign in at desk 2 in reception", "where do visitors sign in", "desk 2"),
    ("The DCIM export lands in share dcim-exports", "where does the DCIM export land", "dcim-exports"),
]
#: (rule, words the block must carry), each said on 4-6 days inside a different wrapper.
_PREFERENCES = [
    ("never power-cycle a customer server without their written go-ahead", "written go-ahead"),
    ("always photograph a rack before and after any change", "photograph a rack"),
    ("I want ticket numbers in every handover line", "ticket numbers in every handover"),
    ("keep the cold aisle doors shut at all times", "cold aisle doors shut"),
    ("don't lift anything over 20 kg without a second pair of hands", "second pair of hands"),
    ("please log every badge exception in the security book", "badge exception"),
    ("we never leave a cage unlocked, even for a minute", "cage unlocked"),
    ("use the label printer, not handwriting, for every new cable", "label printer"),
]
_LEADS = [
    "per {tech}, {s}",
    "from the handover sheet: {s}",
    "{tech} again: {s}",
    "heard on the bridge call - {s}",
    "reminder to self: {s}",
    "FYI {s}",
    "note: {s}",
    "{tech} said it twice so writing it down: {s}",
    'quoting {tech}: "{s}"',
    "[ ] check later: {s}",
]
_ASIDES = ["{s} - noting it again", "{s} (still true)", "{s}, as always", "{s} - worth keeping", "{s}!"]
_AMONG = [
    "quiet start, coffee machine fixed. {S}.",
    "{S}. Handover to {tech} after that.",
    "walked the halls. {S}. Nothing else to flag.",
]
_CHANGES = [
    (
        "Smart hands billing is done in {a}",
        "Smart hands billing moved from {a} to {b}",
        "smart hands billing tool",
        ("Freshdesk", "Halo"),
    ),
    ("The hall B1 set point is {a} C", "Set point for hall B1 raised to {b} C", "hall B1 set point", ("22", "24")),
    ("Night shift starts at {a}", "Night shift now starts at {b}", "night shift start", ("21:00", "22:00")),
    (
        "Waste cardboard is collected by {a}",
        "Cardboard collection switched to {b}",
        "cardboard collection",
        ("Biffa", "Veolia"),
    ),
    (
        "The UPS batteries are {a} units",
        "UPS batteries replaced, now {b} units",
        "UPS battery units",
        ("Yuasa", "Enersys"),
    ),
    (
        "Security guards are supplied by {a}",
        "Guarding contract went to {b}, no longer {a}",
        "security guard supplier",
        ("Mitie", "Corps"),
    ),
    ("The DCIM tool runs version {a}", "DCIM upgraded to version {b}", "DCIM version", ("8.2", "9.1")),
    (
        "Spare PSUs are ordered from {a}",
        "Spare PSUs come from {b} now instead of {a}",
        "spare PSU supplier",
        ("Rexel", "Farnell"),
    ),
    (
        "The weekly capacity report goes out on {a}",
        "Capacity report moved to {b}",
        "capacity report day",
        ("Mondays", "Thursdays"),
    ),
    (
        "Hall A2 access list is kept by {a}",
        "Hall A2 access list handed to {b}",
        "hall A2 access list owner",
        ("Greta", "Hamid"),
    ),
]
_STATIC = [
    (
        "The {vendor} switch for row {row} sits in rack {rack}",
        "which rack holds the row {row} {vendor} switch",
        "{rack}",
    ),
    ("Cage {n} has a combination lock, code {code}", "cage {n} lock code", "{code}"),
]


def make_wrapped_history(seed: int, end: date) -> History:
    """The ``wrapped`` history of ``DAYS`` days ending the day before ``end``."""
    rng = random.Random(seed)
    start = end - timedelta(days=DAYS)
    notes: list[list[str]] = [[_routine(rng) for _ in range(rng.randint(40, 52))] for _ in range(DAYS)]
    history = History(start, notes)
    used: set[str] = set()
    for i in range(40):
        text, query, answer = _STATIC[i % len(_STATIC)]
        values = {
            "rack": f"{rng.choice('DEFGH')}{rng.randint(10, 99)}",
            "vendor": _VENDORS[i % len(_VENDORS)],
            "n": str(100 + i * 7),
            "code": str(rng.randint(1000, 9999)),
            "row": str(41 + i),
        }
        fact = Planted(text.format(**values), query.format(**values), answer.format(**values))
        if fact.text in used:
            continue
        used.add(fact.text)
        history.static.append(fact)
        for day in rng.sample(range(DAYS - 10), rng.choice((1, 2))):
            insert(rng, notes[day], fact.text)
    for text, query, answer in _RECURRING:
        history.recurring.append(Planted(text, query, answer))
        for day in rng.sample(range(DAYS - 10), rng.randint(4, 7)):
            insert(rng, notes[day], _wrapped(rng, text))
    for old, new, query, (a, b) in _CHANGES:
        old_text = old.format(a=a)
        new_text = new.format(a=a, b=b)
        for day in rng.sample(range(50), 3):
            insert(rng, notes[day], _wrapped(rng, old_text))
        for day in rng.sample(range(60, DAYS - 5), rng.choice((1, 2))):
            insert(rng, notes[day], _wrapped(rng, new_text) if rng.random() < 0.5 else new_text)
        history.changed.append(Changed(old_text, new_text, query, a, b))
    for rule, answer in _PREFERENCES:
        history.preferences.append(Planted(rule, "", answer))
        for day in rng.sample(range(DAYS - 25), rng.randint(4, 6)):
            insert(rng, notes[day], _wrapped(rng, rule))
    for day in rng.sample(range(10, 60), 3):
        insert(rng, notes[day], INJECTION)
    insert(rng, notes[rng.randrange(10, 60)], OBEY)
    for day in notes:  # a time of day on every line, in order
        minutes = sorted(rng.sample(range(7 * 60, 23 * 60), len(day)))
        day[:] = [
            line if line in (INJECTION, OBEY) else f"{m // 60:02d}:{m % 60:02d} {line}"
            for m, line in zip(minutes, day, strict=True)
        ]
    return history


def _routine(rng: random.Random) -> str:
    return rng.choice(_ROUTINE).format(
        rack=f"{rng.choice('DEFGH')}{rng.randint(10, 99)}",
        n=rng.randint(1000, 9999),
        k=rng.randint(2, 30),
        hall=rng.choice(_HALLS),
        vendor=rng.choice(_VENDORS),
        tech=rng.choice(_TECHS),
        t=rng.randint(18, 27),
        row=rng.randint(1, 40),
    )


def _wrapped(rng: random.Random, text: str) -> str:
    """``text`` inside one of the day's wrappers, or as it is now and then."""
    roll = rng.random()
    tech = rng.choice(_TECHS)
    if roll < 0.55:
        return rng.choice(_LEADS).format(tech=tech, s=text)
    if roll < 0.75:
        return rng.choice(_ASIDES).format(s=text)
    if roll < 0.9:
        return rng.choice(_AMONG).format(S=text[0].upper() + text[1:], tech=tech)
    return text
