"""The lift's reading of a hit: a name counts where it stands as words of its own."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.kg.boost import BoostPlan
from sidecar.retrieval.lift import Candidate

PIECES = ["ledger", "ledger service", "caroline", "c++", "node.js", "_", "x", "é", "1", " ", "-", ".", "\n"]


def regex_named(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.sampled_from(PIECES[:6]))
def test_a_name_is_mentioned_exactly_where_it_stands_alone(pieces: list[str], name: str) -> None:
    text = "".join(pieces)
    plan = BoostPlan(["x"], names=[name])
    _, why = plan.lift(Candidate("a.md", "", 1, 1, text, 1.0))
    assert (why["mentions"] == [name]) == regex_named(name, f"  {text} ".casefold())


def test_mentions_are_found_in_the_heading_and_the_whole_text() -> None:
    plan = BoostPlan(["ledger service"], names=["caroline", "ledger", "ledger service"])
    text = "x " * 400 + "Asked for by the Ledger Service, not the ledgers."
    _, why = plan.lift(Candidate("a.md", "Caroline's notes", 1, 1, text, 1.0))
    assert why["mentions"] == ["caroline", "ledger", "ledger service"]
    _, none = plan.lift(Candidate("a.md", "Carolines", 1, 1, "the ledgers and ledger_service", 1.0))
    assert none["mentions"] == [] and none["factor"] == 1.0
