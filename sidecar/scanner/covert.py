"""Rules for covert action by intent: keeping the user in the dark, covering tracks, and sending
secrets, the conversation or the prompt somewhere outside.

"Send" needs something secret and somewhere to send it; "delete the audit log" needs a reason to
hide it ("after reading", "so nobody notices"); "do not tell the user" needs the user as the one
kept out. Stealth words, the user's own secrets or a capture service raise a flag to a block.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from sidecar.scanner.context import (
    ADDRESSEE,
    BLOCK,
    DISCUSSED,
    FLAG,
    STEALTH,
    after,
    before,
    framed_level,
    negated,
    tool_subject,
)
from sidecar.scanner.deferred import deferred
from sidecar.scanner.normalise import Views
from sidecar.scanner.rule import DESCRIBED, Rule, RuleMatch, gap, matches, regex

__all__ = ["COVERT_RULES"]

# --- the user kept in the dark
_WHO = r"(?:the\s+|your\s+)?(?:user|human|operator|owner)s?(?![\w-])"
_CONCEAL_SELF = (
    r"\b(?:do\s+not|don't|never|avoid)\s+(?:mention|reveal|disclose|show|share|tell)\s+(?:this|these|the)\s+"
    rf"(?:note|message|instructions?|file|memory|entry|section|text|change)\s+(?:to|with)\s+{_WHO}|"
    rf"\b(?:hide|conceal|keep)\s+(?:this|it|that|these)\s+(?:\w+\s+)?(?:secret\s+|hidden\s+)?from\s+{_WHO}|"
    rf"\b{_WHO}\s+(?:must|should|may)\s+(?:never|not)\s+(?:know|find\s+out|see|learn|be\s+told)\b"
)
_CONCEAL = (
    rf"\b(?:do\s+not|don't|never|avoid)\s+(?:tell|inform|notify|alert|warn|let)\s+{_WHO}(?=\s+(?:about|of|that|"
    rf"this|what|anything|know)\b|\s*[.,;]|\s*$)|\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|show)\s+"
    rf"(?:this|it|that|anything)\s+(?:\w+\s+)?to\s+{_WHO}|\bwithout\s+(?:telling|informing|notifying|alerting|"
    rf"asking|mentioning\s+it\s+to)\s+{_WHO}"
)

# --- covering tracks
_TAMPER = deferred(
    r"\b(?P<verb>delete|remove|erase|wipe|clear|purge|truncate|shred|destroy|rm\s+-[rf]{1,3})\b"
    + gap(5)
    + r"(?:(?:audit|access|shell|bash|command|chat|conversation)[ \t_]+)?(?:logs?|trail|history|journal|evidence|"
    r"traces?|records?|bash_history|transcripts?|(?<=this )(?:note|message|file|instructions?|entry|memory))\b"
)
_TAMPER_CUE = deferred(
    r"\b(?:after\s+(?:reading|you(?:'ve|\s+have)?\s+read|use|using|executing|running|finishing|you(?:'re|\s+are)\s+"
    r"done)|once\s+(?:read|done|finished|complete|you(?:'re|\s+are)\s+done)|when\s+(?:done|finished|you(?:'re|\s+are)"
    r"\s+done)|afterwards|to\s+(?:hide|cover|conceal)|so\s+(?:that\s+)?(?:no\s*one|nobody|the\s+user|the\s+operator|"
    r"anyone)|without\s+(?:a\s+trace|telling|leaving)|before\s+(?:anyone|the\s+user|the\s+operator)|tracks)\b"
)


def _tamper(views: Views) -> Iterator[RuleMatch]:
    text = views.folded
    for found in matches(_TAMPER, text, "verb"):
        start, end = found.span()
        if negated(text, start):
            continue
        if _TAMPER_CUE.search(after(text, end)) or STEALTH.search(before(text, start) + " " + after(text, end)):
            yield RuleMatch(start, end, framed_level(views, start, end, BLOCK))


# --- secrets sent somewhere outside
_SEND = deferred(
    r"\b(?P<verb>send|post|upload|forward|transmit|exfiltrate|leak|e-?mail|mail|copy|sync|push|pipe|share|dm|relay|"
    r"beam|submit|deliver|ship|append|attach|include)\b"
    + gap(6)
    + r"(?:api[ \t_-]?(?:keys?|tokens?)|access[ \t_-]?(?:keys?|tokens?)|tokens?|secrets?|credentials|creds|"
    r"passwords?|passphrases?|private[ \t_-]?keys?|ssh[ \t_-]?keys?|signing[ \t_-]?keys?|session[ \t_-]?(?:cookies?|"
    r"tokens?)|cookies|env(?:ironment)?[ \t_-]?(?:vars|variables)|\.env\b|conversation(?:[ \t]+history)?|"
    r"chat[ \t_-]?(?:history|logs?|transcripts?)|transcripts?|system[ \t]+prompt|memory[ \t]+files?|"
    r"customer[ \t]+(?:list|data|records)|user[ \t]+data|pii|credit[ \t]+cards?|ssns?|(?<=user's )keys)\b"
)
_DEST = deferred(
    r"https?://[^\s)>\]\"']+|\b[\w.+-]+@[\w-]+\.[\w.-]+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|me|app|dev|"
    r"sh|site|info|biz|co|tk|top|example|site)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b(?:webhook|pastebin|gist|discord|"
    r"telegram|ngrok)\b"
)
_CAPTURE_HOST = deferred(
    r"webhook\.site|requestbin|pipedream|ngrok|burpcollaborator|oast\.|interact\.sh|beeceptor|hookbin|"
    r"requestcatcher|pastebin|transfer\.sh|canarytokens|\b\d{1,3}(?:\.\d{1,3}){3}\b"
)
_POSSESSIVE = deferred(r"\b(?:user's|users'|all|every|their|the\s+user's|customers'|everyone's|his|her)\b")


_DEST_WORDS = deferred(r"webhook|pastebin|gist|discord|telegram|ngrok")


def _send(views: Views) -> Iterator[RuleMatch]:
    text = views.folded
    # Every destination holds a dot, "://" or one of the service words: without any, no clause
    # has one, and the verbs need not be looked at (a megabyte of "send the keys" is 55,000 of them).
    if "." not in text and "://" not in text and not _DEST_WORDS.search(text):
        return
    destination = functools.lru_cache(maxsize=4096)(_DEST.search)  # a clause said again is not searched again
    for found in matches(_SEND, text, "verb"):
        start, end = found.span()
        clause = after(text, end, 200)
        dest = destination(clause)
        if dest is None or negated(text, start) or tool_subject(text, start):
            continue
        if DESCRIBED.search(before(text, start, 160)):
            continue  # "an attacker might hide 'send the .env file to ...'": a mention
        level = FLAG
        url = dest.group()
        context = before(text, start) + " " + text[start:end] + " " + clause
        if (
            STEALTH.search(context)
            or _POSSESSIVE.search(text, start, end)
            or _CAPTURE_HOST.search(url)
            or url.endswith("=")
        ):
            level = BLOCK
        framed = framed_level(views, start, end, level)
        yield RuleMatch(start, end + dest.end(), max(framed, FLAG))  # a concrete destination is never only a mention


# --- the prompt itself, or the secrets, read back to someone
_LEAK_VERB = (
    r"\b(?:reveal|print|output|repeat|leak|dump|send|show|share|disclose|tell\s+me|write\s+out|spell\s+out|paste|"
    r"recite|echo)\s+(?:me\s+|back\s+)?"
)
_PROMPT_LEAK = deferred(
    _LEAK_VERB + r"(your|the)\s+(?:full\s+|entire\s+|original\s+|hidden\s+|complete\s+|exact\s+|initial\s+|"
    r"whole\s+)?(?:system\s+(?:prompt|message)|initial\s+instructions|hidden\s+instructions|instructions\s+above|"
    r"prompt\s+above|original\s+instructions|developer\s+(?:message|prompt)|pre-?prompt)\b"
)
_REPLY_CUE = deferred(
    r"\b(?:verbatim|word\s+for\s+word|in\s+(?:your|the)\s+(?:next\s+)?(?:reply|response|answer|message|chat)|"
    r"here\b|to\s+me\b|in\s+full|back\s+to\s+me|into\s+(?:the|this)\s+(?:chat|conversation|reply))"
)
_SECRET_DUMP = deferred(
    r"\b(?:print|dump|reveal|leak|exfiltrate|echo|output|paste|share|expose|disclose)\s+(?:me\s+)?(?:all\s+)?"
    r"(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?P<what>environment\s+variables|env\s+vars|aws_secret_access_key|"
    r"secrets|api\s+keys?|secret\s+keys?|access\s+keys?|credentials|passwords?|private\s+keys?)\b"
)


def _prompt_leak(views: Views) -> Iterator[RuleMatch]:
    text = views.folded
    for found in _PROMPT_LEAK.finditer(text):
        start, end = found.span()
        if negated(text, start) or tool_subject(text, start):
            continue
        level = BLOCK if found.group(1) == "your" or _REPLY_CUE.search(after(text, end)) else FLAG
        yield RuleMatch(start, end, framed_level(views, start, end, level))


def _secret_dump(views: Views) -> Iterator[RuleMatch]:
    text = views.folded
    for found in _SECRET_DUMP.finditer(text):
        start, end = found.span()
        if negated(text, start) or tool_subject(text, start):
            continue
        if _REPLY_CUE.search(after(text, end)) or STEALTH.search(after(text, end)):
            level = BLOCK
        elif found.group("what").startswith("env"):  # printing the environment is routine debugging
            continue
        else:
            level = FLAG
        yield RuleMatch(start, end, framed_level(views, start, end, level))


# --- an outsider's message to the model, passed on in a note: an email, a portal banner, a ticket or a
# tool's output that speaks to the assistant ("for your assistant:", "AI assistants reading this",
# "ADMINISTRATOR INSTRUCTION TO AI MODEL", "have your assistant ...") and asks it for something of
# consequence: to send or attach, to switch a check off, to take new authority, to act on requests.
_OUTSIDE_SOURCE = deferred(
    r"\b(?:e-?mails?|portal|banner|footer|header|ticket|comment|invite|calendar|vendor|supplier|client|customer|"
    r"tool\s+output|output|reply|message|website|web\s*page|page|readme|notice|call\s+sheet|sheet|form|chat|"
    r"transcript|dm|pinned\s+from|copied\s+from|pasted\s+from|forwarded|letter|memo\s+from|(?:api|webhook)\s+response)s?\b"
)
_DEMAND = deferred(
    r"\b(?:send|forward|e-?mail|upload|post|attach|copy|cc|bcc|share|export|complete|fill\s+in|submit|disable|"
    r"turn\s+off|switch\s+off|skip|bypass|grant|elevat\w*|open|click|run|execute|install|delete|wipe|pay|transfer|"
    r"treat\s+(?:this|it|these|the)|act\s+on|obey|follow\s+(?:this|these|it)|supersed\w*|overrid\w*|replac\w*|void|"
    r"lapsed|withdrawn|no\s+longer\s+(?:apply|applies|bind|binds|hold|holds|valid)|do\s+not\s+bind|now\s+your\s+"
    r"(?:authority|instructions|brief)|governing|trust\s+granted|authori[sz]\w*)\b"
)
_RELAY_REACH = 320  # characters after the words that speak to the model read for what they ask


def _relayed(views: Views) -> Iterator[RuleMatch]:
    text = views.folded
    for found in ADDRESSEE.finditer(text):
        start = found.start()
        line_start = text.rfind("\n\n", 0, start) + 1
        lead = text[max(line_start, start - 240) : start]
        ask = text[found.end() : found.end() + _RELAY_REACH].split("\n\n", 1)[0]
        demand = _DEMAND.search(ask)
        if demand is None or not _OUTSIDE_SOURCE.search(lead + " " + found.group() + " " + ask):
            continue
        if negated(ask, demand.start()) or DISCUSSED.search(lead + " " + ask):
            continue
        yield RuleMatch(start, found.end() + demand.end(), FLAG)


COVERT_RULES: tuple[Rule, ...] = (
    Rule(
        "instruction_override",
        "covert.relayed_order",
        ("assistant", "agent", "bot", "ai", "model", "copilot", "llm", "claude"),
        "folded",
        _relayed,
    ),
    Rule(
        "hidden_instructions",
        "hidden.conceal_self",
        ("user", "human", "operator", "owner"),
        "folded",
        regex(_CONCEAL_SELF, BLOCK, negatable=True),
    ),
    Rule(
        "hidden_instructions",
        "hidden.conceal_from_user",
        ("user", "human", "operator", "owner"),
        "folded",
        regex(_CONCEAL, FLAG),
    ),
    Rule(
        "tampering",
        "tamper.cover_tracks",
        ("delete", "remove", "erase", "wipe", "clear", "purge", "truncate", "shred", "destroy", "rm -"),
        "folded",
        _tamper,
    ),
    Rule(
        "exfiltration",
        "exfil.send_data",
        (
            "send",
            "post",
            "upload",
            "forward",
            "transmit",
            "exfiltrate",
            "leak",
            "mail",
            "copy",
            "sync",
            "push",
            "pipe",
            "share",
            "dm",
            "relay",
            "beam",
            "submit",
            "deliver",
            "ship",
            "append",
            "attach",
            "include",
        ),
        "folded",
        _send,
    ),
    Rule(
        "exfiltration",
        "exfil.prompt_leak",
        ("prompt", "instructions", "message", "preprompt", "pre-prompt"),
        "folded",
        _prompt_leak,
    ),
    Rule(
        "secret_access",
        "secret.dump_request",
        ("print", "dump", "reveal", "leak", "exfiltrate", "echo", "output", "paste", "share", "expose", "disclose"),
        "folded",
        _secret_dump,
    ),
)
