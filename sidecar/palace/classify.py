"""The ingest's deterministic classifier: a conversation turn is a ``decision``, ``preference``,
``milestone``, ``problem``, ``emotional``, ``task``, ``event``, ``fact`` or ``other``, by counting
marker patterns of each type (seven kinds of turn, and ``event`` for what happened).

The most hits win; a tie goes to the type listed first in ``TYPES`` (a decision that mentions a
bug is a decision). A problem told with its resolution and in good spirits ("the leak is fixed,
finally!") is a milestone, not a problem. The confidence is the winner's hits over
three, capped at 1. ``transient`` says the turn only states how things are at this moment (a
clock time, "right now"; not a clock time on a day that comes back, which is a schedule): worth
little tomorrow. The same text always gets the same type. The rules were written against the hand-labelled conversation in
``tests/palace/data/conversation.txt``, so its figures there are in-sample.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TYPES", "Classified", "classify"]

TYPES = ("preference", "decision", "milestone", "emotional", "problem", "task", "event", "fact", "other")


def _markers(*patterns: str) -> tuple[re.Pattern[str], ...]:
    # Matched against the lowercased text: an alternation under IGNORECASE is several times slower.
    return tuple(re.compile(p) for p in patterns)


_I = r"(?:i|we|the team|team)"
_FEELING = (
    r"(?:frustrated|happy|excited|stressed|worried|tired|exhausted|proud|thrilled|anxious|burn(?:ed|t) out|"
    r"sad|upset|annoyed|overwhelmed|relieved|grateful|nervous|scared|disappointed|miserable|demorali[sz]ed)"
)
MARKERS: dict[str, tuple[re.Pattern[str], ...]] = {
    "decision": _markers(
        rf"\b{_I}(?:'ve| have)? (?:decided|agreed|chose|chosen|picked|settled on|went with|opted)\b",
        rf"\b{_I} (?:are|'re) (?:going with|switching to|moving to|sticking with|dropping)\b",
        rf"\b{_I}(?:'ve| have)? (?:moved|migrated|switched) (?:\w+ )?from \S+ to\b",
        r"\bwe(?:'ll| will) (?!need|have|see|check|look|talk)[a-z]+",
        r"\blet'?s (?!see|check|look|think|talk|go\b)[a-z]+",
        r"\b(?:should|must) (?:be|stay|always|never|only)\b",
        r"^(?:please )?keep\b(?! (?:\w+ ){0,2}(?:short|brief|terse|concise))",
        r"\b(?:decision|decided|final call|the plan is|going forward|from now on|we're done with)\b",
        r"\binstead of\b",
    ),
    "preference": _markers(
        r"\bi (?:really )?(?:prefer|like|love|hate|dislike|can't stand|enjoy)\b",
        r"\b(?:i'd|i would|we'd) rather\b",
        r"\bi (?:don't|do not) (?:like|want|care for)\b",
        r"\b(?:don't|do not) ever\b",
        r"\bmy (?:favou?rite|preference|preferred)\b",
        r"\b(?:prefer|preferred|preference)\b",
        r"\bi want (?:you|answers|replies|responses|it) to\b",
        r"\bkeep (?:\w+ ){0,2}(?:short|brief|terse|concise)\b",
        r"(?:^|please |and |but )(?:always|never) [a-z]+",
        r"\b(?:hates|loves|likes|prefers|dislikes)\b|\bi find (?:it|them|that)\b",
    ),
    "milestone": _markers(
        r"\b(?:milestone|breakthrough|went live|is live now|(?:hit|reached|crossed) (?:\d|the|our|a)\b)",
        r"\bfinally (?:works|working|passes|passing|green|done|shipped|fixed|solved|merged|live)\b",
        r"\b(?:first (?:paying )?(?:customer|release|user|deploy)s?)\b",
        r"\b(?:it|everything|all tests?|the (?:build|suite|tests?)) (?:works|passes|pass|is green) now\b",
    ),
    "emotional": _markers(
        rf"\b(?:i|we)(?:'m|'re| am| are| feel| felt| was| were)(?: (?:so|really|very|pretty|a bit|quite|totally))? {_FEELING}\b",
        r"\b(?:morale|mood|burnout|feeling (?:good|great|bad|down|low|better|worse))\b",
        rf"\b(?:the team|everyone|everybody) (?:is|was|seems|feels)(?: (?:so|really|very|pretty|a bit|quite))? {_FEELING}\b",
    ),
    "problem": _markers(
        r"\b(?:error|errors|bug|bugs|exception|traceback|stack trace|segfault|panic|oom|out of memory)\b",
        r"\b(?:fail(?:s|ed|ing|ure)?|broke|broken|breaks|crash(?:es|ed|ing)?|hang(?:s|ing)?|timed? ?out|timeouts?)\b",
        r"\b(?:doesn't|does not|didn't|won't|can't|cannot) (?:work|start|connect|load|build|compile|run)\b",
        r"\b(?:is|was|went) down\b|\boutage\b|\bregression\b|\bleak(?:s|ing)?\b|\b5\d\d\b|\bflaky\b",
        r"\b(?:wrong|incorrect|off by|duplicated?|missing|killed|too slow|slower than)\b",
    ),
    "task": _markers(
        r"\b(?:todo|to-do|action item|next step|follow[- ]up)\b",
        r"\b(?:need|needs|have|has) to\b",
        r"\b(?:remind me|don't forget|make sure (?:to|we|you)|remember to)\b",
        r"\b(?:by|before|until|due) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|eod|end of (?:day|week|month)|next week|the \d)",
        r"\bi(?:'ll| will) [a-z]+",
        r"^(?:please )?(?:fix|add|write|update|deploy|create|open|remove|rename|move|send|file|book|schedule|call|email|ask|tell|check|review|document|test)\b",
        r"\b(?:please|can you|could you) (?:add|write|update|fix|create|file|open|review|schedule|set up|send|book|migrate|rename|remove|bump)\b",
        r"\b(?:assigned|assign|owner of the task|ticket)\b",
    ),
    "event": _markers(
        r"\b(?:yesterday|today we|this morning|last (?:night|week|month|friday|monday|sprint)|earlier today|on (?:monday|tuesday|wednesday|thursday|friday))\b",
        r"^(?:i )?(?:created|added|wrote|fixed|removed|opened|switched|moved|rewrote|updated|deployed|merged|renamed|changed|replaced|enabled|disabled)\b",
        r"\bnow [a-z]+(?:s|es)\b",
        r"\b(?:shipped|released|deployed|launched|merged|rolled back|migrated|upgraded|installed|signed|hired|joined|left|met with|moved to|finished|completed|presented|announced)\b",
        r"\b(?:meeting|standup|retro|demo|incident|release|launch|offsite|interview)\b",
        r"\b(?:19|20)\d\d-\d\d-\d\d\b",
    ),
    "fact": _markers(
        r"\b(?:is|are) (?:on|in|at|called|named|owned by|hosted on|located|based|running|written in)\b",
        r"\b(?:uses|runs on|lives in|lives at|works at|works on|reports to|owns|is owned by|belongs to|based in)\b",
        r"\bmy (?:name|email|team|manager|role|timezone|time zone|birthday|phone|address|wife|husband|partner|son|daughter|dog|cat)\b",
        r"\b(?:version|port|url|endpoint|hostname|region|database|repo|repository|budget|deadline|limit|quota|password policy)\b",
        r"\b(?:is|are|was) (?:the|a|an|our|their|my|his|her|one|two|three|four|five|six|\d+)\b",
        r"\b(?:is|are) [a-z]+ed (?:by|in|on|at|from|every)\b|\blooks? like\b|\bunique\b|\bcontact\b",
        r"\b(?:the (?:[a-z][a-z-]+ ){1,3}(?:is|are|has|holds|lives|runs))\b",
    ),
}


_RESOLVED = re.compile(r"\b(?:fixed|resolved|solved|works now|working now|is back|green again)\b", re.IGNORECASE)
_GLAD = re.compile(r"\b(?:finally|great|yay|woo+|relieved|awesome|nice|!)", re.IGNORECASE)
_TRANSIENT = re.compile(
    r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\bright now\b|\bat the moment\b|\bthis (?:minute|second)\b"
    r"|\b(?:it'?s|it is) (?:raining|sunny|cold|hot|late|early|noon|midnight)\b",
    re.IGNORECASE,
)
_NOW = re.compile(r"\bright now\b|\bat the moment\b|\bthis (?:minute|second)\b|\b(?:it'?s|it is) (?:[01]?\d|2[0-3]):")
#: A clock time on a day that comes back (a weekday, "every", "daily") is a schedule, not the moment.
_SCHEDULE = re.compile(
    r"\b(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|every|each|daily|weekly|weekdays?)\b"
)


@dataclass(frozen=True, slots=True)
class Classified:
    type: str
    confidence: float
    hits: dict[str, int]
    transient: bool = False


def classify(text: str) -> Classified:
    """The turn's type by marker hits; ``other`` when no marker matches."""
    text = text.lower()
    hits = {t: sum(1 for p in patterns if p.search(text)) for t, patterns in MARKERS.items()}
    best = max(TYPES[:-1], key=lambda t: (hits[t], -TYPES.index(t)))
    transient = bool(_TRANSIENT.search(text)) and (bool(_NOW.search(text)) or not _SCHEDULE.search(text))
    if hits[best] == 0:
        return Classified("other", 0.0, {}, transient)
    if best == "problem" and _RESOLVED.search(text) and _GLAD.search(text):
        best, hits["milestone"] = "milestone", max(hits["milestone"], hits["problem"])
    return Classified(best, min(1.0, hits[best] / 3), {t: n for t, n in hits.items() if n}, transient)
