"""What the consolidation steps read a line as: its normalised words, and whether it reports an
event. A leaf module: every step imports it, it imports none of them."""

from __future__ import annotations

import re

from sidecar.write.dedup import words

__all__ = ["COMMENT", "is_event", "normalised"]

COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PAST = frozenset(
    str.split(
        "ran spent met wrote sent made took got did went had saw led held began left paid found kept told "
        "gave brought bought caught thought taught sought fought won lost rode drove flew"
    )
)


def normalised(line: str) -> str:
    """A line's words in order, lowercased, without its list marker or HTML comments."""
    return " ".join(words(COMMENT.sub(" ", line)))


def is_event(key: str) -> bool:
    """Whether a normalised line opens with a verb in the past tense (it reports what was done)."""
    head = key.split(" ", 1)[0]
    return head in _PAST or (len(head) > 4 and head.endswith("ed") and not head.endswith("eed"))
