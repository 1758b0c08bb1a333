"""The evergreen file's cap lets in the facts before a log's fills. A log line written each day
with another colleague and topic recurs word for word in dozens of combinations; promoted in the
order they were first said, such fills took the whole cap and the facts said later were left
out. When the cap binds, the candidates whose mould the fewest others share go in first, and the
file still lists what it holds in the order it was said."""

from __future__ import annotations

from sidecar.consolidate.promote import Candidate, update_evergreen

DAYS = ("daily/2026-04-01.md", "daily/2026-04-09.md", "daily/2026-04-17.md")
FILLS = [
    f"pairing with {who} on {what} for an hour."
    for who in ("wren", "obi", "lark")
    for what in ("the queue rework", "alert noise", "the tls rollout")
]
FACTS = ["The nightly vacuum job fires at 02:10 UTC on db-9.", "Ottoline Marsh signs off on every firewall change."]


def _candidates() -> list[Candidate]:
    return [Candidate(text, DAYS) for text in [*FILLS, *FACTS]]


def _room_for(count: int) -> int:
    """A cap that holds the file with ``count`` of the candidates in it."""
    full = update_evergreen("", _candidates(), 1 << 20).text
    assert full is not None
    return len(full.encode("utf-8")) * count // len(FILLS + FACTS)


def test_when_the_cap_binds_the_facts_go_in_before_the_fills_of_a_mould() -> None:
    update = update_evergreen("", _candidates(), _room_for(5))
    added = [c.text for c in update.added]
    assert set(FACTS) <= set(added)
    assert 0 < len(added) < len(FILLS) + len(FACTS)
    assert {c.text for c in update.over_cap} == set(FILLS) - set(added)
    # the file lists them in the order they were first said
    assert update.text is not None
    written = [ln.split(" <!--")[0].removeprefix("- ") for ln in update.text.splitlines() if ln.startswith("- ")]
    assert written == [c.text for c in _candidates() if c.text in added]


def test_under_the_cap_every_candidate_goes_in_as_first_said() -> None:
    update = update_evergreen("", _candidates(), 1 << 20)
    assert [c.text for c in update.added] == [*FILLS, *FACTS]
    assert update.over_cap == ()
