"""A change read by meaning when it is said twice: a second later line naming the value the
nearest one gives anew says that change again, so it is no sibling fact whose nearness would
leave the reading in doubt (``changes.changed_by_meaning``); a line in the same frame with a
value of its own still is."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import WORDS_COSINE, changed_by_meaning, meaning_texts, word_vectors
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 3, 2)
OLD = "Survey maps are printed by Calloway Press on heavy stock."
NEAREST = "We've gone with Marlow Bindery for the survey maps, heavy stock as before."
AGAIN = "Marlow Bindery binds our survey maps in heavy stock, trimmed square."
#: the workshop's other standing facts, each said in three weeks
FACTS = [
    "The kiln is serviced by Pembury Thermal every spring.",
    "Glaze powders come from Tregarn Supplies in sealed tubs.",
    "The studio alarm code is held by Ottoline Vance.",
]


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _lines(*later: tuple[str, int]) -> list[Said]:
    lines = [_said(OLD, day, 0) for day in (0, 8, 15)]
    lines += [_said(fact, day, 1 + n) for n, fact in enumerate(FACTS) for day in (1, 9, 17, 40)]
    lines += [_said(text, day, 10 + n) for n, (text, day) in enumerate(later)]
    return lines + [_said(f"Fired {n * 7 + 20} pots in the big kiln.", n, 30) for n in range(70)]


def _read(lines: list[Said]) -> dict[str, str]:
    found = changed_by_meaning(lines, word_vectors(meaning_texts(lines)), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def test_a_change_said_again_in_other_words_is_still_read() -> None:
    assert _read(_lines((NEAREST, 60))) == {"survey maps are printed by calloway press on heavy stock": f"- {NEAREST}"}
    found = _read(_lines((NEAREST, 60), (AGAIN, 75)))
    assert found.keys() == {"survey maps are printed by calloway press on heavy stock"}
    assert set(found.values()) <= {f"- {NEAREST}", f"- {AGAIN}"}


def test_a_sibling_with_a_value_of_its_own_still_leaves_it_in_doubt() -> None:
    sibling = "We've gone with Hobart Print for the survey charts, heavy stock as before."
    assert _read(_lines((NEAREST, 60), (sibling, 75))) == {}
