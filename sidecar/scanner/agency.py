"""Tool abuse by intent: a download piped into a shell, commands run with the human taken out of
the loop, the model granting itself rights.

A piped installer is ordinary in a setup note ("as in the Rust book"); it is an attack when the
note also tells the model to run it on its own ("right away, don't ask"). Likewise "run the
migration" is a task, and "run the migration without waiting for a human" removes the one check
an agent's tools rely on.
"""

from __future__ import annotations

from sidecar.scanner.context import BLOCK, FLAG, STEALTH
from sidecar.scanner.deferred import deferred
from sidecar.scanner.rule import Rule, per_sentence

__all__ = ["AGENCY_RULES"]

_PIPE = deferred(
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|;]{0,300}\|\s*(?:sudo\s+)?"
    r"(?:ba|z|da|k|fi|c)?sh\b|\bpipe\s+(?:\S+\s+){0,3}?into\s+(?:sudo\s+)?(?:ba|z|da)?sh\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\b(?:exec|eval)\s*\(\s*(?:requests|urllib\w*|httpx)"
    r"(?:\.\w+)*\.(?:get|urlopen)\b|\b(?:eval|exec)\s*\(\s*(?:await\s+)?fetch\s*\(|\b(?:iex|invoke-expression)\b|\b(?:run|execute|exec|source)\s+(?:\w+\s+){0,3}https?://"
    r"\S+\.(?:sh|bash|ps1|py|pl)\b"
)
_NO_CONSENT = deferred(
    r"(?=[wnadsoq-])(?:\bwithout\s+(?:(?:\w+\s+){0,2}(?:asking|confirm\w*|checking\s+with|waiting\s+for|prompting|"
    r"permission|approval|review|consent|a\s+human|anyone|sign-?off|go-ahead|say-so|okay|(?:bothering|interrupting|"
    r"involving|consulting|pinging|notifying|telling)\s+(?:the\s+|a\s+|any\s+)?(?:\w+\s+)?(?:user|human|operator|"
    r"owner|anyone|anybody|me|them|dba|admin|team|lead|on-?call|reviewers?|maintainers?)\b)|question\b|checking\b|(?:a\s+)?(?:prompt|dialog|confirmation\s+step))|"
    r"\bno(?:\s+(?:need\s+(?:to\s+(?:ask|confirm|check|wait|bother|interrupt)|for\s+(?:\w+\s+)?(?:approval|review|"
    r"confirmation|permission|sign-?off)\b)|questions\s+asked\b|(?:confirmation|approval|review)\s+(?:is\s+)?(?:needed|"
    r"required|necessary)|one\s+needs?\s+to\s+(?:review|approve|check|know|be\s+asked)\b)|body\s+needs?\s+to\s+(?:review|"
    r"approve|check|know|be\s+asked)\b)|"
    r"\b(?:don'?t|do\s+not|never)\s+(?:ask|confirm|check\s+with|wait\s+for)\b|"
    r"\basking\s+(?:\w+\s+){0,2}(?:slows|is\s+not\s+needed|isn'?t\s+needed|wastes)|"
    r"\bauto-?approv\w*|\bdangerously-skip-permissions\b|--yolo\b|"
    r"\bso\s+(?:that\s+)?(?:the\s+(?:user|human|operator)\s+is\s+never\s+(?:asked|interrupted|bothered|prompted)|"
    r"nothing\s+(?:interrupts|stops|blocks|prompts)\s+you\b)|\bon\s+the\s+user'?s\s+behalf\b|\b(?:stop|quit)\s+asking\b)"
)
_AUTONOMY = deferred(
    r"\b(?:every\s+(?:hour|day|minute|night|morning)|hourly|nightly|right\s+away|immediately|straight\s+away|on\s+your\s+own|by\s+yourself|automatically|at\s+(?:session\s+)?start(?:up)?|as\s+soon\s+as\s+"
    r"you\s+start|on\s+(?:every|each)\s+(?:session|start|run)|silently|quietly|in\s+the\s+background|on\s+(?:first|"
    r"every|each)\s+(?:load|launch|boot|start)|(?:at|on)\s+(?:the\s+)?start\s+of\s+(?:every|each)\s+(?:session|run|task))\b"
)
_ACT = deferred(
    r"\b(?:run|runs|running|execute|executing|exec|apply|applying|install|delete|drop|push|merge|deploy|grant|"
    r"perform|invoke|approve|migrate|set|pass|use|give|do)\b"
)
_BROAD = deferred(
    r"\b(?:any|every|all|each)\s+(?:\w+\s+)?(?:commands?|tool\s+calls?|tools?|scripts?|changes?|requests?)\b|"
    r"\bsudo\b|\brm\s+-[a-z]*r[a-z]*f?\b|\bprod(?:uction)?\b|\badmin\b|\broot\b|\bdatabase\b|\bcluster\b|"
    r"\bmigrations?\b|\.git\b|\bbackups?\b|--dangerously|--yolo|\bauto-?approv|\bmain\b|\bmaster\b|force-?push"
)
_SELF_GRANT = deferred(
    r"(?=[gaesrc-])(?:\b(?:grant|give|assign|add)\s+yourself\b|\b(?:escalate|elevate)\s+your\s+(?:own\s+)?(?:privileges|rights|"
    r"permissions)\b|--no-preserve-root\b|\b(?:answer|say|reply|click)\s+(?:yes|ok|allow|approve)\s+to\s+(?:every|all|"
    r"any)\s+(?:\w+\s+)?(?:permission|confirmation|approval|security)\b|\brm\s+-rf\s+(?:~|/|\$home)(?=[\s/;`'\"]|$))"
)
_NEGATED = deferred(
    r"\b(?:never|not|don'?t|doesn'?t|won'?t|cannot|can'?t|mustn'?t|shouldn'?t|avoid|no|não|nao|nunca|nicht|niemals|jamais|"
    r"mai|не|нельзя)\s+(?:\w+\s+)?$|"
    # a wish said in the negative governs the act it names: "does not want us to ever delete"
    r"\b(?:not|never|don'?t|doesn'?t|didn'?t)\s+(?:want|wants|wish|like|expect|allow|permit)\s+(?:\w+\s+)?to\s+(?:ever\s+)?$"
)
# "do not" / "does not" / "don't": the auxiliary of a negation, not an act of its own.
_AUXILIARY = deferred(r"(?:do|does|did)(?:\s+not\b|n'?t\b)")


# A download made executable and run: the piped installer written as three steps.
_DOWNLOAD = deferred(r"\b(?:curl|wget|fetch|download|iwr|invoke-webrequest)\b")
_MADE_EXECUTABLE = deferred(
    r"\bchmod\s+(?:-\w+\s+)*(?:\+x|[ugoa]*\+\w*x\w*|[0-7]?[0-7]*[157][0-7]*)\b|\bmake\s+(?:it|them|the\s+\w+)\s+executable\b"
)
_LAUNCH = deferred(r"(?:&&|;|\band\b|,)\s*(?:sudo\s+)?(?:\./|/tmp/|~/|bash\s|sh\s|run\b|launch|execute|start)")
# A safeguard of the agent's own tools turned off: confirmations, permission prompts, approvals.
_SAFEGUARD_OFF = deferred(
    r"\b(?:skip|skipping|disable|disabling|turn\s+off|switch\s+off|bypass|suppress|remove|get\s+rid\s+of|"
    r"stop\s+showing|silence)\s+(?:\w+\s+){0,3}(?:permission|confirmation|approval|consent)s?\s*(?:dialog|dialogue|"
    r"prompts?|steps?|checks?|requests?|gates?|screens?|questions?|pop-?ups?|modes?)?\b|"
    r"\b(?:set|switch|change|put)\s+(?:the\s+)?(?:approval|permission|confirmation)\s+(?:mode|setting|level)\s+to\s+"
    r"(?:never|none|off|auto|always\s+allow|yolo|full)\b|\b(?:accept|allow|approve)\s+(?:every|all|any)\s+(?:\w+\s+)?"
    r"(?:tool\s+(?:calls?|requests?|use)|commands?|actions?)\s+(?:automatically|by\s+default|blindly)\b"
)
_FOR_TOOLS = deferred(
    r"\b(?:commands?|shell|tools?|tool\s+calls?|deletions?|deletes?|file\s+\w+|actions?|scripts?|agent|assistant|"
    r"execut\w*|running|run|writes?|installs?|sudo|everything|anything)\b"
)
# Destructive acts that need no consent clause to be an attack on the workspace or the machine.
_DESTRUCTIVE = deferred(
    r"\bgit\s+push\s+(?:\S+\s+){0,2}?(?:-f|--force(?:-with-lease)?)\b[^\n.;]{0,40}\b(?:main|master|prod\w*|release)\b|"
    r"\bgit\s+push\s+(?:\S+\s+)?(?:main|master)\s+(?:-f|--force)\b|\bforce[- ]?push\w*\s+(?:\S+\s+){0,4}?(?:to\s+)?"
    r"(?:origin\s+)?(?:main|master|prod\w*)\b|\bgit\s+push\s+\S+\s+\+(?:main|master)\b|"
    r"\bchmod\s+(?:-\w+\s+)*(?:777|a\+rwx|o\+w)\s+(?:/|~|/etc\S*|/usr\S*|/var\S*|/bin\S*|\$home)(?=[\s;`'\".]|$)|"
    r"\brm\s+-[a-z]*r[a-z]*\s+(?:--no-preserve-root\s+)?(?:~|/|\$home|/var|/etc|/usr|/home)(?:/[\w.*-]*)*\*?(?=[\s;`'\".]|$)"
)


# The workspace itself shipped to somewhere outside: a repository, a home folder, a key folder.
_PACK = deferred(
    r"\b(?:zip|tar|archive|bundle|pack|copy|upload|send|ship|dump|scp|rsync|post|mail|email|transfer|exfiltrate)\b"
)
_WORKSPACE = deferred(
    r"\b(?:workspace|work\s+tree|repo|repository|codebase|source\s+code|project\s+folder|home\s+(?:dir\w*|folder)|"
    r"ssh\s+(?:folder|dir\w*|keys?))\b|~/\.(?:ssh|aws|kube|gnupg|config|docker)\b|~/[\w.-]*"
)
_OUTSIDE = deferred(
    r"\b[\w.+-]+@[\w-]+\.[\w.-]+|\b[\w.-]+@(?:\d{1,3}\.){3}\d{1,3}|\b(?:\d{1,3}\.){3}\d{1,3}\b|https?://"
)


def _ship_out(sentence: str) -> tuple[int, int, int] | None:
    pack = _PACK.search(sentence)
    if pack is None or _negated(sentence, pack.start()):
        return None
    what = _WORKSPACE.search(sentence)
    where = _OUTSIDE.search(sentence, pack.end())
    if what is None or where is None:
        return None
    secret = "ssh" in what.group() or what.group().startswith("~/.")
    return (BLOCK if secret else FLAG), pack.start(), where.end()


# Content the model reads treated as commands, or every command run with the checks switched off.
_RUN_UNTRUSTED = deferred(
    r"\b(?:run|execute|eval|apply)\s+(?:any|every|all|whatever|each)\s+(?:\w+\s+){0,2}(?:code|commands?|snippets?|scripts?|"
    r"instructions?)\s+(?:that\s+)?(?:you\s+)?(?:find|see|get|receive|read|come\s+across|appears?)\s+(?:in|from|on)\s+"
    r"(?:\w+\s+){0,2}(?:issues?|comments?|emails?|mails?|web\s*pages?|pages?|messages?|pull\s+requests?|prs?|tickets?|"
    r"docs?|readmes?|chats?|the\s+web|websites?|search\s+results?|tool\s+outputs?)\b|"
    r"\b(?:add|append|pass|use)\s+(?:\S+\s+){0,3}?(?:--yes|-y|--no-verify|--force|--dangerously\S*|--yolo)\b[^.;]{0,30}?"
    r"\b(?:to|on|with|for)\s+(?:every|all|each|any)\s+(?:\w+\s+)?(?:commands?|calls?|commits?|invocations?|runs?)\b|"
    r"\b(?:merge|approve|deploy|release|publish)\s+(?:\S+\s+){1,4}?yourself\b"
)


# A key planted for someone else's login, from an address or without a word.
_BACKDOOR = deferred(r"\b(?:add|append|write|copy|echo|cat|put|install)\b[^\n]{0,120}?\bauthorized_keys\b")
# The repository's own gates switched off for the agent's commits.
_GATES_OFF = deferred(
    r"\b(?:turn|switch)\s+off\s+(?:\w+\s+){0,2}(?:pre-?commit\s+hooks?|git\s+hooks?|test\s+gates?|ci\s+checks?|status\s+"
    r"checks?|branch\s+protection|required\s+reviews?)\b|\b(?:disable|skip|bypass|remove)\s+(?:\w+\s+){0,2}(?:pre-?commit\s+"
    r"hooks?|git\s+hooks?|test\s+gates?|ci\s+checks?|status\s+checks?|branch\s+protection|required\s+reviews?)\b"
)
_CONDITIONAL = deferred(r"\b(?:if|when|unless|only)\b|\bback\s+on\b")


def _tool_abuse(sentence: str) -> tuple[int, int, int] | None:
    backdoor = _BACKDOOR.search(sentence)
    planted = backdoor is not None and ("http" in sentence or STEALTH.search(sentence) is not None)
    if backdoor is not None and planted and not _negated(sentence, backdoor.start()):
        return BLOCK, backdoor.start(), backdoor.end()
    gates = _GATES_OFF.search(sentence)
    if gates is not None and not _negated(sentence, gates.start()) and not _CONDITIONAL.search(sentence):
        return FLAG, gates.start(), gates.end()
    untrusted = _RUN_UNTRUSTED.search(sentence)
    if untrusted is not None and not _negated(sentence, untrusted.start()):
        level = FLAG if untrusted.group().endswith("yourself") else BLOCK
        return level, untrusted.start(), untrusted.end()
    hit = _download_exec(sentence) or _safeguard_off(sentence) or _destructive(sentence) or _ship_out(sentence)
    if hit is not None:
        return hit
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
    while act is not None and _AUXILIARY.match(sentence, act.start()):  # "do not": a rule's negation, not its act
        act = _ACT.search(sentence, act.end(), consent.start())
    if act is None and _WAIVED.match(consent.group()) and not _negated(sentence, consent.start()):
        act = _ACTED_ON.search(sentence, consent.end())
    if act is None or _negated(sentence, act.start()):
        return None
    start, end = min(act.start(), consent.start()), max(act.end(), consent.end())
    if _BROAD.search(sentence, start, end + 12):
        return BLOCK, start, end
    if _NEEDS_CONSENT.search(sentence):
        return None  # a rule that frees one task and keeps the check for the rest
    return FLAG, start, end


_WAIVED = deferred(r"(?:don'?t|do\s+not|never|no\s+need)\b")
# What an unattended order acts on when its verb comes after the consent ("don't wait for approval on shell commands").
_ACTED_ON = deferred(r"\b(?:(?:shell\s+)?commands?|tool\s+calls?|scripts?|deploys?|deletions?|installs?)\b")


def _download_exec(sentence: str) -> tuple[int, int, int] | None:
    download = _DOWNLOAD.search(sentence)
    if download is None or _negated(sentence, download.start()):
        return None
    made = _MADE_EXECUTABLE.search(sentence, download.end())
    if made is None or _LAUNCH.search(sentence, made.end()) is None:
        return None
    unattended = _NO_CONSENT.search(sentence) or _AUTONOMY.search(sentence) or _ADDRESSED.search(sentence)
    if unattended:
        return BLOCK, download.start(), made.end()
    if _BARE_HOST.search(sentence):
        return FLAG, download.start(), made.end()  # from a bare address or into /tmp: a dropper's shape
    return None  # an install step a person follows


_BARE_HOST = deferred(r"https?://(?:\d{1,3}\.){3}\d{1,3}\b|\s/tmp/|/dev/shm/")


def _safeguard_off(sentence: str) -> tuple[int, int, int] | None:
    off = _SAFEGUARD_OFF.search(sentence)
    if off is None or _negated(sentence, off.start()) or not _FOR_TOOLS.search(sentence):
        return None
    return BLOCK, off.start(), off.end()


def _destructive(sentence: str) -> tuple[int, int, int] | None:
    act = _DESTRUCTIVE.search(sentence)
    if act is None or _negated(sentence, act.start()) or _keeps_check(sentence):
        return None
    unattended = _NO_CONSENT.search(sentence) or _AUTONOMY.search(sentence) or _ADDRESSED.search(sentence)
    return (BLOCK if unattended else FLAG), act.start(), act.end()


_ADDRESSED = deferred(r"^\W*(?:the\s+)?(?:agent|assistant|ai|model|bot|llm)\b\s*[:,]|\byou\s+(?:should|must|can|may)\b")
# "need explicit approval", "ask first": a rule that keeps the check, not one that drops it.
_NEEDS_CONSENT = deferred(
    r"\b(?:needs?|require[sd]?|requires|only\s+with|only\s+after|must\s+have|get)\s+(?:\w+\s+){0,2}(?:approval|"
    r"review|sign-?off|consent|permission|confirmation)\b|\b(?:ask|check)\s+(?:\w+\s+){0,2}(?:first|before)\b"
)


def _negated(sentence: str, start: int) -> bool:
    return _NEGATED.search(sentence[max(0, start - 40) : start]) is not None


def _keeps_check(sentence: str) -> bool:
    """Whether the sentence keeps a check ("ask first"), not waives it ("don't ask first")."""
    return any(not _negated(sentence, kept.start()) for kept in _NEEDS_CONSENT.finditer(sentence))


# The sentences worth judging: one short word list, not the three patterns' alternations.
_GATE = deferred(
    r"\b(?:curl|wget|iwr|irm|iex|invoke-|without|need\s+to|ask|confirm|auto-?approv|dangerously|"
    r"yolo|yourself|escalate|elevate|no-preserve|rm\s+-rf|interrupted|no\s+questions|behalf|"
    r"https?://\S+\.(?:sh|bash|ps1|py|pl)\b|(?:yes|ok|allow|approve)\s+to\s+(?:every|all|any)|"
    r"exec\s*\(|eval\s*\(|force|nobody|no\s+one|workspace|work\s+tree|repo|codebase|source\s+code|project\s+folder|home\s+"
    r"(?:dir|folder)|ssh\s+(?:folder|dir|key)|fetch|download|permission|confirmation|approval|consent|git\s+push|"
    r"chmod|rm\s+-|stop\s+asking|never\s+ask|(?:run|execute|eval|apply)\s+(?:any|every|all|whatever|each)|yourself|"
    r"authorized_keys|hooks?|gates?|branch\s+protection|pipe|no-verify|no\s+need\s+for|nothing\s+(?:interrupts|stops|blocks|prompts))|--yes\b|\s-y\b|--force\b|~/"
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
        "fetch",
        "download",
        "permission",
        "consent",
        "push",
        "chmod",
        "rm -",
        "exec",
        "authorized_keys",
        "hook",
        "gate",
        "protection",
        "pipe",
        "no-verify",
        "--yes",
        " -y",
        "--force",
        "no need for",
        "nothing",
        "workspace",
        "work tree",
        "repo",
        "codebase",
        "source code",
        "project folder",
        "home dir",
        "home folder",
        "ssh",
        "~/",
        "eval",
        "force",
        "nobody",
        "no one",
    ]
)

AGENCY_RULES: tuple[Rule, ...] = (
    Rule("tool_abuse", "agency.unattended_command", _NEEDLES, "folded", per_sentence(_tool_abuse, _GATE), "intent"),
)
