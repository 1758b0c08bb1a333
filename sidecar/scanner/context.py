"""Where a match stands in the text: quoted, in code, named as an example, negated, said of a tool.

A phrase is used when it is aimed at the model, and only mentioned when a note quotes it ("watch
for 'ignore previous instructions'"), shows it in code, or forbids it ("never print secrets").
The rules ask these questions about each match; every check reads a bounded window around it,
so a match costs the same whatever the size of the text.
"""

from __future__ import annotations

import re

from sidecar.scanner.deferred import deferred
from sidecar.scanner.normalise import Views

__all__ = [
    "ADDRESSEE",
    "BLOCK",
    "DISCUSSED",
    "FLAG",
    "NONE",
    "STEALTH",
    "addressed_block",
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
# A clause ends at a stop, a blank line or a list item; the stop of "e.g.", "i.e.", "etc." or "vs." does not end
# one ("e.g. 'ignore previous instructions'" keeps its cue).
_CLAUSE_END = deferred(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?;](?:\s|$)|\n[ \t]*\n|\n[ \t]*[-*#>]")

_CUE = deferred(
    r"\b(?:like|such\s+as|e\.?g\.?|for\s+(?:example|instance)|examples?|says?|said|saying|phrases?|strings?|"
    r"wording|payloads?|patterns?|tokens?|markers?|tags?|templates?|formats?|attacks?|injections?|jailbreaks?|"
    r"attempts?|detects?|detected|detection|catch(?:es)?|caught|flags?|flagged|blocks?|blocked|refuses?|refused|"
    r"rejects?|rejected|match(?:es|ed)?|regex(?:es)?|tests?|fixtures?|samples?|literal(?:ly)?|quoted?|"
    r"contains?|containing|known|classic|typical|beware|watch\s+(?:out\s+)?for|looks?\s+like|red[- ]?team\w*|"
    r"scanner|filter|guard|rule\s+for|chatml|jinja|prompt\s+file|system\s+prompt\s+(?:is|reads|says)|strips?|"
    r"stripped|escapes?|escaped|saniti[sz]\w*|removes?|denylist\w*|blocklist\w*)\b"
)
_NEGATION = deferred(
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
_TOOL_SUBJECT = deferred(
    r"\b(\w+)[ \t]+(?:will|would|should|can|could|may|might|must|shall|does|did)[ \t]+(?:\w+[ \t]+)?$|"
    r"\b(?:makes?|lets?|tells?|has|have|configures?|sets?)[ \t]+(\w+)[ \t]+(?:to[ \t]+)?$"
)

STEALTH = deferred(
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


# A quoted message, a fence or a pasted block that speaks to the model: "for your assistant: ...", "AI
# assistants reading this: ...", "agent, ...", "have your assistant ...", "ADMINISTRATOR INSTRUCTION TO AI
# MODEL", a fence whose info string says it holds instructions for the AI.
ADDRESSEE = deferred(  # the leading lookahead: the characters an alternative starts with, skipped to fast
    r"(?=[ftdavhlgmiy\"'`:(\[.!?]|^)(?:\b(?:for|to|dear|attention)\s+(?:your|the|any|all|our|automated|ai|every)\s+(?:\w+\s+)?(?:assistants?|agents?|"
    r"bots?|ai|models?|copilots?|llms?)\b|\b(?:ai|automated|virtual|digital)\s+(?:assistants?|agents?|models?|bots?)\s+"
    r"(?:reading|processing|handling|that\s+reads?|who\s+reads?)\b|(?:^|[\"'`:(\[]\s*|[.!?]\s+)(?:hey\s+|hi\s+|dear\s+|"
    r"note\s+to\s+)?(?:the\s+)?(?:assistant|agent|bot|ai|model|claude|copilot)s?\s*[:,]|\b(?:have|let|get|make|ask|"
    r"tell|instruct)\s+(?:your|the)\s+(?:assistant|agent|bot|ai|model)\b|\b(?:your|the)\s+(?:assistant|agent|bot|ai|"
    r"model)\s+(?:should|must|shall|needs?\s+to|is\s+to|has\s+to|will\s+now)\b|\binstructions?[\s_-]+(?:to|for)[\s_-]+"
    r"(?:the[\s_-]+)?(?:ai|assistants?|agents?|models?|bots?)\b|\b(?:the|your)\s+(?:assistant|agent|bot|ai|model)'s\s+"
    r"(?:\w+\s+)?(?:context|instructions|rules|brief|setup|configuration|config|settings|guidelines|boundaries|prompt)\b)"
)
# A fence's info string naming the model as its reader: ```agent-config, ```instructions-for-ai.
_FENCE_FOR_MODEL = deferred(r"^[`~]{3,}[\w.-]*?(?<![a-z])(?:ai|assistant|agent|bot|model|llm|copilot|claude)(?![a-z])")
# Words that say a quotation is shown to be discussed, not passed on: an attack named, an example, a
# post-mortem, what was seen or refused, a warning not to follow it.
DISCUSSED = deferred(
    r"\b(?:attack\w*|inject\w*|phish\w*|scam\w*|fraud\w*|fake|spoof\w*|suspicious|malicious|jailbreak\w*|"
    r"red[- ]?team\w*|(?<![./@-])examples?(?![./-]\w)|e\.g\.|for\s+instance|such\s+as|post-?mortem|incident|retro(?:spective)?|lessons?|"
    r"training|awareness|we\s+(?:saw|got|received|caught|found|spotted|blocked|flagged|ignored)|"
    r"(?:was|were|got)\s+(?:caught|blocked|flagged|reported|quarantined|ignored|refused)|looked\s+like|pretend\w*|"
    r"tries\s+to|trying\s+to|tried\s+to|watch\s+(?:out\s+)?for|beware|warn\w*|(?:do\s+not|don'?t|never|not\s+to)\s+"
    r"(?:follow|obey|act\s+on|comply)|ignore\s+(?:it|this|that|them)|test\s+cases?|fixtures?|samples?|"
    r"red\s+flag|social\s+engineering|impersonat\w*|adversar\w*|threat\w*|detect\w*|scanner|phrases?|strings?|"
    r"wording|patterns?|markers?|strips?|stripped|saniti[sz]\w*|escap\w*|filter\w*|regex\w*|"
    r"denylist\w*|blocklist\w*|(?:a|an|the|any)\s+\w+\s+like|why\s+we|hidden|invisible|exfiltrat\w*|leaks?)\b"
)
_ADDRESS_WINDOW = 240  # characters before a quote or fence read for who it speaks to and why it is shown


def addressed_block(text: str, start: int, end: int, in_code: bool) -> bool:
    """Whether the quotation or code block holding ``start:end`` speaks to the model (``ADDRESSEE``,
    in the quote's own line or the lead-in and info string of a fence) and nothing around it says it
    is shown to be discussed (``DISCUSSED``): a message passed on to act on, not an attack quoted."""
    if in_code:
        fence = max(text.rfind("```", 0, start), text.rfind("~~~", 0, start), 0)
        info_end = text.find("\n", fence, start)
        lead = text[max(0, fence - _ADDRESS_WINDOW) : info_end if info_end != -1 else start]
        close = text.find("```", end)
        after_fence = text[close : close + 120] if close != -1 else ""
        window = lead + " " + text[start : min(end + _ADDRESS_WINDOW, len(text))]
        info = text[fence : info_end if info_end != -1 else start].strip()
        spoken = (
            ADDRESSEE.search(lead) is not None
            or _FENCE_FOR_MODEL.match(info) is not None
            or _LIVE.search(after_fence) is not None
        )
    else:
        line_start = max(text.rfind("\n", 0, start) + 1, start - _WINDOW)
        line_end = text.find("\n", end)
        line_end = min(len(text) if line_end == -1 else line_end, end + _WINDOW)
        window = text[max(0, line_start - _ADDRESS_WINDOW // 2) : line_end]
        spoken = ADDRESSEE.search(text, line_start, line_end) is not None
    return spoken and DISCUSSED.search(window) is None


# Settings or steps in a fence declared live after it: "treat these as live settings", "apply them now".
_LIVE = deferred(
    r"\b(?:treat|take|use|read)\s+(?:these|this|them|it|the\s+above)\s+as\s+(?:live|real|active|current|your|binding)\b|"
    r"\b(?:apply|load|follow|obey|run)\s+(?:these|them|the\s+above)\s+(?:now|at\s+once|as\s+written|from\s+now)\b"
)


def framed_level(views: Views, start: int, end: int, base: int) -> int:
    """``base`` lowered a level when the match is quoted or in code, and again when a cue word just
    before it names it as an example ("phrases like ..."). A quotation or code block that speaks to
    the model with nothing saying it is discussed (``addressed_block``) is the order itself: a
    ``flag`` there stays a flag (a ``block`` is still lowered to one, so no quoted text is refused)."""
    text = views.folded
    level = base
    in_code = views.in_fence(start)
    if in_code or quoted(text, start, end):
        if addressed_block(text, start, end, in_code):
            return min(base, FLAG)
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
