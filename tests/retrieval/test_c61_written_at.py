"""A line's own time is when it was written, not a value it states: a daily note's bullets open
with the clock time they were written at ("- 16:05 closed the glasshouse vents"), and a line written
at another time of day restates nothing by that alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()


def _order(query: str, hits: list[tuple[str, str]]) -> list[str]:
    """The paths of ``hits`` (path, text; best first) as ``restated_first`` orders them."""
    ranked = restated_first(hits, lambda hit: (hit[0], "Log", hit[1]), query_tokens(query.split()))
    return [path for path, _ in ranked]


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def test_the_time_a_line_opens_with_restates_nothing() -> None:
    """In a note whose lines open with the time each was written, or where a mark sets the time
    apart, that time is no value: another time of day restates nothing."""
    morning = (
        _day(60),
        "- 08:55 checked the seed trays\n- 09:40 Glasshouse vents are serviced by Ferncroft Engineering.",
    )
    evening = (_day(10), "- 12:30 lunch with Ines\n- 16:05 closed the glasshouse vents before the storm.")
    assert _order("glasshouse vents", [morning, evening]) == [morning[0], evening[0]]
    # a time set apart by brackets, bold or a dash, on a line of its own; a date before it too
    fact = (_day(60), "- [09:40] Glasshouse vents are serviced by Ferncroft Engineering.")
    for stamp in ("[16:05]", "**16:05**", "16:05 -", "16:05:", "[x] [16:05]", "2026-01-05 16:05 -", "[4:05 pm]"):
        later = (_day(10), f"- {stamp} closed the glasshouse vents before the storm.")
        assert _order("glasshouse vents", [fact, later]) == [fact[0], later[0]], stamp


def test_a_time_a_lone_line_opens_with_may_be_its_value() -> None:
    """ "9:15 on Saturdays is the piano slot" states its time first: alone in its note, with no
    mark setting it apart, it still gives the lesson another time."""
    old = (_day(60), "- The piano lesson is at 10:30 on Saturdays.")
    new = (_day(10), "- 9:15 on Saturdays is the piano lesson slot from next month.")
    assert _order("piano lesson", [old, new]) == [new[0], old[0]]


def test_a_time_the_line_states_still_restates() -> None:
    """A time past the line's own is a value: given anew, it restates the older line."""
    old = (_day(60), "- 09:40 The glasshouse vents open at 07:15.")
    new = (_day(10), "- 14:20 The glasshouse vents open at 08:00 from today.")
    assert _order("glasshouse vents open", [old, new]) == [new[0], old[0]]
    plain = (_day(10), "- The glasshouse vents open at 08:00 from today.")
    assert _order("glasshouse vents open", [old, plain]) == [plain[0], old[0]]


def test_the_first_word_after_a_lines_time_opens_it() -> None:
    """ "- 16:05 - Closed the vents" opens its sentence with "Closed": no name the older line lacks."""
    fact = (_day(60), "- 09:40 - Glasshouse vents are serviced by Ferncroft.")
    later = (_day(10), "- 16:05 - Closed the glasshouse vents, Ferncroft came by.")
    assert _order("glasshouse vents", [fact, later]) == [fact[0], later[0]]


def test_lines_of_a_log_said_with_other_values_each_day_restate_none_of_each_other() -> None:
    """ "Bisque load from the east kiln: 42 pots, 1.5% cracked" on many days, each with its day's
    values, is a log: no line of it is a newer value of another, and none moves over the fact
    between them."""
    first = (_day(50), "- Bisque load from the east kiln: 42 pots, 1.5% cracked, Ines unloading.")
    fact = (_day(45), "- The east kiln elements are replaced by Hallam Kilnworks.")
    second = (_day(20), "- Bisque load from the east kiln: 38 pots, 2.5% cracked, Tobias unloading.")
    third = (_day(5), "- Bisque load from the east kiln: 40 pots, 0.5% cracked, Ines unloading.")
    hits = [first, fact, second, third]
    assert _order("east kiln", hits) == [path for path, _ in hits]
    # one value before and one after is a change: the newer line still moves above the older
    before = (_day(50), "- Cracked pots from the east kiln: 1.5% a load.")
    again = (_day(30), "- Cracked pots from the east kiln: 1.5% a load.")
    after = (_day(5), "- Cracked pots from the east kiln: 0.5% a load.")
    assert _order("east kiln", [before, fact, again, after]) == [after[0], before[0], fact[0], again[0]]


def test_a_number_restates_only_a_line_about_the_same_thing() -> None:
    """A newer line with a weekday or a number of the same form restates an older line only when
    the two say two words of the older line's in common (values aside): one shared query word is
    no shared subject."""
    rule = (_day(60), "- Never glaze pots on a Friday, the kiln cools too slowly.")
    review = (_day(10), "- Glaze review is Thursdays at 15:00 with Oona.")
    assert _order("glaze", [rule, review]) == [rule[0], review[0]]
    moved = (_day(10), "- Glaze pots on Thursdays from now on, the kiln cools too slowly.")
    assert _order("glaze", [rule, moved]) == [moved[0], rule[0]]
    # an older line of one word besides its value needs that word only
    rent = (_day(60), "- Rent: £950.")
    raised = (_day(10), "- Rent went up to £990 with the new lease.")
    assert _order("rent", [rent, raised]) == [raised[0], rent[0]]


def test_a_word_said_as_its_plural_is_the_same_word() -> None:
    old = (_day(60), "- Opening at 8:00 on weekdays over the winter, nobody comes in before.")
    new = (_day(10), "- Weekday opening is 7:30 again now the mornings are light.")
    assert _order("opening weekdays", [old, new]) == [new[0], old[0]]
