"""A line opening with a past participle that describes the noun after it, which a verb in the
present tense then says something of, states a fact ("Confined space entry needs the gas monitor"):
it reports no work done, so it may recur and be promoted. A line opening with a past tense of work
done stays one ("Deployed the fix to staging", "Checked pump 3 is running")."""

from __future__ import annotations

import pytest

from sidecar.consolidate.text import reports_work


@pytest.mark.parametrize(
    "line",
    [
        "Confined space entry needs the gas monitor GM-4.",
        "Signed forms go to the front office.",
        "Closed tickets are archived after 30 days.",
        "- Reserved parking is behind the depot.",
    ],
)
def test_a_described_noun_states_a_fact(line: str) -> None:
    assert not reports_work(line)


@pytest.mark.parametrize(
    "line",
    [
        "Deployed the fix to staging.",
        "Moved the cut to Thursday.",
        "Rebooted nas-2, it is fine now.",
        "Checked pump 3 is running.",
        "Confirmed Dana has the keys.",
        "Paired with Tom on the gate.",
    ],
)
def test_work_done_is_still_work_done(line: str) -> None:
    assert reports_work(line)
