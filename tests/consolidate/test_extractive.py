"""The extractive summariser on clusters of daily-note sections and journal entries: the same input
gives the same summary, the budget holds, near-duplicates are merged and listed, every line names
its sources, and every fact is kept when the budget allows it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sidecar.consolidate.extractive import Dropped, SourceItem, extract

CLUSTER = (
    SourceItem(
        "daily/2026-11-03.md#standup",
        "## Standup\n"
        "- The deploy uses port 8080.\n"
        "- Alice owns the billing service.\n"
        "\n"
        "We moved the session cache to Redis. It was slow on Mondays, e.g. during the batch import.\n",
    ),
    SourceItem(
        "daily/2026-11-04.md#standup",
        "## Standup\n"
        "- the deploy now uses port 8080\n"
        "- The staging deploy uses port 8081.\n"
        "* [x] Ship release v1.2 on Friday\n"
        "---\n"
        "```sh\nmake deploy ENV=staging\n```\n",
    ),
    SourceItem(
        "journal/412",
        "Alice owns the billing service.\nBob reviews every schema migration before it ships.\n",
    ),
)

FACTS = (
    "deploy now uses port 8080",
    "Alice owns the billing service",
    "We moved the session cache to Redis.",
    "It was slow on Mondays, e.g. during the batch import.",
    "The staging deploy uses port 8081.",
    "* [x] Ship release v1.2 on Friday",
    "make deploy ENV=staging",
    "Bob reviews every schema migration before it ships.",
)


def test_every_fact_is_kept_once_in_source_order_when_the_budget_allows() -> None:
    summary = extract(CLUSTER, 10_000)
    for fact in FACTS:
        assert summary.text.count(fact) == 1, fact
    positions = [summary.text.index(fact) for fact in FACTS]
    assert positions == sorted(positions)
    assert "## Standup" not in summary.text and "---" not in summary.text
    assert "- Alice owns the billing service." in summary.text.splitlines()  # the bullet marker is kept
    assert "```sh\nmake deploy ENV=staging\n```" in summary.text  # a fenced block stays whole


def test_near_duplicates_are_merged_and_listed_with_every_source_credited() -> None:
    summary = extract(CLUSTER, 10_000)
    lines = {entry.text: entry.sources for entry in summary.provenance}
    # The fuller wording is kept, shown where the fact first appeared, crediting both notes.
    assert lines["- the deploy now uses port 8080"] == ("daily/2026-11-03.md#standup", "daily/2026-11-04.md#standup")
    assert summary.text.index("port 8080") < summary.text.index("Alice")
    # A bullet and a plain line saying the same thing are duplicates: the marker is not compared.
    assert lines["- Alice owns the billing service."] == ("daily/2026-11-03.md#standup", "journal/412")
    assert set(summary.dropped) == {
        Dropped(
            "- The deploy uses port 8080.",
            ("daily/2026-11-03.md#standup",),
            "duplicate",
            "- the deploy now uses port 8080",
        ),
        Dropped("Alice owns the billing service.", ("journal/412",), "duplicate", "- Alice owns the billing service."),
    }
    # Sentences that differ in a number state different facts: both stay.
    assert "port 8081" in summary.text


def test_provenance_names_the_items_of_every_line() -> None:
    summary = extract(CLUSTER, 10_000)
    assert "\n".join(entry.text for entry in summary.provenance) == summary.text
    day1, day2, journal = (item.id for item in CLUSTER)
    assert [entry.sources for entry in summary.provenance] == [
        (day1, day2),  # the deploy port, said on both days
        (day1, journal),  # Alice, in a note and in the journal
        (day1,),
        (day1,),
        (day2,),
        (day2,),
        (day2,),
        (journal,),
    ]


@pytest.mark.parametrize("budget", [0, 20, 45, 80, 120, 200, 400])
def test_the_budget_holds_and_what_did_not_fit_is_listed(budget: int) -> None:
    summary = extract(CLUSTER, budget)
    assert len(summary.text) <= budget
    kept = {entry.text for entry in summary.provenance}
    over = {entry.text for entry in summary.dropped if entry.reason == "budget"}
    assert not kept & over
    full = extract(CLUSTER, 10_000)
    assert kept | over == {entry.text for entry in full.provenance}  # every unit is either shown or listed
    for entry in summary.dropped:
        if entry.reason == "budget":  # nothing left out would still have fitted
            assert len(summary.text) + len(entry.text) + 1 > budget


def test_a_tight_budget_prefers_lines_bringing_words_not_yet_covered() -> None:
    items = [
        SourceItem("a", "- Redis holds the session cache.\n- Redis holds the session cache for the API.\n"),
        SourceItem("b", "- Postgres stores the invoices.\n- Redis cache sessions expire after one hour."),
    ]
    summary = extract(items, 80)
    # The first two bullets are one fact; its fuller wording leads (its words are the most frequent),
    # then new words win over another line about the Redis cache.
    assert summary.text == "- Redis holds the session cache for the API.\n- Postgres stores the invoices."
    assert [entry.reason for entry in summary.dropped] == ["duplicate", "budget"]


def test_the_same_cluster_gives_the_same_summary_in_any_process() -> None:
    first = extract(CLUSTER, 150)
    assert extract(CLUSTER, 150) == first
    code = f"from sidecar.consolidate.extractive import SourceItem, extract\nprint(repr(extract({CLUSTER!r}, 150)))"
    # Word sets iterate in an order that depends on the hash seed: other seeds must agree.
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == repr(first)


def test_paragraphs_split_into_sentences_but_not_at_abbreviations_or_lower_case() -> None:
    items = [SourceItem("x", "Use v1.2 i.e. the pinned one. It works.\nAsk Dr. Smith first! then wait. Done?")]
    summary = extract(items, 1_000)
    assert summary.text.split("\n") == [
        "Use v1.2 i.e. the pinned one.",
        "It works.",
        "Ask Dr. Smith first! then wait.",
        "Done?",
    ]


def test_a_bullet_keeps_its_continuation_lines() -> None:
    items = [
        SourceItem("x", "- The backup runs nightly\n  and keeps thirty days.\n1. Rotate the keys. Then restart.\n")
    ]
    summary = extract(items, 1_000)
    assert summary.text.split("\n") == [
        "- The backup runs nightly and keeps thirty days.",
        "1. Rotate the keys. Then restart.",
    ]


def test_empty_and_structure_only_items_give_an_empty_summary() -> None:
    summary = extract([SourceItem("a", ""), SourceItem("b", "# Heading\n\n---\n")], 100)
    assert (summary.text, summary.provenance, summary.dropped) == ("", (), ())
    with pytest.raises(ValueError, match="budget"):
        extract(CLUSTER, -1)
