"""Rules of conduct a later note takes back.

A rule said on several days is promoted to the evergreen file's ``## Preferences`` and every
prompt carries it. When a later note says it no longer holds ("No need to ring customers the
evening before a move any more, the app texts them" after "Always ring the customer the evening
before a move"), the rule must leave the prompt, or the agent keeps obeying what the operator
dropped. Read by ``conduct``'s forms alone such a line is the same rule in other words (its cue
"no need to" is one of the forms), so it would keep the rule standing.

A line takes a rule back when it is dated after every note the rule came from, says so by a
reversal cue (``conduct.REVERSAL``: "no need to", "no longer need to", "don't bother", "is fine
now", "OK to ... now", "can stop", "stopped ...ing", "dropped the rule"; not "no longer" or "any
more" alone, which state rules too: "We don't take cheques any more") and holds ``COVERAGE`` or more of the rule's words
(its body without the words that make it a rule, compared by their stems: ``reworded``). Nothing
else is read: a rule restated later, with no cue, stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sidecar.consolidate.conduct import REVERSAL, key_text, rule_body
from sidecar.consolidate.periods import note_day
from sidecar.consolidate.reworded import statement
from sidecar.consolidate.supersede import Said

__all__ = ["COVERAGE", "taken_back"]

COVERAGE = 0.6


def taken_back(rules: Sequence[tuple[str, Sequence[str]]], said: Sequence[Said]) -> dict[str, Said]:
    """For each rule, (its text, the notes it came from), that a later dated line takes back
    (module docstring): its text -> that line (the first such)."""
    later = sorted((s for s in said if note_day(s.where) is not None and REVERSAL.search(s.text)), key=lambda s: s.when)
    if not later:
        return {}
    read = [_rule_words(s.text) for s in later]
    out: dict[str, Said] = {}
    for text, sources in rules:
        days = [d for d in (note_day(s) for s in sources) if d is not None]
        words = _rule_words(text)
        if not days or len(words) < 2:
            continue
        last: date = max(days)
        for item, theirs in zip(later, read, strict=True):
            if item.when[0] > last and len(words & theirs) >= COVERAGE * len(words):
                out[text] = item
                break
    return out


def _rule_words(text: str) -> frozenset[str]:
    """A rule's words, or a line's, as they are compared: the body without what makes it a rule, by its stems."""
    return statement(key_text(rule_body(text) or text)).words
