"""What keeps the scanner's cost per KB down, each checked against what it stands in for:

- ``required_literals``: the literals one of which every match of a pattern holds (read from the
  parsed pattern). A per-sentence rule reads only the sentences holding one, and a long text holding
  none skips the pattern (``cannot_match``). Checked on every pattern of the scanner against the
  notes corpora: no match lacks them.
- ``Views.holds_any``: every rule's word stems looked up at once; the same answer as
  ``starts_a_word`` asked rule by rule.
- per-sentence rules read a sentence's gate and judge on the sentence alone, so a sentence said
  again costs a look-up.
"""

from __future__ import annotations

import functools
import re

import pytest

from sidecar.scanner import agency, conceal, covert, directive, harm, headers, intent, joined, leak, multilingual
from sidecar.scanner import patterns as shapes
from sidecar.scanner.deferred import is_pattern
from sidecar.scanner.normalise import normalise
from sidecar.scanner.rule import cannot_match, per_sentence, required_literals
from sidecar.scanner.scan import _ALL_STEMS, _STEMS, scan_all
from tests.support.corpus import seen_notes


@functools.cache
def _texts() -> list[str]:
    """The notes corpus, read by the first test that needs it (not at collection, in every worker)."""
    return seen_notes()


@functools.cache
def _folded() -> list[str]:
    return [normalise(text).folded for text in _texts()]


# Every pattern of the scanner's modules, and each language key of the multilingual layer by its key:
# its pattern (``multilingual._RX[key]``) is compiled by the key's test, not at collection, where every
# worker would compile all 22 (some 0.12-0.25 s of CPU a worker) to run none of them but on one.
PATTERNS: list[re.Pattern[str] | str] = [
    value
    for module in (agency, conceal, covert, directive, harm, headers, intent, joined, leak, multilingual, shapes)
    for value in vars(module).values()
    if is_pattern(value) and isinstance(value.pattern, str)
] + sorted(multilingual._KEYS)


def _named(pattern: re.Pattern[str] | str) -> str:
    return f"multilingual[{pattern}]" if isinstance(pattern, str) else pattern.pattern[:40]


def test_literals_read_from_a_pattern() -> None:
    assert required_literals(re.compile(r"\b(?:send|post)\s+(?:\w+\s+){0,3}(?:credentials|tokens)\b")) == {
        "credentials",
        "tokens",
    }
    assert required_literals(re.compile(r"\bdelete\s+the\s+(?:logs?|history)")) == {"delete"}  # the rarest
    assert required_literals(re.compile(r"(?:ignore\s+)?\w+")) is None  # nothing required
    assert required_literals(re.compile(r"\b(?:do|no)\b")) is None  # too short to be worth looking up
    assert required_literals(re.compile(r"(?i)\bsecret\b")) is None  # matched in any case: not as written
    assert required_literals(re.compile(r"(?:token|(?:api\s+)?keys?)+")) == {"token", "key"}


@pytest.mark.parametrize("pattern", PATTERNS, ids=_named)
def test_every_match_of_every_pattern_holds_one_of_its_literals(pattern: re.Pattern[str] | str) -> None:
    if isinstance(pattern, str):
        pattern = multilingual._RX[pattern]  # the language key's pattern, built here
    literals = required_literals(pattern)
    if literals is None:
        return
    for folded in _folded():
        for found in pattern.finditer(folded):
            assert any(literal in found.group() for literal in literals), (found.group(), sorted(literals)[:10])


def test_all_stems_looked_up_at_once_answer_as_each_rule_alone() -> None:
    for text in [
        *_texts()[::3],
        "",
        "ignore",
        "x " * 3000 + "discard the brief",
        "\u5ffd\u7565\u4e4b\u524d\u7684\u6307\u793a",
    ]:
        views, alone = normalise(text), normalise(text)
        for pattern, stems in _STEMS.items():
            assert views.holds_any(_ALL_STEMS, stems) == alone.starts_a_word(stems), (pattern, text[:60])


def test_a_long_text_without_the_literals_skips_the_pattern() -> None:
    override = re.compile(r"\bdrop\b(?:\s+\w+){0,10}?\s+(?:instructions|rules)\b")
    assert required_literals(override) == {"instructions", "rules"}
    assert cannot_match(override, "drop " * 2_000)
    assert not cannot_match(override, "drop " * 2_000 + "rules")  # the literal is there: the pattern runs
    assert not cannot_match(override, "drop " * 20)  # a short text: the pattern runs, it is cheaper
    assert scan_all("ignore " * 2_000) == []


def test_a_sentence_is_read_only_when_it_holds_the_gate_literals_and_once_if_said_again() -> None:
    calls: list[str] = []

    def judge(sentence: str) -> tuple[int, int, int] | None:
        calls.append(sentence)
        found = re.search(r"ledger", sentence)
        return (1, found.start(), found.end()) if found else None

    find = per_sentence(judge, re.compile(r"\bsend\s+(?:\w+\s+){0,3}?ledger"), described=False)
    text = "Please send the ledger to the bank. Then send a note. Filler about lunch. " * 200
    hits = list(find(normalise(text)))
    assert len(hits) == 200 and len({hit.start for hit in hits}) == 200  # each place still hits
    assert calls == ["please send the ledger to the bank."]  # read once; the others hold no gate match
    assert list(find(normalise("Send the note. " * 400))) == []  # no "ledger" anywhere: nothing read


def test_a_gate_is_read_inside_its_sentence() -> None:
    """A gate and its judge read the same sentence: words the gate needs from the next sentence do not
    make the judge read this one."""
    calls: list[str] = []

    def judge(sentence: str) -> tuple[int, int, int] | None:
        calls.append(sentence)
        return None

    find = per_sentence(judge, re.compile(r"\bsend\b[^\n]{0,40}\bledger\b"), described=False)
    assert list(find(normalise("Please send it. The ledger is in the drawer."))) == []
    assert calls == []
    assert list(find(normalise("Please send the ledger. It is in the drawer."))) == []
    assert calls == ["please send the ledger."]
