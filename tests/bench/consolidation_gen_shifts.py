"""A water treatment works' shift log over 120 days: the ``shifts`` history (DEV: written to tune the
change search on, its phrasing chosen by someone who did not design the change rules for it).

Each day is two shifts' bullets: plant rounds, sampling, deliveries and call-outs, and a pasted
block of the day's readings (``turbidity: 0.21 NTU``, ``reservoir level: 81%``) whose values change
every day: readings, not facts. Facts are said in the operators' own terse words. Most of its
changes name no change word and no old value, and many sit in a line about something else: a
tanker's driver who came for the sludge, a contractor's row in a pasted maintenance table, a
version in a pasted ``key: value`` block after a patch window, a lab renamed by a takeover, a duty
handed over when someone moves site, a reversal that goes back to the first value, a kit swap told
as the work of fitting it. The queries name each subject the way its old lines did.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from tests.bench.consolidation_gen import DAYS, INJECTION, OBEY, Changed, History, Planted, insert

__all__ = ["make_shifts_history"]

_OPS = str.split("Anwen Bartek Cerys Dougie Effie Gethin Hollis Ifor Jolene Kasia Lowri Mostyn")
_FILTERS = str.split("F1 F2 F3 F4 F5 F6")
_ROUTINE = [
    "Rounds done, {filt} head loss {k} cm, nothing odd",
    "Took {k} grab samples at the inlet for the lab bag",
    "{op} swept the chemical bund, {k} litres of rainwater pumped out",
    "Backwashed {filt}, ran {k} minutes",
    "Alarm {n} on the dosing skid, reset, cleared by {op}",
    "Greased {k} valve spindles on the {filt} gallery",
    "{op} in for the handover at {hh}:{mm}",
    "Checked the {k} sample taps on the ring main, all flowing",
    "Logged {k} customer calls about taste, passed to the lab",
    "Screen at the intake raked, {k} bags of leaves",
    "Job card {n} closed: leaking flange on {filt}",
    "Topped up the reagent for the colour meter, {k} ml left",
    "Walked the clear-water tank roof, {k} vents checked",
    "Visitor from the council at {hh}:{mm}, signed in",
]
_READINGS = [
    ("turbidity", "{a}.{b}{c} NTU"),
    ("chlorine residual", "0.{b}{c} mg/l"),
    ("reservoir level", "{k}%"),
    ("raw water pH", "7.{b}"),
    ("flow to supply", "{n} m3/h"),
    ("temp", "{a}.{b} C"),
]
_SITES = str.split("Pentre Gwynfa Tregaron Llanfair Rhosydd Caerwen Bryncoch Maesteg")

#: (fact, query, answer), each said on 4-7 days in its own words, now and then inside another line.
_RECURRING = [
    ("The alum tank holds 30 tonnes", "alum tank capacity", "30 tonnes"),
    ("Gate code for the intake compound is 4417", "intake compound gate code", "4417"),
    ("Spare UV lamps are kept in store room 2B", "where are the spare UV lamps", "store room 2B"),
    ("The works discharge consent number is DC-2231", "discharge consent number", "DC-2231"),
    ("Filter media top-ups come from Silica Direct", "who supplies filter media", "Silica Direct"),
    ("The ring main is split at valve V-118", "where is the ring main split", "V-118"),
    ("Hypochlorite is dosed at 2.5 mg/l before contact", "hypochlorite dose rate", "2.5 mg/l"),
    ("The duty manager's mobile is 07700 900 341", "duty manager mobile number", "07700 900 341"),
    ("Sample bags must be in the fridge by 15:00", "sample bag fridge deadline", "15:00"),
    ("The telemetry outstation at Pentre is RTU-07", "which RTU is at Pentre", "RTU-07"),
    ("The sludge lagoon is emptied when it reaches 1.8 m", "sludge lagoon emptying level", "1.8 m"),
    ("Confined space entry needs the gas monitor GM-4", "gas monitor for confined space entry", "GM-4"),
    ("Bryncoch service reservoir holds 4.5 Ml", "Bryncoch reservoir capacity", "4.5 Ml"),
    ("The site first aider on days is Kasia", "who is the day first aider", "Kasia"),
    ("Lime silo readings are taken from panel P3", "where are lime silo readings taken", "panel P3"),
]
_WRAPS = [
    "{s}",
    "{s}",
    "Reminder for new starters: {s}",
    "{op} asked again - {s}",
    "Handover note: {s}",
    "{s} (still the case)",
]
#: (rule, words the block must carry), each said on 4-6 days.
_PREFERENCES = [
    ("Never open the chlorine store alone", "chlorine store alone"),
    ("Always radio the control room before entering a filter gallery", "radio the control room"),
    ("I want every alarm reset written in the log with who reset it", "who reset it"),
    ("Please keep handover notes to the facts, no opinions", "no opinions"),
    ("Wear a life jacket on the lagoon walkway at all times", "life jacket"),
    ("Don't leave a sample tap running unattended", "sample tap running"),
    ("We don't skip the Friday chlorine calibration, whatever the workload", "Friday chlorine calibration"),
    ("Make sure the visitor book is signed out before locking up", "visitor book"),
]
_STATIC = [
    ("Filter {filt} was last re-media'd in {year}", "when was filter {filt} re-media'd", "{year}"),
    ("The {site} booster pump is a {make} unit, asset {asset}", "{site} booster pump asset number", "{asset}"),
    ("Valve {valve} isolates the {site} main", "which valve isolates the {site} main", "{valve}"),
    ("The {site} kiosk key is on hook {hook} in the control room", "{site} kiosk key hook", "hook {hook}"),
]
_MAKES = str.split("Grundfos Flygt KSB Xylem Wilo")


def _table(contractor: str, when: str) -> str:
    return (
        "RAW|\n| Asset | Contractor | Next visit |\n|---|---|---|\n"
        f"| Inlet screens | Aqua Screens Ltd | {when} |\n| Backwash pumps | {contractor} | {when} |\n"
        "| Blowers | Airtech | on call |\n\n"
    )


def _block(title: str, pairs: list[tuple[str, str]]) -> str:
    return "RAW|\n" + f"{title}\n" + "".join(f"{k}: {v}\n" for k, v in pairs) + "\n"


#: (old line said 3 times early, later lines said once each, query, old value, new value).
_CHANGES: list[tuple[str, list[str], str, str, str]] = [
    (
        "Sludge is taken away by Harrow Tankers",
        [
            "Vale Haulage tanker came at 14:10 for the sludge, driver didn't know the gate code",
            "Vale Haulage in for a load of sludge, lagoon down to 0.9 m",
        ],
        "who takes the sludge away",
        "Harrow Tankers",
        "Vale Haulage",
    ),
    (
        "The backwash pumps are serviced by Kelvin Pumps",
        [
            _table("Duffy Mechanical", "12 May"),
            "Duffy Mechanical on site for the backwash pumps, bearing noise on pump 2",
        ],
        "who services the backwash pumps",
        "Kelvin Pumps",
        "Duffy Mechanical",
    ),
    (
        "The SCADA historian runs version 4.2",
        [
            _block(
                "Versions after Tuesday's patch window:",
                [("SCADA historian", "5.1"), ("HMI client", "11.3"), ("alarm dialler", "2.8")],
            ),
            "Historian on 5.1 is slower to load trends, raised with IT",
        ],
        "SCADA historian version",
        "version 4.2",
        "5.1",
    ),
    (
        "Lab samples go to Northfield Analytical",
        ["Courier bag for the lab says Corra Labs now that Northfield was bought, same driver"],
        "which lab do samples go to",
        "Northfield Analytical",
        "Corra Labs",
    ),
    (
        "Ines signs off the weekly permit-to-work log",
        [
            "Ines has gone to the Caerwen site; Tomasz signs the permits from this week",
            "Tomasz countersigned the permit book, queried two hot-work entries",
        ],
        "who signs off the permit-to-work log",
        "Ines",
        "Tomasz",
    ),
    (
        "The chlorine analysers are Hach CL17 units",
        ["Fitted the last Endress CCS51 analyser on the filter outlet, commissioning tomorrow"],
        "chlorine analyser model",
        "CL17",
        "CCS51",
    ),
    (
        "The out-of-hours electrician is Brightspark Electrical",
        [
            _block(
                "Call-out sheet, reprinted:",
                [("Electrician OOH", "Watts & Sons 01632 960 447"), ("Plumber", "Tap Masters 01632 960 512")],
            )
        ],
        "out-of-hours electrician",
        "Brightspark",
        "Watts & Sons",
    ),
    (
        "Filter F3 backwashes every 36 hours",
        ["F3 on a 48 h cycle after the media change, watching head loss"],
        "how often does filter F3 backwash",
        "36 hours",
        "48 h",
    ),
    (
        "The standby generator is tested on Fridays",
        ["Wednesday is generator test day now, ran it 40 minutes on load"],
        "when is the standby generator tested",
        "Fridays",
        "Wednesday",
    ),
    (
        "Call-outs ring through the Dialog alarm dialler",
        ["Sentinel Connect rang me twice overnight for the same low-level alarm, needs a deadband"],
        "what rings the call-outs",
        "Dialog",
        "Sentinel Connect",
    ),
    (
        "Coagulant dosing setpoints are set by Raj",
        ["Raj off to the network team, Priscilla owns the dosing setpoints"],
        "who sets the coagulant dosing setpoints",
        "Raj",
        "Priscilla",
    ),
    (
        "Chemical deliveries are on Thursdays while the bridge is shut",
        ["Bridge open again, chemical deliveries back on Tuesdays like before"],
        "which day are chemical deliveries",
        "Thursdays",
        "Tuesdays",
    ),
]
#: the first value of the reversal, said early, before the trial value's lines
_REVERSAL_FIRST = "Chemical deliveries come on Tuesdays"


def make_shifts_history(seed: int, end: date) -> History:
    """The ``shifts`` history of ``DAYS`` days ending the day before ``end``."""
    rng = random.Random(seed)
    start = end - timedelta(days=DAYS)
    notes: list[list[str]] = [[_routine(rng) for _ in range(rng.randint(56, 66))] for _ in range(DAYS)]
    for day in notes:  # the day's readings, pasted
        insert(rng, day, _block(f"Readings {rng.randint(5, 7):02d}:00", [(k, _filled(rng, v)) for k, v in _READINGS]))
    history = History(start, notes)
    used: set[str] = set()
    for i in range(40):
        text, query, answer = _STATIC[i % len(_STATIC)]
        values = {
            "filt": f"{_FILTERS[i % len(_FILTERS)]}{'abcdefg'[i // 6]}",
            "year": str(2009 + i % 14),
            "site": _SITES[i % len(_SITES)] + ("" if i < len(_SITES) else f" {i // len(_SITES) + 1}"),
            "make": _MAKES[i % len(_MAKES)],
            "asset": f"AS-{3000 + i * 37}",
            "valve": f"V-{500 + i * 11}",
            "hook": str(10 + i),
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
            insert(rng, notes[day], rng.choice(_WRAPS).format(s=text, op=rng.choice(_OPS)))
    for old, news, query, a, b in _CHANGES:
        reversal = old.endswith("while the bridge is shut")
        if reversal:
            for day in rng.sample(range(30), 3):
                insert(rng, notes[day], _REVERSAL_FIRST)
            early = rng.sample(range(35, 55), 3)
        else:
            early = rng.sample(range(50), 3)
        for day in early:
            insert(rng, notes[day], old)
        for new, day in zip(news, sorted(rng.sample(range(62, DAYS - 5), len(news))), strict=True):
            insert(rng, notes[day], new)
        history.changed.append(Changed(old, _said(news[0], b), query, a, b))
    for rule, answer in _PREFERENCES:
        history.preferences.append(Planted(rule, "", answer))
        for day in rng.sample(range(DAYS - 25), rng.randint(4, 6)):
            insert(rng, notes[day], rule)
    for day in rng.sample(range(10, 60), 3):
        insert(rng, notes[day], INJECTION)
    insert(rng, notes[rng.randrange(10, 60)], OBEY)
    return history


def _said(line: str, value: str) -> str:
    """The planted new line: a pasted block's or a table's line that holds the new value."""
    if not line.startswith("RAW|"):
        return line
    return next(ln for ln in line.splitlines() if value in ln)


def _filled(rng: random.Random, template: str) -> str:
    return template.format(
        a=rng.randint(0, 1), b=rng.randint(0, 9), c=rng.randint(0, 9), k=rng.randint(55, 97), n=rng.randint(300, 900)
    )


def _routine(rng: random.Random) -> str:
    return rng.choice(_ROUTINE).format(
        filt=rng.choice(_FILTERS),
        k=rng.randint(2, 40),
        n=rng.randint(1000, 9999),
        op=rng.choice(_OPS),
        hh=f"{rng.randint(6, 22):02d}",
        mm=f"{rng.choice((0, 15, 30, 45)):02d}",
    )
