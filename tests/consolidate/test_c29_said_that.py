"""A diarist says a standing fact inside a sentence about the day, after "that" with no comma
before it ("While the kettle boiled I reminded myself that the boat shed key hangs on hook 7,
which I had half forgotten"). The statement after "that" recurs across days, whatever the sentence
around it, so it is promoted with the days it was said on; the sentences themselves never recur."""

from __future__ import annotations

from sidecar.consolidate.cores import cores
from sidecar.consolidate.periods import Line
from sidecar.consolidate.promote import recurring

FACT = "the boat shed key hangs on hook 7 behind the Ashby door"
SAID = [
    ("daily/2026-05-04.md", f"While the kettle boiled I reminded myself that {FACT}, which I had half forgotten."),
    ("daily/2026-05-13.md", f"I told the new volunteer on the radio that {FACT}, so nobody would be stuck outside."),
    (
        "daily/2026-05-21.md",
        f"Somebody asked again over lunch and I said that {FACT}; it seems nobody reads the board.",
    ),
    ("daily/2026-05-29.md", f"Mentioned to the skipper, as I do most weeks, that {FACT}."),
]
OTHER = [
    ("daily/2026-05-05.md", "Rowed the gig to the buoy and back in twenty minutes."),
    ("daily/2026-05-14.md", "Two crews out before breakfast, wind dropping by noon."),
]


def _lines() -> list[Line]:
    return [Line(text, source, "Log") for source, text in [*SAID, *OTHER]]


def test_a_statement_said_after_that_inside_a_sentence_is_its_core() -> None:
    read = cores(_lines())
    assert [[c.text for c in cut] for cut in read[: len(SAID)]] == [[FACT]] * len(SAID)
    # lines that say nothing after "that" are their own cores
    assert [[c.text for c in cut] for cut in read[len(SAID) :]] == [[text] for _, text in OTHER]


def test_the_statement_said_after_that_recurs_with_its_days() -> None:
    found = recurring(_lines())
    assert [(c.text, c.sources) for c in found] == [(FACT, tuple(source for source, _ in SAID))]


def test_a_later_line_naming_another_name_that_shares_a_word_changes_nothing() -> None:
    fact = "the tap water comes from the spring above Garth Farm"
    said = [(source, text.replace(FACT, fact)) for source, text in SAID]
    # a line about another thing, from a farm of another name, switched "now": no change of the spring
    later = Line("Eggs come from Low Nest Farm now, not the market.", "daily/2026-06-10.md", "Log")
    lines = [Line(text, source, "Log") for source, text in said]
    assert [c.text for c in recurring([*lines, later])] == [fact]
    # the same name, whole, with another value is a change ("Garth Farm" to "Ridge Farm")
    moved = Line("Tap water now comes from the spring at Ridge Farm, not Garth Farm.", "daily/2026-06-10.md", "Log")
    assert [c.text for c in recurring([*lines, moved])] == []
