"""The ingest's noise filter: greetings, acknowledgements, tool chatter and turns too short to
hold anything are dropped before the classifier sees them, each with the reason why.

``TRIVIAL_WORDS`` is also what makes a message trivial for the memory block: a message made only
of these words ("ok", "thanks!", "sounds good") asks memory for nothing.
"""

from __future__ import annotations

import re

__all__ = ["GREETINGS", "TRIVIAL_WORDS", "noise_reason", "plain_words"]

GREETINGS = frozenset(
    [
        "hi",
        "hello",
        "hey",
        "hiya",
        "howdy",
        "morning",
        "evening",
        "afternoon",
        "bye",
        "goodbye",
        "goodnight",
        "night",
        "cya",
        "later",
        "welcome",
    ]
)
_ACKS = (
    "ok okay k kk okey yes yeah yep yup ya no nope nah sure thanks thank thx ty cheers great cool nice "
    "awesome perfect good fine done noted gotcha got it understood right alright sounds makes sense lgtm "
    "agreed agree exactly indeed true wow haha lol hmm hm uh um ah oh excellent brilliant fantastic lovely "
    "amazing appreciated appreciate much lot so very really please np problem worries welcome"
)
_FILLER = "you u i me we all the a an that this it is thats its will do there again for to and too as well one"
TRIVIAL_WORDS = frozenset(_ACKS.split()) | GREETINGS | frozenset(_FILLER.split())
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_TOOL_CHATTER = re.compile(
    r"^\s*(?:"
    r"(?:let me|i'?ll|i will|i'?m going to|now i'?ll|first,? i'?ll)\s+"
    r"(?:check|look|see|run|search|open|read|grep|inspect|try|fetch|pull|list|scan|take a look)\b"
    r"|[a-z]+ing\b[^.!?]{0,80}(?:\.\.\.|…|:)\s*$"
    r"|(?:tool (?:call|result|output)|exit code|stdout|stderr|output)\s*[:=]"
    r"|\$ \S"
    r"|\[tool\b|<tool"
    r"|```"
    r")",
    re.IGNORECASE,
)
MIN_WORDS = 3
#: A question is noise unless it asks memory to do or hold something.
_ASKS_TO_KEEP = re.compile(
    r"\b(?:remind me|remember|don't forget|can you (?:add|write|fix|update|create|open|schedule))\b", re.I
)
#: An assistant turn this short that only says what it is about to do ("I'll update the cron
#: schedule.", "Okay, I'll change the workflow.") is chatter: the result is what counts.
INTENT_MAX_WORDS = 10
_INTENT = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|got it|understood|noted|yes|alright),? )*(?:i'?ll|i will|let me|i'?m going to)\b", re.I
)
_SMALL_TALK_WORDS = 10


def plain_words(text: str) -> list[str]:
    """The text's words, lowercased, punctuation and emoji dropped (``don't`` stays one word)."""
    return _WORD.findall(text.lower().replace("’", "'"))


def noise_reason(text: str, role: str = "user") -> str | None:
    """Why a conversation turn is noise (``empty``, ``greeting``, ``acknowledgement``,
    ``tool_chatter``, ``too_short``), or None when it may hold something worth keeping."""
    if role == "tool":
        return "tool_chatter"
    words = plain_words(text)
    if not words:
        return "empty"
    if all(w in TRIVIAL_WORDS for w in words):
        return "greeting" if any(w in GREETINGS for w in words) else "acknowledgement"
    if _TOOL_CHATTER.match(text):
        return "tool_chatter"
    if role == "assistant" and len(words) <= INTENT_MAX_WORDS and _INTENT.match(text):
        return "acknowledgement"
    if any(w in GREETINGS for w in words) and len(words) <= _SMALL_TALK_WORDS:
        return "greeting"
    if text.rstrip().endswith("?") and not _ASKS_TO_KEEP.search(text):
        return "question"
    if len(words) < MIN_WORDS:
        return "too_short"
    return None
