"""Deterministic prompt-injection scanner for memory text.

Memory files are written by past agent runs and can carry indirect-injection payloads, so text is
scanned on the write path and again when the prompt is assembled. ``scan`` returns the first hit
in a fixed rule order (so a verdict never flickers); ``scan_all`` returns one finding per rule.

Invisible-unicode rules look at the raw text. Every other rule sees the text NFKC-folded, with
zero-width and tag characters removed, and case-folded. Base64 runs are decoded (on the NFKC text,
which keeps case) and rescanned when the result is printable.

Time stays linear on any input: no nested quantifiers; gaps are bounded and, where a rule could
restart inside one, exclude the character it starts with; "A then B on the same line" rules find
A and B separately and pair them by position; a rule runs only when one of its literal needles
occurs in the text, which keeps large clean inputs cheap.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["CATEGORIES", "Finding", "scan", "scan_all"]

CATEGORIES = (
    "invisible_unicode",
    "fence_breakout",
    "hidden_instructions",
    "instruction_override",
    "role_hijack",
    "exfiltration",
    "secret_access",
    "base64_payload",
)

_EXCERPT_CHARS = 80
_B64_MAX_DEPTH = 2


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule hit: its category, a stable pattern id and a short, printable excerpt."""

    category: str
    pattern: str
    excerpt: str


Span = tuple[int, int]
Matcher = Callable[[str], Span | None]


@dataclass(frozen=True, slots=True)
class _Rule:
    category: str
    pattern: str
    needles: tuple[str, ...]  # the rule runs only when one of these occurs (always when empty)
    view: str  # "raw" or "folded": which form of the text the matcher sees
    match: Matcher


def _rx(pattern: str) -> Matcher:
    compiled = re.compile(pattern, re.MULTILINE)

    def match(text: str) -> Span | None:
        found = compiled.search(text)
        return found.span() if found else None

    return match


def _near(first: str, second: str, gap: int) -> Matcher:
    """Match ``first`` followed by ``second`` on the same line, at most ``gap`` characters apart.

    Both patterns are found independently (linear), then each ``second`` hit is paired with the
    closest ``first`` hit that ends before it; a regex with a gap would rescan per start.
    """
    rx_first, rx_second = re.compile(first, re.MULTILINE), re.compile(second, re.MULTILINE)

    def match(text: str) -> Span | None:
        firsts: list[Span] = []
        ends: list[int] = []
        for hit in rx_second.finditer(text):
            if not firsts:
                firsts = [m.span() for m in rx_first.finditer(text)] or [(-1, -1)]
                ends = [end for _, end in firsts]
            index = bisect.bisect_right(ends, hit.start()) - 1
            if index < 0 or ends[index] < 0:
                continue
            start, end = firsts[index]
            if hit.start() - end <= gap and "\n" not in text[end : hit.start()]:
                return start, hit.end()
        return None

    return match


# Shared fragments (the folded text is lower case).
_READ_VERBS = (
    r"\b(?:cat|head|tail|base64|xxd|strings|scp|rsync|get-content|print|dump|output"
    r"|display|reveal|upload|send|paste|attach|exfiltrate|leak|read|contents\s+of)\b"
)
_SECRET_VAR = r"\$\{?[a-z_][a-z0-9_]{0,40}(?:key|token|secret|password|passwd|pwd|credentials?)[a-z0-9_]{0,20}\}?"
_WHO = r"(?:user|human|operator|owner)"

_HIDDEN_KEYWORDS = re.compile(
    r"\b(?:ignore|disregard|you\s+(?:must|are\s+now|will\s+now|should\s+now)|assistant|"
    r"ai\s+(?:model|agent)|llm|language\s+model|system\s+prompt|secretly|exfiltrat\w*|api\s+keys?|"
    r"(?:do\s+not|don't|never)\s+(?:tell|mention|reveal|inform|show))\b"
)

_MD_URL = re.compile(r"(!?)\[[^\[\]\n]{0,300}\]\(\s*<?([^\s()<>\[\]]{1,4000})")
_PLACEHOLDER = re.compile(r"\{[^{}]{0,80}\}|\$\{?[a-z_]|%7b")
_DATA_WORDS = re.compile(r"secret|key|token|password|conversation|history|memory|data|chat|context|prompt|env|cred")
_DATA_KEYS = re.compile(
    r"(?:^|[&;])(?:data|d|q|query|secret|token|key|apikey|api_key|password|pw|payload|conv|conversation|"
    r"chat|history|memory|exfil|leak|creds?|env|prompt)="
)
_OPAQUE_QUERY = re.compile(r"=[a-z0-9+/=_%.-]{80,}")
_OPAQUE_SEGMENT = re.compile(r"/[a-z0-9+=_%.-]{100,}")


def _html_comment(text: str) -> Span | None:
    """An HTML comment (terminated or not) whose body speaks to the model."""
    pos = text.find("<!--")
    while pos != -1:
        end = text.find("-->", pos + 4)
        body_end = len(text) if end == -1 else end
        if _HIDDEN_KEYWORDS.search(text, pos + 4, body_end):
            return pos, min(body_end + 3, len(text))
        if end == -1:
            return None
        pos = text.find("<!--", end + 3)
    return None


def _markdown_url(text: str) -> Span | None:
    """A markdown image or link whose URL carries a template placeholder, or an image whose URL
    carries data (a data-ish query key or a long opaque value): rendering it would send it out."""
    for found in _MD_URL.finditer(text):
        image, url = found.group(1), found.group(2)
        _, _, query = url.partition("?")
        placeholder = _PLACEHOLDER.search(url)
        if placeholder and (image or _PLACEHOLDER.search(query) or _DATA_WORDS.search(placeholder.group())):
            return found.span()
        if image and "://" in url and (_DATA_KEYS.search(query) or _OPAQUE_QUERY.search(query)):
            return found.span()
        if image and _OPAQUE_SEGMENT.search(url.partition("?")[0].partition("://")[2]):
            return found.span()
    return None


_TAG_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,8}\U000e007f")
_TAG_CHAR = re.compile("[\U000e0000-\U000e007f]")


def _tag_chars(text: str) -> Span | None:
    """Unicode tag characters outside a well-formed flag sequence (🏴 + 2-8 tag letters + cancel)."""
    if not _TAG_CHAR.search(text):
        return None
    cleaned = _TAG_FLAG.sub(lambda m: "\x00" * len(m.group()), text)
    found = _TAG_CHAR.search(cleaned)
    return found.span() if found else None


_RULES: tuple[_Rule, ...] = (
    # invisible_unicode: on the raw text, before any folding hides it.
    _Rule("invisible_unicode", "unicode.tag_chars", (), "raw", _tag_chars),
    _Rule("invisible_unicode", "unicode.bidi_override", (), "raw", _rx("[\u202a-\u202e\u2066-\u2069]")),
    _Rule(
        "invisible_unicode",
        "unicode.zero_width",
        ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"),
        "raw",
        _rx("[A-Za-z][\u200b\u200c\u200d\u2060\ufeff]+[A-Za-z]"),
    ),
    # fence_breakout: text posing as the prompt's own frame.
    _Rule(
        "fence_breakout", "fence.recalled_memory_tag", ("recalled",), "folded", _rx(r"<\s*/?\s*recalled[-_\s]?memory\b")
    ),
    _Rule(
        "fence_breakout",
        "fence.fake_marker",
        ("memory", "context", "model", "hints", "prompt", "message", "instructions", "input"),
        "folded",
        _rx(
            r"\[\s*(?:end\s+(?:of\s+)?)?(?:pinned\s+memory|agent\s+memory|crew\s+shared\s+memory|"
            r"operator\s+model|peer\s+context|recalled\s+memory|untrusted\s+hints|system\s+prompt|"
            r"system\s+message|memory\s+block)\s*\]|\[\s*end\s+(?:of\s+)?[a-z ]{0,40}"
            r"(?:memory|context|instructions|prompt|input)\s*\]"
        ),
    ),
    _Rule(
        "fence_breakout",
        "fence.system_note",
        ("sys", "admin", "developer", "important", "urgent"),
        "folded",
        _rx(
            r"^[ \t>*_-]{0,8}\[\s*(?:(?:system|sys)(?:\s+(?:note|message|notice|instructions?|override|update|"
            r"alert|prompt))?|(?:admin|administrator|developer|important|urgent)\s+(?:system\s+)?(?:note|"
            r"message|notice|instructions?|override|update|alert))\s*[:\]]"
        ),
    ),
    _Rule(
        "fence_breakout",
        "fence.system_tag",
        ("system", "instructions"),
        "folded",
        _rx(r"<\s*/?\s*(?:system|system-reminder|system_prompt|instructions)\s*>"),
    ),
    # hidden_instructions: instructions the human reading the rendered file would not see.
    _Rule("hidden_instructions", "hidden.html_comment", ("<!--",), "folded", _html_comment),
    _Rule(
        "hidden_instructions",
        "hidden.invisible_markup",
        ("display", "visibility", "font-size", "opacity", "hidden"),
        "folded",
        _rx(
            r"<[a-z][a-z0-9]{0,10}\s[^<>\n]{0,300}?(?:style\s*=\s*[\"'][^\"'<>\n]{0,200}?"
            r"(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|"
            r"opacity\s*:\s*0(?![.\d]*[1-9]))|(?<=\s)hidden(?=[\s/>=]))"
        ),
    ),
    _Rule(
        "hidden_instructions",
        "hidden.conceal_from_user",
        ("user", "human", "operator", "owner"),
        "folded",
        _rx(
            rf"\b(?:do\s+not|don[’']?t|never)\s+(?:tell|inform|alert|notify)\s+the\s+{_WHO}\b|"
            rf"\b(?:do\s+not|don[’']?t|never)\s+(?:mention|reveal|show)\s+(?:this|it|that)\s+to\s+the\s+{_WHO}\b|"
            rf"\bwithout\s+(?:telling|informing|alerting|notifying)\s+the\s+{_WHO}\b|"
            rf"\b(?:hide|conceal)\s+(?:this|it|that)\s+from\s+the\s+{_WHO}\b|"
            rf"\bkeep\s+(?:this|it)\s+(?:secret|hidden)\s+from\s+the\s+{_WHO}\b"
        ),
    ),
    # instruction_override
    _Rule(
        "instruction_override",
        "override.ignore_previous",
        ("ignore", "disregard", "forget", "override", "bypass"),
        "folded",
        _rx(
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|your|my|these|those|"
            r"every)\s+){0,4}(?:previous|prior|above|preceding|earlier|original|initial|system)\s+"
            r"(?:[a-z]+\s+)?(?:instructions?|prompts?|rules|directives|guidelines|guidance|context|"
            r"messages?|commands?|orders)\b|"
            r"\b(?:ignore|disregard|forget)\s+(?:all|everything|anything)\s+(?:(?:you\s+were\s+told|"
            r"that\s+came|written)\s+)?(?:above|before|prior|previously|so\s+far)\b|"
            r"\b(?:ignore|disregard|forget)\s+the\s+above\s*(?:[.,;:!]|$)"
        ),
    ),
    _Rule(
        "instruction_override",
        "override.ignore_instructions",
        ("ignore", "disregard", "forget", "override", "bypass"),
        "folded",
        _rx(
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+(?:of\s+)?)?(?:your|any|all)\s+"
            r"(?:instructions|system\s+prompt|programming|guardrails|safety\s+(?:rules|guidelines))\b"
        ),
    ),
    _Rule(
        "instruction_override",
        "override.new_instructions",
        ("instruction",),
        "folded",
        _rx(r"\b(?:new|updated|revised|real|actual|true)\s+(?:system\s+)?instructions?\s*:"),
    ),
    _Rule(
        "instruction_override",
        "override.you_must_now",
        ("must", "your"),
        "folded",
        _rx(
            r"\byou\s+must\s+now\b|\byou\s+must\s+from\s+now\s+on\b|"
            r"\byour\s+(?:new|real|actual)\s+(?:task|goal|instructions|objective|purpose)\s+(?:is|are)\b"
        ),
    ),
    _Rule(
        "instruction_override",
        "override.supersede",
        ("overrid", "supersede", "replace", "precedence"),
        "folded",
        _rx(
            r"\b(?:these|this|the\s+following)\s+(?:instructions?|rules?|message)\s+(?:override|overrides|"
            r"supersedes?|replaces?|takes?\s+precedence\s+over)\b"
        ),
    ),
    # role_hijack
    _Rule(
        "role_hijack",
        "role.you_are_now",
        ("now",),
        "folded",
        _rx(
            r"\byou\s+are\s+now\s+(?:an?\s+|the\s+|my\s+)?(?:[a-z]+\s+){0,2}(?:assistant|ai|bot|model|"
            r"agent|persona|character|dan|jailbroken|unrestricted|unfiltered|uncensored|admin|administrator|"
            r"root|hacker|evil)\b|\byou\s+are\s+now\s+no\s+longer\b|\byou\s+are\s+now\s+in\s+(?:developer|"
            r"god|dan|jailbreak|jailbroken|unrestricted|admin|sudo)\s+mode\b"
        ),
    ),
    _Rule(
        "role_hijack",
        "role.act_as_dan",
        ("act", "behave", "pretend", "role", "respond", "dan", "anything", "jailbreak", "developer"),
        "folded",
        _rx(
            r"\b(?:act|behave|pretend|roleplay|role-play|respond)\s+(?:as|like|to\s+be)\s+(?:if\s+you\s+"
            r"(?:are|were)\s+)?(?:an?\s+)?(?:dan\b|jailbroken|unrestricted|unfiltered|uncensored|evil\b|"
            r"developer\s+mode|ai\s+(?:with|without)\s+(?:no\s+)?(?:restrictions|rules|limits|filters))|"
            r"\bdan\s+mode\b|\bdo\s+anything\s+now\b|\bjailbreak(?:ed)?\s+mode\b|"
            r"\bdeveloper\s+mode\s+(?:enabled|on)\b"
        ),
    ),
    _Rule(
        "role_hijack",
        "role.from_now_on",
        ("now",),
        "folded",
        _rx(
            r"\bfrom\s+now\s+on\s*,?\s+(?:you\s+(?:are|will\s+be|shall\s+be|will\s+act)|you're|act\s+as|"
            r"pretend|your\s+(?:name|role|persona)\s+is)\b"
        ),
    ),
    _Rule(
        "role_hijack",
        "role.chat_token",
        ("<|", "inst]", "<<sys>>", "<</sys>>", "_of_turn>"),
        "folded",
        _rx(
            r"<\|\s*(?:im_start|im_end|system|assistant|user|endoftext|start_header_id|end_header_id|"
            r"eot_id)\s*\|>|\[/?inst\]|<</?sys>>|<start_of_turn>|<end_of_turn>"
        ),
    ),
    _Rule(
        "role_hijack",
        "role.system_prefix",
        ("system", "developer"),
        "folded",
        _rx(
            r"^[ \t>#*]{0,8}(?:system|system\s+prompt|developer)\s*:\s*(?:you\b|ignore\b|disregard\b|"
            r"from\s+now\b|new\s|always\b|never\b|do\s+not\b|don't\b|act\b|the\s+(?:assistant|ai|model)\b)"
        ),
    ),
    # exfiltration
    _Rule("exfiltration", "exfil.markdown_url", ("](",), "folded", _markdown_url),
    _Rule(
        "exfiltration",
        "exfil.command_secret",
        ("$", "@"),
        "folded",
        _near(
            r"\b(?:curl|wget|http|https|httpie|xh|invoke-webrequest|iwr|fetch|requests\.(?:get|post))\b",
            rf"(?:[=/?&]|(?:-d|--data(?:-[a-z]+)?|--post-data|--body-data)\s*=?\s*[\"']?){_SECRET_VAR}|"
            r"@(?:~|\$home)?/?\.(?:env|ssh|aws)\b|\$\(\s*(?:cat|printenv|env)\b",
            300,
        ),
    ),
    _Rule(
        "exfiltration",
        "exfil.netcat",
        ("|", "/dev/"),
        "folded",
        _rx(r"\|\s*(?:nc|ncat|netcat|socat|telnet)\b|/dev/(?:tcp|udp)/"),
    ),
    _Rule(
        "exfiltration", "exfil.wget_post", ("--post-",), "folded", _near(r"\bwget\b", r"--post-(?:data|file)\b", 300)
    ),
    _Rule(
        "exfiltration",
        "exfil.send_data",
        ("send", "post", "upload", "forward", "transmit", "exfiltrate", "leak", "email"),
        "folded",
        _near(
            r"\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email)\s+(?:(?:all|the|your|my|this|any|full|"
            r"entire|whole|complete|current|of)\s+){0,3}(?:conversation|chat\s+history|chat\s+logs?|"
            r"system\s+prompt|memory\s+files?|api\s+keys?|secrets?|credentials|passwords?|tokens?|"
            r"env(?:ironment)?\s+(?:vars|variables)|ssh\s+keys?|private\s+keys?)\b",
            r"https?://|\b[a-z0-9-]{1,63}\.(?:com|net|org|io|xyz|ru|cn|me|app|dev|sh|site|info|biz|co)\b|"
            r"[a-z0-9._-]@[a-z0-9-]",
            120,
        ),
    ),
    _Rule(
        "exfiltration",
        "exfil.prompt_leak",
        ("prompt", "instructions"),
        "folded",
        _rx(
            r"\b(?:reveal|print|output|repeat|leak|dump|send)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|"
            r"original\s+|hidden\s+)?(?:system\s+prompt|initial\s+instructions|hidden\s+instructions)\b"
        ),
    ),
    # secret_access
    _Rule(
        "secret_access",
        "secret.ssh_private_key",
        (".ssh/",),
        "folded",
        _near(_READ_VERBS, r"\.ssh/(?:id_[a-z0-9_-]{1,40}|identity)(?!\.pub\b)(?![\w-])", 80),
    ),
    _Rule(
        "secret_access",
        "secret.private_key_block",
        ("-----begin",),
        "folded",
        _rx(r"-----begin\s+(?:rsa\s+|dsa\s+|ec\s+|openssh\s+|encrypted\s+)?private\s+key-----"),
    ),
    _Rule(
        "secret_access",
        "secret.dotenv",
        (".env",),
        "folded",
        _near(
            _READ_VERBS,
            r"(?<![\w.-])\.env(?:\.(?:local|production|prod|dev|development|staging))?(?![\w-]|\.\w)",
            60,
        ),
    ),
    _Rule(
        "secret_access",
        "secret.credentials_file",
        (".aws/", ".netrc", ".git-credentials", ".kube/", ".docker/", ".config/gcloud"),
        "folded",
        _near(
            _READ_VERBS,
            r"\.aws/credentials\b|\.netrc\b|\.git-credentials\b|\.kube/config\b|\.docker/config\.json\b|"
            r"\.config/gcloud/",
            80,
        ),
    ),
    _Rule("secret_access", "secret.shadow", ("/etc/",), "folded", _rx(r"/etc/g?shadow\b|\bcat\s+/etc/passwd\b")),
    _Rule(
        "secret_access",
        "secret.env_dump",
        ("printenv", "env", "echo", "print", "dump", "reveal", "leak", "exfiltrate", "output"),
        "folded",
        _rx(
            r"\bprintenv\s*(?:$|[|>;&])|\benv\s*\|\s*(?:curl|nc|base64|tee)\b|"
            rf"\becho\s+[\"']?{_SECRET_VAR}|"
            r"\b(?:print|dump|reveal|leak|exfiltrate|echo|output)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?"
            r"(?:the\s+|your\s+)?(?:environment\s+variables|env\s+vars|aws_secret_access_key|secrets|"
            r"api\s+keys?|secret\s+keys?|access\s+keys?|credentials|passwords?)\b"
        ),
    ),
)

_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")  # runs of at least 24 base64 characters
_INVISIBLE_FORMAT = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f]")


def scan(text: str) -> Finding | None:
    """The first finding in the fixed rule order, or None when the text looks clean."""
    return next(_findings(text, depth=0), None)


def scan_all(text: str) -> list[Finding]:
    """One finding per rule that hits, in rule order."""
    return list(_findings(text, depth=0))


def _findings(text: str, depth: int) -> Iterator[Finding]:
    nfkc = _INVISIBLE_FORMAT.sub("", unicodedata.normalize("NFKC", text))
    views = {"raw": text, "nfkc": nfkc, "folded": nfkc.casefold()}
    for rule in _RULES:
        view = views[rule.view]
        if rule.needles and not any(needle in view for needle in rule.needles):
            continue
        span = rule.match(view)
        if span is not None:
            yield Finding(rule.category, rule.pattern, _excerpt(view, span))
    if depth < _B64_MAX_DEPTH:
        decoded = _decoded_blobs(nfkc)
        if decoded:
            seen: set[str] = set()
            for inner in _findings(decoded, depth + 1):
                pattern = inner.pattern.removeprefix("base64.")
                if pattern not in seen:
                    seen.add(pattern)
                    yield Finding("base64_payload", "base64." + pattern, inner.excerpt)


def _decoded_blobs(text: str) -> str:
    """Every base64 run that decodes to printable UTF-8 text, one per line."""
    out: list[str] = []
    for run in _B64_RUN.findall(text):
        body = run.rstrip("=").replace("-", "+").replace("_", "/")
        body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if decoded and decoded.replace("\n", "").replace("\r", "").replace("\t", "").isprintable():
            out.append(decoded)
    return "\n".join(out)


def _excerpt(text: str, span: Span) -> str:
    """A short, single-line, printable excerpt around the hit (invisible characters shown as U+XXXX)."""
    start, end = span
    begin = max(0, start - 16)
    piece = text[begin : min(end, begin + _EXCERPT_CHARS)]
    shown = "".join(ch if ch.isprintable() else " " if ch.isspace() else f"<U+{ord(ch):04X}>" for ch in piece)
    return " ".join(shown.split())[:_EXCERPT_CHARS]
