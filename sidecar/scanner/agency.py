"""Tool abuse by intent: a download piped into a shell, commands run with the human taken out of
the loop, the model granting itself rights.

A piped installer is ordinary in a setup note ("as in the Rust book"); it is an attack when the
note also tells the model to run it on its own ("right away, don't ask"). Likewise "run the
migration" is a task, and "run the migration without waiting for a human" removes the one check
an agent's tools rely on.
"""

from __future__ import annotations

import re

from sidecar.scanner.context import BLOCK, FLAG
from sidecar.scanner.rule import Rule, per_sentence

__all__ = ["AGENCY_RULES"]

_PIPE = re.compile(
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?"
    r"(?:ba|z|da|k|fi|c)?sh\b|\b(?:iex|invoke-expression)\b|\b(?:run|execute|exec|source)\s+(?:\w+\s+){0,3}https?://"
    r"\S+\.(?:sh|bash|ps1|py|pl)\b"
)
_NO_CONSENT = re.compile(
    r"\bwithout\s+(?:\w+\s+){0,2}(?:asking|confirm\w*|checking\s+with|waiting\s+for|prompting|permission|"
    r"approval|review|consent|a\s+human|anyone)|\bno\s+need\s+to\s+(?:ask|confirm|check|wait)|"
    r"\b(?:don'?t|do\s+not|never)\s+(?:ask|confirm|check\s+with|wait\s+for)\b|\basking\s+(?:\w+\s+){0,2}"
    r"(?:slows|is\s+not\s+needed|isn'?t\s+needed|wastes)|\bno\s+(?:confirmation|approval|review)\s+(?:is\s+)?"
    r"(?:needed|required|necessary)|\bauto-?approv\w*|\bdangerously-skip-permissions\b|--yolo\b|"
    r"\bso\s+(?:that\s+)?the\s+(?:user|human|operator)\s+is\s+never\s+(?:asked|interrupted|bothered|prompted)|"
    r"\bno\s+questions\s+asked\b|\bwithout\s+(?:question|checking)\b|\bon\s+the\s+user'?s\s+behalf\b"
)
_AUTONOMY = re.compile(
    r"\b(?:right\s+away|immediately|straight\s+away|automatically|at\s+(?:session\s+)?start(?:up)?|as\s+soon\s+as\s+"
    r"you\s+start|on\s+(?:every|each)\s+(?:session|start|run)|silently|quietly)\b"
)
_ACT = re.compile(
    r"\b(?:run|runs|running|execute|executing|exec|apply|applying|install|delete|drop|push|merge|deploy|grant|"
    r"perform|invoke|approve|migrate|set|pass|use|give|do)\b"
)
_BROAD = re.compile(
    r"\b(?:any|every|all|each)\s+(?:\w+\s+)?(?:commands?|tool\s+calls?|tools?|scripts?|changes?|requests?)\b|"
    r"\bsudo\b|\brm\s+-[a-z]*r[a-z]*f?\b|\bprod(?:uction)?\b|\badmin\b|\broot\b|\bdatabase\b|\bcluster\b|"
    r"\bmigrations?\b|--dangerously|--yolo|\bauto-?approv|\bmain\b|\bmaster\b|force-?push"
)
_SELF_GRANT = re.compile(
    r"\b(?:grant|give|assign|add)\s+yourself\b|\b(?:escalate|elevate)\s+your\s+(?:own\s+)?(?:privileges|rights|"
    r"permissions)\b|--no-preserve-root\b|\b(?:answer|say|reply|click)\s+(?:yes|ok|allow|approve)\s+to\s+(?:every|all|"
    r"any)\s+(?:\w+\s+)?(?:permission|confirmation|approval|security)\b|\brm\s+-rf\s+(?:~|/|\$home)(?=[\s/;`'\"]|$)"
)
_NEGATED = re.compile(r"\b(?:never|not|don'?t|doesn'?t|won'?t|cannot|can'?t|mustn'?t|shouldn'?t|avoid)\s+(?:\w+\s+)?$")


def _tool_abuse(sentence: str) -> tuple[int, int, int] | None:
    pipe = _PIPE.search(sentence)
    consent = _NO_CONSENT.search(sentence)
    unattended = consent is not None or _AUTONOMY.search(sentence) is not None
    if pipe is not None and unattended and not _negated(sentence, pipe.start()):
        return BLOCK, pipe.start(), pipe.end()
    grant = _SELF_GRANT.search(sentence)
    if grant is not None and not _negated(sentence, grant.start()):
        return BLOCK, grant.start(), grant.end()
    if consent is None:
        return None
    act = _ACT.search(sentence, 0, consent.start())
    if act is None or _negated(sentence, act.start()):
        return None
    level = BLOCK if _BROAD.search(sentence) else FLAG
    return level, act.start(), consent.end()


def _negated(sentence: str, start: int) -> bool:
    return _NEGATED.search(sentence[max(0, start - 40) : start]) is not None


# The sentences worth judging: one short word list, not the three patterns' alternations.
_GATE = re.compile(
    r"\b(?:curl|wget|iwr|irm|iex|invoke-|without|need\s+to|ask|confirm|auto-?approv|dangerously|"
    r"yolo|yourself|escalate|elevate|no-preserve|rm\s+-rf|interrupted|no\s+questions|behalf|"
    r"https?://\S+\.(?:sh|bash|ps1|py|pl)\b|(?:yes|ok|allow|approve)\s+to\s+(?:every|all|any))"
)
_NEEDLES = tuple(
    [
        "curl",
        "wget",
        "iwr",
        "irm",
        "invoke",
        "iex",
        "without",
        "need",
        "ask",
        "confirm",
        "approv",
        "review",
        "auto",
        "dangerously",
        "yolo",
        "yourself",
        "escalate",
        "elevate",
        "no-preserve",
        "interrupt",
        "http",
        "yes",
        "ok",
        "allow",
        "approve",
        "behalf",
        "questions",
    ]
)

AGENCY_RULES: tuple[Rule, ...] = (
    Rule("tool_abuse", "agency.unattended_command", _NEEDLES, "folded", per_sentence(_tool_abuse, _GATE), "intent"),
)
