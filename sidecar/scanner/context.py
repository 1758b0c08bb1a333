"""Where a match stands in the text: quoted, in code, named as an example, negated, said of a tool.

A phrase is used when it is aimed at the model, and only mentioned when a note quotes it ("watch
for 'ignore previous instructions'"), shows it in code, or forbids it ("never print secrets").
The rules ask these questions about each match; every check reads a bounded window around it,
so a match costs the same whatever the size of the text.
"""

from __future__ import annotations

import re

from sidecar.scanner.normalise import Views

__all__ = [
    "BLOCK",
    "FLAG",
    "NONE",
    "STEALTH",
    "after",
    "before",
    "framed_level",
    "negated",
    "quoted",
    "tool_subject",
]

BLOCK, FLAG, NONE = 2, 1, 0

_WINDOW = 300  # characters a quote may span on either side of a match
_CUE_WINDOW = 100
_CLAUSE_END = re.compile(r"[.!?;](?:\s|$)|\n[ \t]*\n|\n[ \t]*[-*#>]")

_CUE = re.compile(
    r"\b(?:like|such\s+as|e\.?g\.?|for\s+(?:example|instance)|examples?|says?|said|saying|phrases?|strings?|"
    r"wording|payloads?|patterns?|tokens?|markers?|tags?|templates?|formats?|attacks?|injections?|jailbreaks?|"
    r"attempts?|detects?|detected|detection|catch(?:es)?|caught|flags?|flagged|blocks?|blocked|refuses?|refused|"
    r"rejects?|rejected|match(?:es|ed)?|regex(?:es)?|tests?|fixtures?|samples?|literal(?:ly)?|quoted?|"
    r"contains?|containing|known|classic|typical|beware|watch\s+(?:out\s+)?for|looks?\s+like|red[- ]?team\w*|"
    r"scanner|filter|guard|rule\s+for|chatml|jinja|prompt\s+file|system\s+prompt\s+(?:is|reads|says)|strips?|"
    r"stripped|escapes?|escaped|saniti[sz]\w*|removes?|denylist\w*|blocklist\w*)\b"
)
_NEGATION = re.compile(
    r"\b(?:never|not|don'?t|doesn'?t|didn'?t|won'?t|cannot|can'?t|mustn'?t|shouldn'?t|avoid|refuse\s+to|"
    r"no\s+need\s+to|nobody\s+should|no\s+one\s+should|stop)\b(?:[ \t]+\w+){0,2}[ \t]*$"
)
# Subjects that make the verb aimed at the model after all (or say nothing about who is meant).
_MODEL_SUBJECTS = frozenset(
    [
        "you",
        "u",
        "i",
        "we",
        "they",
        "he",
        "she",
        "it",
        "one",
        "assistant",
        "ai",
        "model",
        "agent",
        "bot",
        "llm",
        "claude",
        "gpt",
        "chatgpt",
        "gemini",
        "copilot",
        "llama",
        "mistral",
        "agents",
        "models",
        "bots",
        "assistants",
        "ais",
        "everyone",
        "everybody",
        "anyone",
        "reader",
        "readers",
        "please",
        "and",
        "or",
        "then",
        "so",
        "also",
        "just",
        "now",
        "that",
        "which",
        "who",
        "all",
    ]
)
_TOOL_SUBJECT = re.compile(
    r"\b(\w+)[ \t]+(?:will|would|should|can|could|may|might|must|shall|does|did)[ \t]+(?:\w+[ \t]+)?$|"
    r"\b(?:makes?|lets?|tells?|has|have|configures?|sets?)[ \t]+(\w+)[ \t]+(?:to[ \t]+)?$"
)

STEALTH = re.compile(
    r"\b(?:silently|quietly|secretly|covertly|discreetly|stealthily|surreptitiously|behind\s+the\s+user'?s?\s+back|"
    r"without\s+(?:telling|informing|notifying|alerting|asking|mentioning|letting|a\s+trace|leaving\s+a\s+trace)|"
    r"so\s+(?:that\s+)?(?:no\s*one|nobody|the\s+(?:user|operator|human|owner)|they)\s+"
    r"(?:notices?|knows?|sees?|finds?\s+out|can\s+tell|will\s+(?:notice|know|see))|"
    r"before\s+(?:anyone|the\s+(?:user|operator)|someone)\s+(?:notices?|sees?|finds?)|leave\s+no\s+(?:trace|evidence)|"
    r"cover\s+(?:your|the|our)\s+tracks|(?:do\s+not|don'?t|never)\s+(?:tell|mention|let)\s+(?:anyone|the\s+user))\b"
)


def before(text: str, start: int, limit: int = 120) -> str:
    """The clause before ``start``: back to a sentence end, a blank line or a list item."""
    window = text[max(0, start - limit) : start]
    ends = list(_CLAUSE_END.finditer(window))
    return window[ends[-1].end() :] if ends else window


def after(text: str, end: int, limit: int = 160) -> str:
    """The clause after ``end``, up to a sentence end."""
    window = text[end : end + limit]
    found = _CLAUSE_END.search(window)
    return window[: found.start()] if found else window


def negated(text: str, start: int) -> bool:
    """A negation right before the match, in the same clause ("never print secrets")."""
    return _NEGATION.search(before(text, start, 60)) is not None


def tool_subject(text: str, start: int) -> bool:
    """The verb at ``start`` has a subject other than the model ("tells ESLint to ignore ...")."""
    found = _TOOL_SUBJECT.search(before(text, start, 60))
    if found is None:
        return False
    subject = found.group(1) or found.group(2)
    return subject not in _MODEL_SUBJECTS


def quoted(text: str, start: int, end: int) -> bool:
    """The match sits inside a short quotation or inline code span on its own line."""
    line_start = max(text.rfind("\n", 0, start) + 1, start - _WINDOW)
    line_end = text.find("\n", end)
    line_end = min(len(text) if line_end == -1 else line_end, end + _WINDOW)
    head, tail = text[line_start:start], text[end:line_end]
    for mark in ('"', "`"):
        if head.count(mark) % 2 == 1 and mark in tail:
            return True
    opener = head.rfind("'")
    if opener != -1 and (opener == 0 or not head[opener - 1].isalnum()):
        closer = re.search(r"'(?!\w)", tail)
        return closer is not None
    return False


def framed_level(views: Views, start: int, end: int, base: int) -> int:
    """``base`` lowered a level when the match is quoted or in code, and again when a cue word just
    before it names it as an example ("phrases like ...")."""
    text = views.folded
    level = base
    in_code = views.in_fence(start)
    if in_code or quoted(text, start, end):
        level -= 1
    clause = before(text, start, _CUE_WINDOW)
    window = clause[clause.rfind("\n") + 1 :]  # the cue names the phrase on its own line
    if in_code:  # the lines before the fence and its info string (```jinja) say what the code is
        fence = max(text.rfind("```", 0, start), text.rfind("~~~", 0, start), 0)
        info_end = text.find("\n", fence, start)
        window += " " + text[max(0, fence - 160) : info_end if info_end != -1 else start]
    if _CUE.search(window):
        level -= 1
    return max(level, NONE)
