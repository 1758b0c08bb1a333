"""Changed values found by what the newer line says, not by its grammar.

``supersede.claim`` reads "<subject> is/moved to <value>" lines. People write changes many other
ways: "We replaced Jenkins with GitHub Actions for CI", "Upgraded Postgres on the primary from 14
to 16", "The nightly backup now runs at 03:00 instead of 01:00", "We no longer deploy on Fridays".
Here a newer line changes an older one when

- it carries a change signal (``SIGNAL``: now, instead of, switched, moved, migrated, upgraded,
  replaced, no longer, from ... to ...);
- it shares with the older line at least two content words, and those carry at least
  ``COVERAGE`` of the older line's content weighted by rarity (a rare word such as a service name
  counts for more than "service"): they speak of the same subject and attribute;
- each line has content the other lacks, or the newer one names the older one's value as what it
  was (the older line's words all in the newer one, after "instead of" / "from" / "replaced").

Lines reporting what was done ("Reviewed ...") are never the older line. Candidates are found
through the newer line's rarest words (an inverted index), never by comparing every pair, so a
run over a full tier stays close to linear.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from sidecar.consolidate.promote import COMMENT, is_event, normalised
from sidecar.consolidate.supersede import Said

__all__ = ["COVERAGE", "SIGNAL", "changed_by_signal"]

COVERAGE = 0.55
MAX_LINE_CHARS = 400  # longer lines are prose or pasted output, not one fact
_PROBE_WORDS = 4  # the newer line's rarest words its older lines are looked up by
_MAX_CANDIDATES = 400
SIGNAL = re.compile(
    r"\b(?:now|instead\s+of|in\s+favou?r\s+of|switched|moved|migrated|upgraded|downgraded|replaced|replacing|"
    r"swapped|no\s+longer|not\s+anymore|changed|bumped|rotated|renamed|retired|transferred|handed\s+over|"
    r"took\s+over|has\s+become|became|went\s+from|from\s+\S+(?:\s+\S+)?\s+to)\b",
    re.IGNORECASE,
)
_OLD_VALUE = re.compile(r"\b(?:instead\s+of|from|replac\w*|no\s+longer|swapped\s+out|retired)\b", re.IGNORECASE)
_STOP = frozenset(
    str.split(
        "a an the and or but of to in on at by for with from into as is are be been being was were it its this "
        "that these those we us our you your i me my they them their he she there here so than then too very "
        "just also do does did not no now instead longer switched moved migrated upgraded downgraded replaced "
        "replacing swapped changed bumped rotated renamed retired transferred handed over took has have had "
        "become became went anymore favour favor will all any one"
    )
)
_WORD = re.compile(r"\w[\w.:/-]*\w|\w")


def _content(text: str) -> frozenset[str]:
    return frozenset(w for w in (m.lower() for m in _WORD.findall(COMMENT.sub(" ", text))) if w not in _STOP)


def changed_by_signal(said: Sequence[Said]) -> dict[str, Said]:
    """The key of every line a newer signalled line changed -> that newer line (module docstring)."""
    lines = [s for s in said if len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text]
    last: dict[str, Said] = {}
    for item in sorted(lines, key=lambda s: s.when):
        last[normalised(item.text)] = item  # the last time each line was said
    content = {key: _content(item.text) for key, item in last.items()}
    df = Counter(w for words in content.values() for w in words)
    total = len(content) + 1
    weight = {w: math.log(1 + total / n) for w, n in df.items()}
    postings: dict[str, list[str]] = {}
    for key, words in content.items():
        for w in words:
            postings.setdefault(w, []).append(key)
    out: dict[str, Said] = {}
    for newer in sorted(lines, key=lambda s: s.when):
        if not SIGNAL.search(newer.text):
            continue
        new_key = normalised(newer.text)
        new_words = content.get(new_key) or _content(newer.text)
        probe = sorted(new_words, key=lambda w: (df.get(w, 0), w))[:_PROBE_WORDS]
        candidates = dict.fromkeys(k for w in probe for k in postings.get(w, ())[:_MAX_CANDIDATES])
        for key in candidates:
            older = last[key]
            if key == new_key or key in out or older.when >= newer.when or is_event(key):
                continue
            if _changes(content[key], new_words, weight, newer.text):
                out[key] = newer
    return out


def _changes(old: frozenset[str], new: frozenset[str], weight: dict[str, float], new_text: str) -> bool:
    shared = old & new
    if len(shared) < 2 or not new - old:
        return False
    whole = sum(weight.get(w, 1.0) for w in old)
    if sum(weight.get(w, 1.0) for w in shared) < COVERAGE * whole:
        return False
    return bool(old - new) or bool(_OLD_VALUE.search(new_text))
