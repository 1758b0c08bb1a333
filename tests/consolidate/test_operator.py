"""Operator-model preferences: what counts as one in real notes, and how they merge into the file."""

from __future__ import annotations

from sidecar.consolidate.operator import MergeReport, Preference, extract_preferences, merge_operator_model

NOTE = """\
# 2026-05-14

## Standup
- 09:12 Ana opened the session about the release branch.
- 09:14 User: I prefer squash merges over rebase merges.
- 09:15 The deploy service always retries three times before paging.
- 09:20 The user asked us to always run the tests before pushing.
- Should we always rebase before merging? Nobody knows.
- If we never cache the embeddings, cold start doubles.
- The cron job never runs on weekends.
- **Operator:** "Never force-push to main."
- The operator prefers short status updates.
- Ana asked us to always tag her on release PRs.
- Ben asked us to always use the staging cluster.
- User: Please don't add emoji to commit messages.

## Review
> I prefer tabs, said nobody on this team.
> Always quote the error message in full.
- The linter says "never use bare except" in its docs.
- User: Tabs, not spaces.
- Operator: I'd rather get one PR per feature than one big PR.
- The user dislikes long preambles in answers.
- User: don't merge that PR yet.
- The user wants the report by Friday.
- Note: the user said that we should never deploy on Fridays.
- User: Use UTC timestamps instead of local time.

```bash
# always run this first
git push --force   # never on main
```

- We always forget to bump the version.
- User: what if we never paged at night?
- Operator: My preference is to review diffs in the terminal.
- The user likes concise commit messages.
- Maybe we should never ship on Mondays either.
- The API never returns more than 100 items.
- The user mentioned: "always link the ticket in the PR description".
- 17:40 Wrapped up; the operator said nothing else.
- User: I really like it when the summary comes first.
- The operator asked us to stop pinging the channel today.
"""

# Every line of NOTE that holds a preference of the operator (Ana), and the rule it gives; every
# other line is a system fact, a teammate's wish, a question, a hypothetical, a quote, code or a
# one-off request, and must give nothing.
EXPECTED = [
    (5, "prefer", "Prefer squash merges over rebase merges."),
    (7, "prefer", "Always run the tests before pushing."),
    (11, "avoid", "Never force-push to main."),
    (12, "prefer", "Prefer short status updates."),
    (13, "prefer", "Always tag her on release PRs."),
    (15, "avoid", "Don't add emoji to commit messages."),
    (21, "prefer", "Tabs, not spaces."),
    (22, "prefer", "Prefer to get one PR per feature rather than one big PR."),
    (23, "avoid", "Avoid long preambles in answers."),
    (26, "avoid", "Never deploy on Fridays."),
    (27, "prefer", "Use UTC timestamps instead of local time."),
    (36, "prefer", "Prefer to review diffs in the terminal."),
    (37, "prefer", "Prefer concise commit messages."),
    (40, "prefer", "Always link the ticket in the PR description."),
]

OPERATOR_FILE = """\
# Operator model

## Style
Terse answers, UTC times.\x20\x20
Writes in English; reads diffs, not prose.

## Preferences

Hints about how the operator works, not facts about them.
- Always use tabs. <!-- from daily/2026-05-01.md:3, seen 2x, last 2026-05-02 -->
- Prefer short status updates. <!-- from daily/2026-05-01.md:9, seen 1x, last 2026-05-02 -->
- Keep answers under ten lines.

## Timezone
Europe/Lisbon, works late on Thursdays.
"""


def pref(rule: str, source: str) -> Preference:
    """A preference as the extractor gives it for a line in the operator's own voice."""
    [found] = extract_preferences(f"User: {rule}\n", source.rpartition(":")[0])
    return Preference(found.rule, found.polarity, found.key, source, int(source.rpartition(":")[2]))


def test_the_fixture_note_has_at_least_thirty_lines() -> None:
    assert len(NOTE.splitlines()) >= 30


def test_extraction_finds_exactly_the_operators_preferences() -> None:
    found = extract_preferences(NOTE, "daily/2026-05-14.md", names=["Ana"])
    assert [(p.line, p.polarity, p.rule) for p in found] == EXPECTED
    assert all(p.source == f"daily/2026-05-14.md:{p.line}" for p in found)


def test_without_names_only_the_roles_count() -> None:
    found = extract_preferences(NOTE, "daily/2026-05-14.md")
    assert [p.line for p in found] == [line for line, _, _ in EXPECTED if line != 13]


def test_keys_are_content_words_in_order() -> None:
    [found] = extract_preferences("- The user asked us to always run the tests before pushing.\n", "n.md")
    assert found.key == "run tests before pushing"


def test_curly_apostrophes_and_do_not_ever() -> None:
    text = "- User: I’d rather read the diff than a summary.\n- User: Do not ever push to main.\n"
    found = extract_preferences(text, "n.md")
    assert [p.rule for p in found] == ["Prefer to read the diff rather than a summary.", "Never push to main."]


def test_what_is_not_a_preference() -> None:
    lines = [
        "The retry loop always backs off exponentially.",
        "User: should we always squash?",
        "User: if we never cache, startup doubles.",
        "> User: always squash merges.",
        "    User: always squash merges.",
        "User: never mind, it works now.",
        "User: please don't merge it until CI passes.",
        'The runbook says "always page the on-call".',
        "Ben: I prefer rebase merges.",
        "The user wants the dashboard fixed.",
        "We never deploy on Fridays.",
    ]
    assert extract_preferences("\n".join(lines) + "\n", "n.md") == []


def test_merge_adds_bumps_and_replaces_keeping_other_sections_byte_for_byte() -> None:
    found = [
        pref("I prefer spaces over tabs.", "daily/2026-05-14.md:4"),
        pref("I prefer short status updates.", "daily/2026-05-14.md:9"),
        pref("Always squash merges.", "daily/2026-05-13.md:2"),
    ]
    text, report = merge_operator_model(OPERATOR_FILE, found, "2026-05-20")
    assert text == OPERATOR_FILE.replace(
        "- Always use tabs. <!-- from daily/2026-05-01.md:3, seen 2x, last 2026-05-02 -->\n"
        "- Prefer short status updates. <!-- from daily/2026-05-01.md:9, seen 1x, last 2026-05-02 -->\n"
        "- Keep answers under ten lines.\n",
        "\n- Prefer spaces over tabs. <!-- from daily/2026-05-14.md:4, seen 1x, last 2026-05-20 -->\n"
        "- Prefer short status updates. <!-- from daily/2026-05-14.md:9, seen 2x, last 2026-05-20 -->\n"
        "- Keep answers under ten lines.\n"
        "- Always squash merges. <!-- from daily/2026-05-13.md:2, seen 1x, last 2026-05-20 -->\n",
    )
    head, tail = OPERATOR_FILE.partition("## Preferences")[0], OPERATOR_FILE.partition("## Timezone")[2]
    assert text.startswith(head) and text.endswith("## Timezone" + tail)
    assert report == MergeReport(
        added=("Prefer spaces over tabs.", "Always squash merges."),
        merged=(("Prefer short status updates.", 2),),
        replaced=(("Always use tabs.", "Prefer spaces over tabs."),),
    )


def test_merging_the_same_preferences_again_changes_nothing() -> None:
    found = extract_preferences(NOTE, "daily/2026-05-14.md", names=["Ana"])
    once, _ = merge_operator_model(OPERATOR_FILE, found, "2026-05-20")
    twice, report = merge_operator_model(once, found, "2026-05-21")
    assert twice == once
    assert report == MergeReport()


def test_a_newer_note_counts_again_and_takes_the_provenance() -> None:
    first, _ = merge_operator_model("", [pref("Never use tabs.", "daily/2026-05-01.md:3")], "2026-05-02")
    again = [pref("Never use tabs!", "daily/2026-05-08.md:7")]
    text, report = merge_operator_model(first, again, "2026-05-09")
    assert text == "## Preferences\n\n- Never use tabs. <!-- from daily/2026-05-08.md:7, seen 2x, last 2026-05-09 -->\n"
    assert report == MergeReport(merged=(("Never use tabs.", 2),))


def test_an_older_contradiction_does_not_replace_a_newer_rule() -> None:
    newer, _ = merge_operator_model("", [pref("Never use tabs.", "daily/2026-05-08.md:7")], "2026-05-09")
    text, report = merge_operator_model(newer, [pref("Always use tabs.", "daily/2026-05-01.md:3")], "2026-05-09")
    assert text == newer
    assert report == MergeReport(superseded=("Always use tabs.",))


def test_within_one_batch_the_newest_of_two_contradicting_rules_wins() -> None:
    found = [pref("Always use tabs.", "daily/2026-05-08.md:1"), pref("Never use tabs.", "daily/2026-05-02.md:1")]
    text, report = merge_operator_model("# Operator\n", found, "2026-05-09")
    assert text == (
        "# Operator\n\n## Preferences\n\n"
        "- Always use tabs. <!-- from daily/2026-05-08.md:1, seen 1x, last 2026-05-09 -->\n"
    )
    assert report == MergeReport(added=("Always use tabs.",), superseded=("Never use tabs.",))


def test_the_cap_drops_the_least_seen_oldest_rules_and_says_so() -> None:
    existing = (
        "## Notes\nkeep me\n\n## Preferences\n\n"
        "- Always run the tests. <!-- from daily/2026-04-01.md:1, seen 5x, last 2026-04-02 -->\n"
        "- Never use tabs. <!-- from daily/2026-04-01.md:2, seen 1x, last 2026-04-02 -->\n"
        "- Prefer short answers. <!-- from daily/2026-04-01.md:3, seen 1x, last 2026-04-20 -->\n"
    )
    found = [pref("Always squash merges.", "daily/2026-05-01.md:1")]
    full, _ = merge_operator_model(existing, found, "2026-05-02", cap_bytes=100_000)
    cap = len(full.encode()) - 1
    text, report = merge_operator_model(existing, found, "2026-05-02", cap_bytes=cap)
    assert len(text.encode()) <= cap
    assert report.dropped == ("Never use tabs.",)
    assert "Never use tabs" not in text and text.startswith("## Notes\nkeep me\n\n## Preferences\n")
    tiny, report = merge_operator_model(existing, found, "2026-05-02", cap_bytes=60)
    assert tiny == "## Notes\nkeep me\n\n## Preferences\n"
    assert report.dropped == (
        "Never use tabs.",
        "Prefer short answers.",
        "Always squash merges.",
        "Always run the tests.",
    )
    assert report.added == () and not report.over_cap
    _, report = merge_operator_model(existing, found, "2026-05-02", cap_bytes=10)
    assert report.over_cap


def test_nothing_found_and_no_section_leaves_the_file_alone_but_ends_it_with_a_newline() -> None:
    assert merge_operator_model("# Operator\nno prefs", [], "2026-05-02") == ("# Operator\nno prefs\n", MergeReport())
    assert merge_operator_model("", [], "2026-05-02") == ("", MergeReport())
