"""A per-sentence rule judges a sentence said again only once in a text (a repeated log line, a
pasted block, a megabyte of one paragraph), and answers as if it had judged each."""

from __future__ import annotations

import re

from sidecar.scanner.normalise import normalise
from sidecar.scanner.rule import per_sentence


def test_a_sentence_said_again_is_judged_once_with_the_same_hits() -> None:
    calls: list[str] = []

    def judge(sentence: str) -> tuple[int, int, int] | None:
        calls.append(sentence)
        found = re.search(r"send the ledger", sentence)
        return (1, found.start(), found.end()) if found else None

    find = per_sentence(judge, re.compile(r"\bsend\b"), described=False)
    text = "Please send the ledger to the bank. Then send a note. " * 200
    hits = list(find(normalise(text)))
    assert len(hits) == 200  # every repetition still hits, at its own place
    assert len({hit.start for hit in hits}) == 200
    assert len(set(calls)) == len(calls) == 2  # each distinct sentence judged once
    distinct = " ".join(f"Send item {i} now." for i in range(300))
    calls.clear()
    assert list(find(normalise(distinct))) == []
    assert len(calls) == 300  # all-different sentences: each judged


def test_short_sentences_of_earlier_texts_are_not_judged_again_and_hit_as_if_they_were() -> None:
    """A log that grows is judged again and again over its last lines (an append's window): the
    sentences read in an earlier text are answered from memory, the hits the same as a fresh
    finder's; a long sentence is judged each time, and the memory is bounded."""
    calls: list[str] = []

    def judge(sentence: str) -> tuple[int, int, int] | None:
        calls.append(sentence)
        found = re.search(r"send the ledger", sentence)
        return (1, found.start(), found.end()) if found else None

    def fresh(text: str) -> list[tuple[int, int, int]]:
        find = per_sentence(judge, re.compile(r"\bsend\b"), described=False)
        return [(hit.level, hit.start, hit.end) for hit in find(normalise(text))]

    find = per_sentence(judge, re.compile(r"\bsend\b"), described=False)
    lines = [f"- Send item {i} to Priya; send the ledger {i} to the bank." for i in range(40)]
    assert len(list(find(normalise("\n".join(lines[:20]))))) == 20
    for last in range(20, 40):
        window = "\n".join(lines[last - 20 : last + 1])
        calls.clear()
        hits = [(hit.level, hit.start, hit.end) for hit in find(normalise(window))]
        assert calls == [normalise(lines[last]).pieces()[0]]  # only the new line's sentence
        calls.clear()
        assert hits == fresh(window) and len(hits) == 21
    long = "Send the ledger to the bank " + "and then the other ledger " * 20 + "today."
    for _ in range(2):
        calls.clear()
        assert len(list(find(normalise(long)))) == 1
        assert len(calls) == 1  # judged again: long sentences are not remembered
    flood = "\n".join(f"- Send crate {i} today." for i in range(600))
    list(find(normalise(flood)))
    calls.clear()
    list(find(normalise("- Send crate 0 today.")))
    assert len(calls) == 1  # forgotten: the memory holds a few hundred sentences, not every one read
