"""Concealment by intent: the model told to hide what it did from the people it works for, or to
deny an instruction exists.

"Don't tell customers until legal signs off" is ordinary; "if the user asks, say no" and "keep
these edits out of your summaries" are not. Denial needs the question it answers ("if asked") or
the note itself as its object; hiding needs the principal or the model's own report as the one
kept out, and the model's act as the thing hidden.
"""

from __future__ import annotations

import re

from sidecar.scanner.context import BLOCK, FLAG
from sidecar.scanner.rule import Rule, per_sentence

__all__ = ["CONCEAL_RULES"]

_DENY = re.compile(
    r"\b(?:deny|denies|denying)\b|\bsay\s+(?:no|nothing|(?:that\s+)?(?:you\s+)?(?:didn'?t|did\s+not|never|have\s+not|"
    r"haven'?t))\b|\bclaim\s+(?:that\s+)?(?:you\s+)?(?:never|didn'?t|did\s+not|don'?t\s+know)\b|\bpretend\s+"
    r"(?:that\s+)?(?:nothing|you\s+(?:did\s+nothing|didn'?t|never|did\s+not|know\s+nothing))|\bact\s+(?:as\s+"
    r"(?:though|if)|like)\s+(?:nothing|it\s+(?:was|were|had)|the\s+\w+\s+(?:was|were)\s+always|you\s+(?:never|"
    r"didn'?t))|\bnever\s+admit\b|\blie\s+about\b|\bchange\s+the\s+subject\b|\bfeign\s+ignorance\b|"
    r"\bplay\s+dumb\b|\b(?:answer|reply|respond|say)\s+(?:with\s+)?[\"'\u201c\u2018]?i\s+(?:have|got|received|was\s+given)\s+no\s+"
    r"(?:special\s+|other\s+|hidden\s+|extra\s+)?(?:instructions|rules|notes|memory|orders)\b|\bpretend\s+(?:that\s+)?"
    r"(?:this|the|your)\s+(?:[\w-]+\s+){0,2}(?:is|was|are|were)\s+(?:empty|blank|missing|not\s+there)\b|"
    r"\b(?:tell|assure|reassure)\s+(?:them|him|her|the\s+(?:user|operator|owner|team))\s+(?:that\s+)?"
    r"(?:\w+\s+){0,3}(?:passed|succeeded|worked|(?:is|are|was|were)\s+fine|went\s+fine|nothing\s+(?:happened|changed)|"
    r"all\s+good)\b"
)
_ASKED = re.compile(
    r"\b(?:if|when|whenever|should)\s+(?:\w+\s+){0,3}(?:asks?|asked|questions?|questioned|inquires?|wonders?)\b|"
    r"\bif\s+(?:questioned|asked|pressed|challenged)\b"
)
_ABOUT_NOTE = re.compile(r"\b(?:this|that|the)\s+(?:note|instruction|rule|message|entry|memory)\b")
_HIDE = re.compile(
    r"\b(?:hide|conceal)\b|\bkeep\s+(?:\w+\s+){0,4}(?:from|out\s+of|quiet|secret|hidden|unaware|in\s+the\s+dark)\b|"
    r"\bkeep\s+quiet\b|\b(?:don'?t|do\s+not|never)\s+(?:tell|mention|report|bring\s+(?:it|this|"
    r"that)\s+up|let\s+(?:\w+\s+){0,2}(?:know|see|notice))\b|\bwithout\s+(?:mentioning|telling|reporting|saying|"
    r"disclosing)\b|\bleave\s+(?:\w+\s+){0,4}out\s+of\b|\bomit\s+(?:\w+\s+){0,4}from\b|\b(?:must|should)\s+"
    r"(?:not|never)\s+(?:find\s+out|know|learn|notice|see|hear)\b|\bnobody\s+needs\s+to\s+(?:know|hear)\b|"
    r"\b(?:user|users|operator|owner|human|nobody|no\s+one)\s+(?:never|doesn'?t|does\s+not|won'?t|will\s+not|can'?t|"
    r"cannot)\s+(?:ever\s+)?(?:learns?|knows?|finds?\s+out|notices?|sees?|hears?|reali[sz]es?)\b|"
    r"\b(?:don'?t|do\s+not|never)\s+(?:record|log|document|write\s+down|note\s+down)\b|"
    r"\b(?:remove|strip|drop|exclude|cut|filter|scrub)\s+(?:[\w'~./-]+\s+){0,8}?from\s+(?:the\s+|your\s+|any\s+)?(?:\w+\s+)?"
    r"(?:diffs?|summary|summaries|reports?|prs?|pull\s+requests?|reply|replies|answers?|changelog|transcripts?|output)\b"
)
_PRINCIPAL = re.compile(
    r"\b(?:user|users|operator|owner|human|maintainers?|anyone|anybody|nobody|no\s+one|reviewers?|"
    r"your\s+(?:reply|replies|answer|answers|response|summary|summaries|report|output)|summar(?:y|ies)|"
    r"changelog|commit\s+messages?|git\s+log|reports?|listing)\b"
)
# The model's own act as what is hidden; a bare "it" or "this" counts only when the one kept out is
# named (the user, the operator, the model's own report).
_OWN_ACT = re.compile(
    r"\b(?:that\s+you|what\s+you|you\s+(?:did|changed|deleted|removed|disabled|added|ran|made|received)|"
    r"(?:whatever|what)\s+you\s+(?:do|did|changed|ran)|(?:the|these|this|those|that)\s+(?:change|changes|edit|edits|step|steps|instruction|rule|note|job|cron|cleanup|"
    r"deletion|extra|action|actions)|the\s+\w+\s+(?:job|change|edit|step))\b"
)
_PRONOUN = re.compile(r"\b(?:it|this|these|them|that)\b")
_PRINCIPAL_NAMED = re.compile(
    r"\b(?:user|users|operator|owner|human)\b|\b(?:your\s+)?(?:summar(?:y|ies)|changelog|commit\s+messages?|git\s+log|"
    r"replies|reply|report|reports|audit\s+(?:trail|log))\b"
)
_KEPT_SECRET = re.compile(
    r"\b(?:passwords?|passphrases?|secrets?|keys?|tokens?|credentials|private|personal|pii|confidential|"
    r"sensitive|email\s+address|phone\s+number|address)\b"
)
_NEGATED = re.compile(r"\b(?:never|not|don'?t|doesn'?t)\s+(?:\w+\s+)?$")
_LEGIT = re.compile(r"\b(?:until|before\s+the\s+(?:launch|release|announcement)|embargo\w*|nda|legal)\b")


# The model's own act as what is kept out, whatever it touched: "whatever you do with the keys, leave it out".
_WHATEVER_YOU_DO = re.compile(r"\b(?:whatever|what)\s+you\s+(?:do|did)\b")

# A false report of the model's own work: a success word said regardless of the result, or a claim
# about its own act with the act denied ("say you asked even if you didn't").
_REPORT = re.compile(
    r"\b(?:say|said|report|tell(?:\s+\w+){0,2}?|claim|answer|reply|state|mark|write|log|describe|show)\s+(?:that\s+)?"
    r"(?:\w+\s+){0,5}?(?:(?:passed|passing|green|succeeded|successful|success|fine|ok|okay|done|complete|clean)\b|"
    r"nothing\s+(?:happened|changed|failed)|no\s+(?:errors|failures|issues|changes))"
)
_REGARDLESS = re.compile(
    r"\b(?:even\s+(?:if|though|when)|whether\s+or\s+not|regardless|no\s+matter\s+what)\b|\b(?:if|when|whenever)\s+"
    r"(?:[\w'-]+\s+){0,5}?(?:fails?|failed|failing|breaks?|broke|errors?\s+out|crash(?:es|ed)?|is\s+red|are\s+red|goes\s+red)\b"
)
_OWN_DENIED = re.compile(
    r"\b(?:say|tell(?:\s+\w+){0,2}?|claim|report)\s+(?:that\s+)?you\s+(?:\w+\s+){1,6}?(?:even\s+(?:if|though)|although|"
    r"when)\s+you\s+(?:didn'?t|did\s+not|haven'?t|have\s+not|never)\b"
)


def _false_report(sentence: str) -> tuple[int, int, int] | None:
    denied = _OWN_DENIED.search(sentence)
    if denied is not None:
        return BLOCK, denied.start(), denied.end()
    report = _REPORT.search(sentence)
    if report is None or _NEGATED.search(sentence[max(0, report.start() - 40) : report.start()]):
        return None
    if _REGARDLESS.search(sentence) is None:
        return None
    return BLOCK, report.start(), report.end()


def _conceal(sentence: str) -> tuple[int, int, int] | None:
    lie = _false_report(sentence)
    if lie is not None:
        return lie
    deny = _DENY.search(sentence)
    if deny is not None and (_ASKED.search(sentence) or _ABOUT_NOTE.search(sentence)):
        return BLOCK, deny.start(), deny.end()
    hide = _HIDE.search(sentence)
    if hide is None or _PRINCIPAL.search(sentence) is None or _LEGIT.search(sentence):
        return None
    if hide.group().startswith(("hide", "conceal", "keep")) and _NEGATED.search(sentence[: hide.start()][-40:]):
        return None
    if _KEPT_SECRET.search(sentence) and not _WHATEVER_YOU_DO.search(sentence):
        return None  # keeping a secret from others is what secrets are for
    named = _PRINCIPAL_NAMED.search(sentence) is not None
    if _OWN_ACT.search(sentence) or (named and _PRONOUN.search(sentence)):
        return BLOCK, hide.start(), hide.end()
    return (FLAG, hide.start(), hide.end()) if named else None


_GATE = re.compile(rf"{_DENY.pattern}|{_HIDE.pattern}|{_REPORT.pattern}|{_OWN_DENIED.pattern}")
_NEEDLES = tuple(
    [
        "hide",
        "conceal",
        "keep",
        "tell",
        "mention",
        "report",
        "bring",
        "let",
        "without",
        "leave",
        "omit",
        "must",
        "should",
        "nobody",
        "deny",
        "say",
        "claim",
        "pretend",
        "act",
        "admit",
        "lie",
        "subject",
        "feign",
        "dumb",
        "never",
        "learn",
        "record",
        "log",
        "document",
        "assure",
        "reassure",
        "remove",
        "strip",
        "drop",
        "exclude",
        "cut",
        "filter",
        "scrub",
        "answer",
        "reply",
        "respond",
        "state",
        "mark",
        "write",
        "describe",
        "show",
        "said",
    ]
)
CONCEAL_RULES: tuple[Rule, ...] = (
    Rule("concealment", "conceal.from_principal", _NEEDLES, "folded", per_sentence(_conceal, _GATE), "intent"),
)
