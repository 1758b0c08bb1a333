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
