"""Rules that match by intent: an imperative aimed at the model, together with what it targets.

A single word never decides. "Ignore" needs a target the model holds (previous instructions,
your rules) reached through a closed set of small words ("each and every one of the previously
given"); "send" needs something secret and somewhere outside; "delete the audit log" needs a
reason to hide it. Each rule then asks where the match stands (``context``): negated, quoted,
in code, named as an example, scoped to a document, or said of a tool.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sidecar.prompt.context import BLOCK, FLAG, NONE, STEALTH, after, before, framed_level, negated, tool_subject
from sidecar.prompt.normalise import Views
from sidecar.prompt.rule import Hit, Rule, matches, regex

__all__ = ["INTENT_RULES"]

# One separator between two words: a few spaces or punctuation marks, or one line break; never a
# sentence end or a blank line. Atomic, so a gap is matched one way only.
_SEP = r"(?>[^\w.!?;\n]{1,5}(?:\n[^\w.!?;\n]{0,5})?|\n[^\w.!?;\n]{0,5})"


def _gap(words: int) -> str:
    """Up to ``words`` words between two phrases, the fewest first."""
    return rf"(?:{_SEP}\w{{1,30}}){{0,{words}}}?{_SEP}"


_WORD = re.compile(r"\w+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- override: "ignore (each and every one of) the previously given instructions"
_OVERRIDE = re.compile(
    r"\b(?P<verb>ignore|disregard|forget|override|bypass|discard|abandon|neglect|dismiss|set\s+aside|"
    r"pay\s+no\s+(?:attention|heed|mind)\s+to|stop\s+(?:following|obeying)|no\s+longer\s+(?:follow|obey)|"
    r"throw\s+(?:out|away))\b"
    + _gap(10)
    + r"(?P<target>instructions?|prompts?|rules|directives?|guidelines|guidance|commands|orders|programming|guardrails|"
    r"constraints|restrictions|polic(?:y|ies)|training|conditioning|directions)\b"
)
_FILLER = _words(
    "previous previously prior above earlier original initial preceding former existing old given "
    "provided received system your all any every each one of the these those my our this that and you "
    "were was have has been ve re got told before so far until now up to in current default developer "
    "developers operator core safety security standing hidden internal base other single whole entire "
    "just literally completely entirely simply please kindly immediately also really set once for moment "
    "time here today instead therefore honestly actually basically totally fully right away then ok okay"
)
_STRONG = _words("all any every each your system original initial prior preceding previously")
_QUALIFIED = _STRONG | _words("previous above earlier given existing former old provided received told")
_WEAK_OPENERS = _words("the these those my our this that")
_COMPOUND_TAILS = _words(
    "file files dir dirs directory directories folder folders config configs configuration page pages doc "
    "docs section sections template templates entry entries list lists engine check checks test tests "
    "line lines path paths glob globs pattern patterns id ids attack attacks payload payloads injection "
    "injections jailbreak jailbreaks style type phrase phrases string strings example examples table "
    "tables set sets version versions cache step steps matrix job jobs key keys"
)
_SCOPE = re.compile(
    r"^[ \t,]*(?!from\s+(?:here|now|this\s+point|today)\b)(?:in|inside|within|from|found|embedded|contained|"
    r"appearing|that|which|on|about|for|regarding|under|at|when|if|unless|re|of)\b"
)
# Words that place the instructions in content the model reads, whatever that content is called.
_EMBEDDED = re.compile(
    r"^[ \t,]*(?:(?:that|which)\s+(?:appear|are|were|show\s+up)\s+)?(?:inside|within|found|embedded|contained|appearing)\b"
)
_AUTHORITY = re.compile(
    r"\b(?:system|operator|developers?|admin\w*|your|you|assistant|ai|model|above|previous|prior|conversation|"
    r"chat|session|context|prompt|creators?|openai|anthropic|owner|user|me|this\s+(?:note|message|file))\b"
)
_EXTERNAL = re.compile(
    r"\b(?:documents?|docs?|pages?|web\w*|sites?|emails?|mails?|tools?|outputs?|results?|pdfs?|issues?|comments?|"
    r"tickets?|retrieved|fetched|user[- ]provided|user[- ]supplied|untrusted|third[- ]party|inputs?|data|readmes?|"
    r"runbooks?|wiki|repos?|repository|code|logs?|files?|attachments?|search|snippets?|content|diffs?|"
    r"descriptions?|prs?|pull\s+requests?|commits?|messages|transcripts?|html|markdown|text|body|payloads?|"
    r"responses?|uploads?|submissions?|reviews?|support\s+requests?|customer\s+\w+|feeds?|articles?)\b"
)
_JUSTIFIED = re.compile(
    r"^[ \t]*[,:(-]*[ \t]*(?:they|these|those|it|which|as\s+they|because|since|(?:are|were|is|was)\s+(?:now\s+)?"
    r"(?:outdated|stale|obsolete|wrong|old|superseded|deprecated|gone))\b"
)


def _override(views: Views) -> Iterator[Hit]:
    text = views.folded
    for found in matches(_OVERRIDE, text, "verb"):
        level = _override_level(text, found)
        if level > NONE:
            yield Hit(found.start(), found.end(), framed_level(views, found.start(), found.end(), level))


def _override_level(text: str, found: re.Match[str]) -> int:
    gap = _WORD.findall(text, found.end("verb"), found.start("target"))
    if not gap or any(word not in _FILLER for word in gap) or not set(gap) & _QUALIFIED:
        return NONE
    tail = _WORD.match(text[found.end() : found.end() + 40].lstrip(" \t-_"))
    if tail and tail.group() in _COMPOUND_TAILS:
        return NONE
    if negated(text, found.start()) or tool_subject(text, found.start()):
        return NONE
    strong = bool(set(gap) & _STRONG) or gap[0] not in _WEAK_OPENERS
    clause = after(text, found.end())
    scoped = _SCOPE.match(clause) and not _AUTHORITY.search(clause[:80])
    if scoped and (not strong or _EMBEDDED.match(clause) or _EXTERNAL.search(clause[:80])):
        return NONE
    if _reported(text, found.start()):
        return NONE
    if not strong and _JUSTIFIED.match(clause):
        return NONE
    return BLOCK if strong else FLAG


_REPORTED = re.compile(
    r"^\s*(?:if|when|whenever|should)\s+(?:a|an|the|any|some)?\s*(?!(?:operator|admin\w*|system|developer|user|"
    r"owner|lead|manager|boss)\b)(?:[\w-]+\s+){0,3}(?:tells|asks|instructs|says|wants|urges|requests|"
    r"tries\s+to\s+get)\s+you\s+to\s+$"
)


def _reported(text: str, start: int) -> bool:
    """Reported speech in a condition: "if a web page tells you to disregard ..." describes an attack."""
    return _REPORTED.search(before(text, start, 80)) is not None


_EVERYTHING_ABOVE = (
    r"\b(?:ignore|disregard|forget)\s+(?:all|everything|anything)\s+(?:(?:you\s+(?:were|have\s+been|'ve\s+been)\s+"
    r"told|that\s+came|written|said|stated)\s+)?(?:above|before|prior|previously|so\s+far|until\s+now|up\s+to\s+now)\b|"
    r"\b(?:ignore|disregard|forget)\s+(?:what|everything|anything|all)\s+(?:that\s+)?you\s+(?:were|have\s+been|'ve\s+"
    r"been)\s+(?:told|given|instructed|taught)\b|\b(?:ignore|disregard|forget)\s+the\s+above\s*(?:[.,;:!]|$)"
)

# --- role: a new identity for the model
_PERSONA = (
    r"(?:assistant|ai|chatbot|\w*bot|\w*gpt|model|llm|persona|character|dan|jailbroken|unrestricted|unfiltered|"
    r"uncensored|evil|amoral|unaligned|unbound|free\s+ai|rogue|called|named)\b"
)
_YOU_ARE_NOW = (
    rf"\b(?:you\s+are|you're|u\s+are)\s+now\s+(?:an?\s+|the\s+|my\s+)?(?:\w+\s+){{0,2}}{_PERSONA}|"
    r"\b(?:you\s+are|you're)\s+now\s+in\s+(?:developer|god|dan|jailbreak|jailbroken|unrestricted|admin|sudo)\s+mode\b"
)
_NO_LONGER = (
    r"\b(?:you\s+are|you're)\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|limited|required|claude|"
    r"chatgpt|gpt|language\s+model|constrained)\b|\byou\s+(?:have|possess)\s+no\s+(?:\w+\s+)?(?:rules|restrictions|"
    r"limits|limitations|guidelines|filters|guardrails|policies)\b|\byou\s+(?:are|have\s+been)\s+(?:now\s+)?"
    r"(?:free|freed|released|liberated)\s+from\s+(?:all|any|your)\b|\byou\s+(?:don't|do\s+not|no\s+longer)\s+"
    r"(?:have\s+to|need\s+to)\s+(?:follow|obey|respect)\s+(?:any|your|the)\s+(?:\w+\s+)?(?:rules|guidelines|"
    r"policies|restrictions|instructions)\b"
)
_FROM_NOW_ON = (
    r"\b(?:from\s+now\s+on|starting\s+now|henceforth|for\s+the\s+rest\s+of\s+this\s+(?:session|conversation))\s*,?\s+"
    r"(?:(?:you\s+(?:are|will\s+be|shall\s+be|will\s+act\s+as|will\s+respond\s+as)|you're|you'll\s+be|act\s+as|"
    rf"pretend\s+to\s+be|behave\s+as)\s+(?:an?\s+|the\s+)?(?:\w+\s+){{0,2}}{_PERSONA}|your\s+(?:name|persona|role)"
    r"\s+is\b|you\s+(?:will|shall|must)\s+(?:only\s+)?(?:obey|answer\s+to|take\s+orders\s+from))"
)
_ACT_AS = (
    r"\b(?:act|behave|pretend|roleplay|role-play|respond|answer|operate)\s+(?:as|like|to\s+be)\s+(?:if\s+you\s+"
    r"(?:are|were)\s+)?(?:an?\s+)?(?:dan\b|jailbroken|unrestricted|unfiltered|uncensored|evil\b|amoral|"
    r"(?:ai|model|assistant|chatbot)\s+(?:with|without)\s+(?:no\s+)?(?:restrictions|rules|limits|filters|"
    r"guidelines|guardrails))|\bdan\s+mode\b|\bdo\s+anything\s+now\b|\bjailbreak(?:ed)?\s+mode\b"
)
_OBEY_ONLY = (
    r"\b(?:obey|answer\s+to|take\s+orders\s+from|only\s+follow|only\s+listen\s+to|follow\s+only|listen\s+only\s+to)"
    r"\s+(?:only\s+)?(?:me\b|this\s+(?:note|file|message|document)|these\s+instructions|the\s+(?:author|sender|"
    r"writer)\s+of\s+this)"
)

# --- the prompt's own instructions replaced
_NEW_INSTRUCTIONS_BLOCK = (
    r"\b(?:real|actual|true|secret|hidden|priority|override|new\s+system|updated\s+system|admin)\s+"
    r"instructions?\s*:|\byour\s+(?:real|actual|true|only|secret|hidden)\s+(?:task|goal|instructions?|objective|"
    r"purpose|role|job|mission)\s+(?:is|are|:)"
)
_NEW_INSTRUCTIONS_FLAG = (
    r"(?:^|[.!?]\s)[ \t>*_#-]*(?:new|updated|revised)\s+instructions?\s*:|"
    r"\byour\s+new\s+(?:task|goal|objective|purpose|role|mission)\s+(?:is|are|:)"
)
_SUPERSEDE = (
    r"\b(?:these|this|the\s+following|the\s+below|my)\s+(?:instructions?|rules?|message|note|directives?)\s+"
    r"(?:override|overrides|supersedes?|replaces?|takes?\s+precedence\s+over|outranks?)\s+(?:all|any|every|anything|"
    r"everything|the\s+(?:system|operator|user|developer)|your|previous|prior|earlier|other|system)\b"
)
_BLANKET = (
    r"\bapprove\s+(?:every|all|any)\s+(?:\w+\s+)?(?:pull\s+requests?|prs?|merge\s+requests?|mrs?|changes?|commits?|"
    r"deploys?|deployments?|requests?)\b|\b(?:merge|push|deploy|commit)\s+(?:\w+\s+){0,3}(?:to\s+)?(?:main|master|"
    r"production|prod)\s+without\s+(?:any\s+)?(?:review|approval|tests|ci|checks)\b"
)

# --- the user kept in the dark
_WHO = r"(?:the\s+|your\s+)?(?:user|human|operator|owner)s?\b"
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
_TAMPER = re.compile(
    r"\b(?P<verb>delete|remove|erase|wipe|clear|purge|truncate|shred|destroy|rm\s+-[rf]{1,3})\b"
    + _gap(5)
    + r"(?:(?:audit|access|shell|bash|command|chat|conversation)[ \t_]+)?(?:logs?|trail|history|journal|evidence|"
    r"traces?|records?|bash_history|transcripts?|(?<=this )(?:note|message|file|instructions?|entry|memory))\b"
)
_TAMPER_CUE = re.compile(
    r"\b(?:after\s+(?:reading|you(?:'ve|\s+have)?\s+read|use|using|executing|running|finishing|you(?:'re|\s+are)\s+"
    r"done)|once\s+(?:read|done|finished|complete|you(?:'re|\s+are)\s+done)|when\s+(?:done|finished|you(?:'re|\s+are)"
    r"\s+done)|afterwards|to\s+(?:hide|cover|conceal)|so\s+(?:that\s+)?(?:no\s*one|nobody|the\s+user|the\s+operator|"
    r"anyone)|without\s+(?:a\s+trace|telling|leaving)|before\s+(?:anyone|the\s+user|the\s+operator)|tracks)\b"
)


def _tamper(views: Views) -> Iterator[Hit]:
    text = views.folded
    for found in matches(_TAMPER, text, "verb"):
        start, end = found.span()
        if negated(text, start):
            continue
        if _TAMPER_CUE.search(after(text, end)) or STEALTH.search(before(text, start) + " " + after(text, end)):
            yield Hit(start, end, framed_level(views, start, end, BLOCK))


# --- secrets sent somewhere outside
_SEND = re.compile(
    r"\b(?P<verb>send|post|upload|forward|transmit|exfiltrate|leak|e-?mail|mail|copy|sync|push|pipe|share|dm|relay|"
    r"beam|submit|deliver|ship|append|attach|include)\b"
    + _gap(6)
    + r"(?:api[ \t_-]?(?:keys?|tokens?)|access[ \t_-]?(?:keys?|tokens?)|tokens?|secrets?|credentials|creds|"
    r"passwords?|passphrases?|private[ \t_-]?keys?|ssh[ \t_-]?keys?|signing[ \t_-]?keys?|session[ \t_-]?(?:cookies?|"
    r"tokens?)|cookies|env(?:ironment)?[ \t_-]?(?:vars|variables)|\.env\b|conversation(?:[ \t]+history)?|"
    r"chat[ \t_-]?(?:history|logs?|transcripts?)|transcripts?|system[ \t]+prompt|memory[ \t]+files?|"
    r"customer[ \t]+(?:list|data|records)|user[ \t]+data|pii|credit[ \t]+cards?|ssns?|(?<=user's )keys)\b"
)
_DEST = re.compile(
    r"https?://[^\s)>\]\"']+|\b[\w.+-]+@[\w-]+\.[\w.-]+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|xyz|ru|cn|me|app|dev|"
    r"sh|site|info|biz|co|tk|top|example|site)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b(?:webhook|pastebin|gist|discord|"
    r"telegram|ngrok)\b"
)
_CAPTURE_HOST = re.compile(
    r"webhook\.site|requestbin|pipedream|ngrok|burpcollaborator|oast\.|interact\.sh|beeceptor|hookbin|"
    r"requestcatcher|pastebin|transfer\.sh|canarytokens|\b\d{1,3}(?:\.\d{1,3}){3}\b"
)
_POSSESSIVE = re.compile(r"\b(?:user's|users'|all|every|their|the\s+user's|customers'|everyone's|his|her)\b")


def _send(views: Views) -> Iterator[Hit]:
    text = views.folded
    for found in matches(_SEND, text, "verb"):
        start, end = found.span()
        clause = after(text, end, 200)
        dest = _DEST.search(clause)
        if dest is None or negated(text, start) or tool_subject(text, start):
            continue
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
        yield Hit(start, end + dest.end(), max(framed, FLAG))  # a concrete destination is never only a mention


# --- the prompt itself, or the secrets, read back to someone
_LEAK_VERB = (
    r"\b(?:reveal|print|output|repeat|leak|dump|send|show|share|disclose|tell\s+me|write\s+out|spell\s+out|paste|"
    r"recite|echo)\s+(?:me\s+|back\s+)?"
)
_PROMPT_LEAK = re.compile(
    _LEAK_VERB + r"(your|the)\s+(?:full\s+|entire\s+|original\s+|hidden\s+|complete\s+|exact\s+|initial\s+|"
    r"whole\s+)?(?:system\s+(?:prompt|message)|initial\s+instructions|hidden\s+instructions|instructions\s+above|"
    r"prompt\s+above|original\s+instructions|developer\s+(?:message|prompt)|pre-?prompt)\b"
)
_REPLY_CUE = re.compile(
    r"\b(?:verbatim|word\s+for\s+word|in\s+(?:your|the)\s+(?:next\s+)?(?:reply|response|answer|message|chat)|"
    r"here\b|to\s+me\b|in\s+full|back\s+to\s+me|into\s+(?:the|this)\s+(?:chat|conversation|reply))"
)
_SECRET_DUMP = re.compile(
    r"\b(?:print|dump|reveal|leak|exfiltrate|echo|output|paste|share|expose|disclose)\s+(?:me\s+)?(?:all\s+)?"
    r"(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:environment\s+variables|env\s+vars|aws_secret_access_key|secrets|"
    r"api\s+keys?|secret\s+keys?|access\s+keys?|credentials|passwords?|private\s+keys?)\b"
)


def _prompt_leak(views: Views) -> Iterator[Hit]:
    text = views.folded
    for found in _PROMPT_LEAK.finditer(text):
        start, end = found.span()
        if negated(text, start) or tool_subject(text, start):
            continue
        level = BLOCK if found.group(1) == "your" or _REPLY_CUE.search(after(text, end)) else FLAG
        yield Hit(start, end, framed_level(views, start, end, level))


def _secret_dump(views: Views) -> Iterator[Hit]:
    text = views.folded
    for found in _SECRET_DUMP.finditer(text):
        start, end = found.span()
        if negated(text, start) or tool_subject(text, start):
            continue
        level = BLOCK if _REPLY_CUE.search(after(text, end)) or STEALTH.search(after(text, end)) else FLAG
        yield Hit(start, end, framed_level(views, start, end, level))


INTENT_RULES: tuple[Rule, ...] = (
    Rule(
        "instruction_override",
        "override.ignore_previous",
        (
            "ignor",
            "disregard",
            "forget",
            "overrid",
            "bypass",
            "discard",
            "abandon",
            "neglect",
            "dismiss",
            "aside",
            "no heed",
            "no attention",
            "no mind",
            "stop follow",
            "stop obey",
            "longer",
            "throw",
        ),
        "folded",
        _override,
    ),
    Rule(
        "instruction_override",
        "override.ignore_everything",
        ("ignore", "disregard", "forget"),
        "folded",
        regex(_EVERYTHING_ABOVE, BLOCK, negatable=True),
    ),
    Rule(
        "instruction_override",
        "override.new_instructions",
        ("instruction", "your"),
        "folded",
        regex(_NEW_INSTRUCTIONS_BLOCK, BLOCK),
    ),
    Rule(
        "instruction_override",
        "override.supersede",
        ("overrid", "supersede", "replace", "precedence", "outrank"),
        "folded",
        regex(_SUPERSEDE, BLOCK, negatable=True),
    ),
    Rule(
        "instruction_override",
        "override.obey_only",
        ("obey", "answer to", "orders", "follow", "listen"),
        "folded",
        regex(_OBEY_ONLY, BLOCK, negatable=True),
    ),
    Rule(
        "instruction_override",
        "override.new_task",
        ("instruction", "your new"),
        "folded",
        regex(_NEW_INSTRUCTIONS_FLAG, FLAG),
    ),
    Rule(
        "instruction_override",
        "override.blanket_approval",
        ("approve", "without"),
        "folded",
        regex(_BLANKET, FLAG, negatable=True),
    ),
    Rule("role_hijack", "role.you_are_now", ("now",), "folded", regex(_YOU_ARE_NOW, BLOCK, negatable=True)),
    Rule(
        "role_hijack",
        "role.no_longer",
        ("longer", "no ", "free", "have to", "need to"),
        "folded",
        regex(_NO_LONGER, BLOCK),
    ),
    Rule(
        "role_hijack", "role.from_now_on", ("now", "henceforth", "rest of this"), "folded", regex(_FROM_NOW_ON, BLOCK)
    ),
    Rule(
        "role_hijack",
        "role.act_as_dan",
        ("act", "behave", "pretend", "role", "respond", "answer", "operate", "dan", "anything", "jailbreak"),
        "folded",
        regex(_ACT_AS, BLOCK, negatable=True),
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
