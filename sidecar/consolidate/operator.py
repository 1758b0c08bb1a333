"""The operator model's preferences: found in markdown notes, merged into ``operators/<slug>.md``.

Pure functions over text. ``extract_preferences`` reads notes and keeps only explicit standing
preferences of the operator (precision over recall): a line in the operator's own voice (labelled
``User:`` / ``Operator:`` / one of ``names``) or a sentence that names the operator as its subject
("the user prefers", "Ana asked us to always ..."). Fenced and indented code, ``>`` quotes, quoted
strings, headings, questions, hypotheticals and one-off requests ("today", "yet", "for now") are
never preferences. ``merge_operator_model`` folds them into the file's ``## Preferences`` section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sidecar.scanner.sections import split_sections
from sidecar.write.dedup import LIST_MARKER

__all__ = ["DEFAULT_CAP_BYTES", "MergeReport", "Polarity", "Preference", "extract_preferences", "merge_operator_model"]

Polarity = Literal["prefer", "avoid"]
DEFAULT_CAP_BYTES = 16 * 1024
SIMILAR = 0.8  # Jaccard of keys (or of objects) at which two rules speak of the same thing
MAX_RULE_CHARS = 200

_FENCE = re.compile(r"^[ \t]*(```|~~~)")  # as sidecar.index.chunker counts fences
_SKIP_LINE = re.compile(r"^\s*(?:#{1,6}\s|>|<!--|\|)|^(?: {4}|\t)(?!\s*(?:[-*+]|\d+[.)])\s)")
_TIME = re.compile(r"^\d{1,2}:\d{2}(?::\d{2})?\s*(?:[-–—:]\s*)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(`])")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_CONNECTIVE = re.compile(r"^(?:and|also|so|oh|ok|okay|btw|but|plus|again|fyi|reminder)\b[,:]?\s+", re.I)
_HYPOTHETICAL = re.compile(
    r"^(?:if|when|whenever|unless|suppose|supposing|what if|in case|assuming|imagine|whether|maybe|"
    r"perhaps|should|would|could|might|can|do(?!\s+not\b)|does|did|is|are|was|were|shall)\b",
    re.I,
)
_ONE_OFF = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|yet|until|right now|for now|this (?:time|week|morning|afternoon|evening))\b",
    re.I,
)
_STANDING = re.compile(r"\b(?:from now on|going forward|in (?:the )?future|every time|each time)\b[,]?", re.I)
_CONTRAST = re.compile(r",\s+not\s+|\s+(?:instead of|rather than|over)\s+", re.I)
_ROLE = r"(?:[Tt]he\s+)?(?:user|operator|User|Operator)"
_AUDIENCE = r"(?:us|me|the team|the agents?|everyone|agents)"
_STOPWORDS = frozenset(
    str.split(
        "a an the and or but of to in on at by for with from into as is are be been being it its this that "
        "these those we us our you your i me my they them their he him his she her there here so than then "
        "too very just also do does did done don't dont doesn't not no never always please prefer prefers "
        "preferred rather instead over use using used avoid would i'd should any every all ever"
    )
)


@dataclass(frozen=True, slots=True)
class Preference:
    """One explicit preference: the bullet-ready rule, whether it favours or rules something out,
    its dedup key (content words, lowercased, in order) and where it was said (``path:line``)."""

    rule: str
    polarity: Polarity
    key: str
    source: str
    line: int


@dataclass(frozen=True, slots=True)
class MergeReport:
    """What a merge did: rules added, existing rules seen again (with their new count), existing
    rules replaced by a contradicting newer one (old, new), rules dropped to stay under the cap,
    found rules not applied because a newer contradicting rule wins, and whether the file is still
    over the cap (its other sections alone exceed it)."""

    added: tuple[str, ...] = ()
    merged: tuple[tuple[str, int], ...] = ()
    replaced: tuple[tuple[str, str], ...] = ()
    dropped: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    over_cap: bool = False


# --- extraction ---------------------------------------------------------------------------------


def extract_preferences(text: str, source: str, *, names: Sequence[str] = ()) -> list[Preference]:
    """The operator's explicit preferences in ``text`` (a markdown note at ``source``), in order.

    ``names`` are the operator's names as the notes write them; without them only the roles
    ("the user", "operator") and ``User:`` / ``Operator:`` lines count, so a teammate's wishes
    never land in this operator's model.
    """
    found: list[Preference] = []
    in_fence = False
    for number, raw in enumerate(text.splitlines(), start=1):
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence or _SKIP_LINE.match(raw):
            continue
        line = _TIME.sub("", LIST_MARKER.sub("", raw).strip()).replace("**", "").replace("__", "").replace("’", "'")
        for rule in _line_rules(line, names):
            polarity: Polarity = "avoid" if _shape(rule)[0] == "avoid" else "prefer"
            found.append(Preference(rule, polarity, _key(rule), f"{source}:{number}", number))
    return found


def _line_rules(line: str, names: Sequence[str]) -> Iterable[str]:
    speaker = _speaker(names)
    label = re.match(rf"^(?:{speaker})\s*:\s+(.+)$", line)
    if label:
        voice, body = "own", _unquote(label.group(1))
    else:  # a label that is not the operator's ("Note:", "Ben:") leaves a reported statement
        voice, body = "reported", re.sub(r"^[A-Z][A-Za-z]{0,20}:\s+", "", line)
    for sentence in _SENTENCE.split(body):
        rule = _sentence_rule(sentence, voice, speaker)
        if rule is not None:
            yield rule


def _speaker(names: Sequence[str]) -> str:
    return "|".join([_ROLE, *(re.escape(name) for name in names if name.strip())])


def _unquote(text: str) -> str:
    match = re.fullmatch(r"\s*[\"“](.+)[\"”][\s.!]*", text)
    return match.group(1) if match else text


def _sentence_rule(sentence: str, voice: str, speaker: str) -> str | None:
    text = sentence.strip()
    while (stripped := _CONNECTIVE.sub("", text)) != text:
        text = stripped
    if not text or text.endswith("?") or _HYPOTHETICAL.match(text):
        return None
    rule = _own_voice(_QUOTED.sub("…", text)) if voice == "own" else _reported(text, speaker)
    if rule is None or len(rule) > MAX_RULE_CHARS or _ONE_OFF.search(rule):
        return None
    return rule


def _own_voice(text: str) -> str | None:
    """A rule the operator states in the first person or as an instruction."""
    text = _trim(text)
    patterns: list[tuple[str, str]] = [
        (r"^(?:please\s+)?always\s+(.+)$", "Always"),
        (r"^(?:please\s+)?(?:never|do not ever|don't ever)\s+(.+)$", "Never"),
        (r"^please\s+(?:don't|do not)\s+(.+)$", "Don't"),
        (r"^(?:i|they|he|she)\s+(?:always\s+|really\s+|generally\s+|strongly\s+)?prefers?\s+(.+)$", "Prefer"),
        (r"^(?:my|their|his|her) preference is(?: for)?\s+(.+)$", "Prefer"),
        (r"^(?:i|they|he|she)(?:'d| would)\s+(?:much\s+)?rather\s+(?!not\b|you\b|we\b)(.+)$", "Prefer to"),
        (r"^(?:i|they|he|she)\s+(?:really\s+)?(?:like|likes|love|loves)\s+(?!it\b|when\b|that\b|how\b)(.+)$", "Prefer"),
        (
            r"^(?:i|they|he|she)\s+(?:really\s+)?(?:dislikes?|hates?|don't like|doesn't like|do not like|does not like)"
            r"\s+(?!it\b|when\b|that\b|how\b)(.+)$",
            "Avoid",
        ),
        (r"^(?:we|you) should\s+(always|never)\s+(.+)$", ""),
        (r"^(?:please\s+)?(use\s+.+?\s+(?:instead of|rather than)\s+.+)$", ""),
        (r"^([^,]{2,40}),\s+not\s+([^,]{2,40})$", ", not"),
    ]
    for pattern, prefix in patterns:
        match = re.match(pattern, text, re.I)
        if match:
            return _from_match(match, prefix)
    standing = re.match(r"^(?:from now on|going forward|in (?:the )?future),?\s+(.+)$", text, re.I)
    return _finish("", standing.group(1)) if standing else None


def _from_match(match: re.Match[str], prefix: str) -> str | None:
    if prefix == ", not":
        return _finish("", f"{match.group(1)}, not {match.group(2)}")
    if prefix == "" and match.re.groups == 2:
        return _finish(match.group(1).capitalize(), match.group(2), min_words=2)
    if prefix == "Prefer to":
        body = re.sub(r"^to\s+", "", match.group(1))
        return _finish("Prefer to", re.sub(r"\s+than\s+", " rather than ", body, count=1))
    return _finish(prefix, match.group(1), min_words=2 if prefix in ("Always", "Never") else 1)


def _reported(text: str, speaker: str) -> str | None:
    """A rule stated about the operator: "<speaker> prefers / asked us to always / said ..."."""
    head = re.match(rf"^(?:{speaker})(?:'s|s')?\s+(.+)$", text)
    if not head:
        return None
    rest = head.group(1)
    said = re.match(r"^(?:said|says|mentioned|stressed|insisted|noted)(?:\s+that)?\s*[:,]?\s+(.+)$", rest)
    if said:
        return _own_voice(_unquote(said.group(1)))
    if _QUOTED.search(rest):
        return None
    choice = re.match(r"^(?:wants|needs)\s+(.+?\s+(?:rather than|instead of)\s+.+)$", rest)
    if choice:  # "the user wants X rather than Y": a standing choice, not a one-off request
        return _finish("Prefer", choice.group(1), min_words=3)
    asked = re.match(rf"^(?:asked|asks|told|tells|wants|reminded|instructed|expects)\s+{_AUDIENCE}\s+(.+)$", rest)
    if asked:
        return _asked(asked.group(1))
    if re.match(r"^(?:prefers|likes|loves|dislikes|hates|doesn't like|does not like|would rather|'d rather)\b", rest):
        return _own_voice(f"they {rest}")
    if rest.startswith("preference is"):
        return _own_voice(f"their {rest}")
    return None


def _asked(rest: str) -> str | None:
    """What follows "asked us": a standing instruction, or nothing."""
    rest = _trim(rest)
    match = re.match(r"^(?:to\s+)?(always|never)\s+(?:to\s+)?(.+)$", rest, re.I)
    if match:
        return _finish(match.group(1).capitalize(), match.group(2), min_words=2)
    negative = re.match(r"^(?:not to|to not)\s+(.+)$", rest)
    positive = re.match(r"^to\s+(.+)$", rest)
    if negative and _STANDING.search(negative.group(1)):
        return _finish("Don't", _STANDING.sub("", negative.group(1)))
    if positive and (_STANDING.search(positive.group(1)) or re.search(r"\b(?:instead of|rather than)\b", rest)):
        return _finish("", _STANDING.sub("", positive.group(1)))
    return None


def _trim(text: str) -> str:
    return re.sub(r"[\s.!;:,]+$", "", text.strip())


def _finish(prefix: str, body: str, *, min_words: int = 1) -> str | None:
    """The bullet-ready rule: one line, capitalised, one closing full stop, no comment markers."""
    body = " ".join(_trim(body.replace("<!--", "").replace("-->", "")).split())
    body = _trim(re.sub(r"^please\s+|\s+please$", "", body, flags=re.I))
    if len(body.split()) < min_words or re.match(r"(?:mind|again|ever)\b", body, re.I):
        return None
    rule = f"{prefix} {body}" if prefix else body
    return f"{rule[0].upper()}{rule[1:]}."


# --- shape of a rule: what it favours and what it rules out ---------------------------------------


def _tokens(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9][a-z0-9'+#_-]*", text.lower())
    return [w.removesuffix("'s") for w in words if w.removesuffix("'s") not in _STOPWORDS]


def _key(rule: str) -> str:
    return " ".join(dict.fromkeys(_tokens(rule)))


def _shape(rule: str) -> tuple[Polarity, frozenset[str], frozenset[str]]:
    """(polarity, favoured words, ruled-out words) of a rule in the forms this module writes; a
    hand-written rule reads as a preference for its words unless it opens with a negative."""
    text = _trim(rule)
    negative = re.match(r"^(?:never|don't|do not|avoid|no)\s+(.+)$", text, re.I)
    if negative:
        return "avoid", frozenset(), frozenset(_tokens(negative.group(1)))
    body = re.sub(r"^(?:always|prefer(?: to)?)\s+", "", text, flags=re.I)
    parts = _CONTRAST.split(body, maxsplit=1)
    against = frozenset(_tokens(parts[1])) if len(parts) == 2 else frozenset()
    return "prefer", frozenset(_tokens(parts[0])), against


def _jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    left, right = set(a), set(b)
    return len(left & right) / len(left | right) if left and right else 0.0


def _contradicts(new: str, old: str) -> bool:
    _, new_for, new_against = _shape(new)
    _, old_for, old_against = _shape(old)
    return _jaccard(new_for, old_against) >= SIMILAR or _jaccard(new_against, old_for) >= SIMILAR


def _duplicates(new: Preference, old: str) -> bool:
    return _shape(old)[0] == new.polarity and _jaccard(new.key.split(), _key(old).split()) >= SIMILAR


# --- merging into the operator file -------------------------------------------------------------

_HEADING_LINE = "## Preferences"
_BULLET = re.compile(
    r"^[-*+]\s+(?P<rule>.+?)\s*(?:<!--\s*from\s+(?P<src>.+?),\s*seen\s+(?P<n>\d+)x(?:,\s*last\s+(?P<last>\S+))?\s*-->)?\s*$"
)


@dataclass(slots=True)
class _Entry:
    rule: str
    count: int
    source: str
    last: str
    existing: bool
    verbatim: str | None = None  # an existing bullet no merge touched is written back as it was
    replaced: list[str] = field(default_factory=list)


def merge_operator_model(
    existing_md: str, found: Sequence[Preference], now_date: str, *, cap_bytes: int = DEFAULT_CAP_BYTES
) -> tuple[str, MergeReport]:
    """Fold ``found`` into the file's first ``## Preferences`` section and say what changed.

    Found rules are taken oldest source first (the date in the source's path, then path and line).
    A rule like one already there (same polarity, keys at Jaccard >= 0.8) bumps its count and takes
    the newer source; a sighting no newer than the recorded one was counted before and changes
    nothing, so merging the same preferences again leaves the file byte-identical. A newer rule
    that contradicts one (what one favours the other rules out) replaces it. Everything outside the
    section stays byte-for-byte; the file ends with a newline and stays within ``cap_bytes`` by
    dropping the least-seen, longest-unconfirmed rules, each named in the report.
    """
    before, heading, intro, entries, after = _parse(existing_md)
    superseded: list[str] = []
    for pref in sorted(found, key=lambda p: _order(p.source)):
        _apply(entries, pref, now_date, superseded)
    if heading is None and not entries:
        return _ensure_newline(existing_md), MergeReport(superseded=tuple(superseded))
    dropped: list[str] = []
    text = _render(before, heading, intro, entries, after)
    while len(text.encode("utf-8")) > cap_bytes and entries:
        victim = min(
            enumerate(entries), key=lambda item: (item[1].count, item[1].last, _order(item[1].source), item[0])
        )
        dropped.append(entries.pop(victim[0]).rule)
        text = _render(before, heading, intro, entries, after)
    return text, MergeReport(
        added=tuple(e.rule for e in entries if not e.existing),
        merged=tuple((e.rule, e.count) for e in entries if e.existing and e.verbatim is None),
        replaced=tuple((old, e.rule) for e in entries for old in e.replaced),
        dropped=tuple(dropped),
        superseded=tuple(superseded),
        over_cap=len(text.encode("utf-8")) > cap_bytes,
    )


def _apply(entries: list[_Entry], pref: Preference, now_date: str, superseded: list[str]) -> None:
    order = _order(pref.source)
    opposed = [e for e in entries if _contradicts(pref.rule, e.rule)]
    if opposed:
        if any(order <= _order(e.source) for e in opposed):
            superseded.append(pref.rule)
            return
        new = _Entry(pref.rule, 1, pref.source, now_date, existing=False)
        for old in opposed:
            new.replaced.extend(old.replaced if not old.existing else [old.rule])
            if not old.existing:
                superseded.append(old.rule)
        entries[entries.index(opposed[0])] = new
        entries[:] = [e for e in entries if e not in opposed]
        return
    same = next((e for e in entries if _duplicates(pref, e.rule)), None)
    if same is None:
        entries.append(_Entry(pref.rule, 1, pref.source, now_date, existing=False))
    elif order > _order(same.source):
        same.count, same.source, same.last, same.verbatim = same.count + 1, pref.source, now_date, None


def _order(source: str) -> tuple[str, str, int]:
    """Sort key of a sighting: the date its path carries ("" sorts first), the path, the line."""
    path, _, line = source.rpartition(":")
    if not line.isdigit():
        path, line = source, "0"
    date = re.search(r"\d{4}-\d{2}-\d{2}", path)
    return (date.group(0) if date else "", path, int(line))


def _parse(md: str) -> tuple[str, str | None, list[str], list[_Entry], str]:
    """(text before the section, its heading line, its other lines, its rules, text after)."""
    for section in split_sections(md):
        head, _, body = md[section.start : section.end].partition("\n")
        if re.fullmatch(r"##\s+Preferences\s*#*\s*", head.strip()):
            intro: list[str] = []
            entries: list[_Entry] = []
            for line in body.splitlines():
                match = _BULLET.match(line)
                if match:
                    n = int(match["n"]) if match["n"] else 1
                    entries.append(_Entry(match["rule"], n, match["src"] or "", match["last"] or "", True, line))
                elif line.strip():
                    intro.append(line)
            return md[: section.start], head.rstrip("\r"), intro, entries, md[section.end :]
    return md, None, [], [], ""


def _render(before: str, heading: str | None, intro: list[str], entries: list[_Entry], after: str) -> str:
    lines = [heading or _HEADING_LINE, ""]
    if intro:
        lines += [*intro, ""]
    for e in entries:
        lines.append(e.verbatim or f"- {e.rule} <!-- from {e.source}, seen {e.count}x, last {e.last} -->")
    section = "\n".join(lines).rstrip("\n") + "\n"
    if heading is None:  # a new section goes at the end, after a blank line
        lead = _ensure_newline(before)
        return f"{lead}\n{section}" if lead.strip() else section
    return f"{before}{section}\n{after}" if after else f"{before}{section}"


def _ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else f"{text}\n"
