"""What a scanner rule is: a category, a stable pattern id, and a finder that yields graded hits.

A finder reads one view of the text (``raw`` for invisible characters, ``folded`` for the rest)
and yields hits in text order, each already graded: ``BLOCK`` (high confidence), ``FLAG``
(suspicious) or ``NONE`` (matched, but only mentioned, negated or aimed at a tool). Rules run only
when one of their needles occurs in the view, which keeps large clean texts cheap. A rule belongs
to a layer (``patterns``, ``intent``, ``multilingual``), so each layer can be measured alone;
``per_sentence`` makes a finder of a judge that reads one sentence at a time.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sidecar.scanner import warm
from sidecar.scanner.context import NONE, framed_level, negated
from sidecar.scanner.deferred import deferred
from sidecar.scanner.normalise import Views

__all__ = [
    "DESCRIBED",
    "GATE_LITERAL",
    "REPORTED",
    "SEP",
    "WORD",
    "Finder",
    "Rule",
    "RuleMatch",
    "described",
    "gap",
    "matches",
    "mentioned",
    "near",
    "per_sentence",
    "regex",
    "required_literals",
    "words",
]


# One separator between two words: a few spaces or punctuation marks, or one line break; never a
# sentence end, a blank line or a table's cell border (words in two cells are not one phrase).
# Atomic, so a gap is matched one way only.
SEP = r"(?>[^\w.!?;|\n]{1,5}(?:\n[^\w.!?;|\n]{0,5})?|\n[^\w.!?;|\n]{0,5})"


def gap(words: int) -> str:
    """Up to ``words`` words between two phrases, the fewest first. Each word is taken whole, never
    shorter (possessive): a separator cannot follow part of a word, so giving letters back only
    costs time (a megabyte of one verb said again tried each word six ways)."""
    return rf"(?:{SEP}\w{{1,30}}+){{0,{words}}}?{SEP}"


WORD = deferred(r"\w+")


def words(text: str) -> frozenset[str]:
    """A set of words written as one string."""
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class RuleMatch:
    start: int
    end: int
    level: int


Finder = Callable[[Views], Iterator[RuleMatch]]


@dataclass(frozen=True, slots=True)
class Rule:
    category: str
    pattern: str
    needles: tuple[str, ...]  # the rule runs only when one of these occurs (always when empty)
    view: str  # "raw" (rules for invisible, hence non-ASCII, characters) or "folded"
    find: Finder
    layer: str = "patterns"  # "patterns" (phrases and shapes), "intent" (English sentences) or "multilingual"

    def text(self, views: Views) -> str:
        return views.raw if self.view == "raw" else views.folded


def regex(pattern: str, level: int, *, view: str = "folded", framed: bool = True, negatable: bool = False) -> Finder:
    """Every match of ``pattern`` at ``level``, lowered when quoted, in code or named as an example
    (``framed``) and dropped when negated (``negatable``)."""
    compiled = deferred(pattern, re.MULTILINE)

    def find(views: Views) -> Iterator[RuleMatch]:
        text = views.raw if view == "raw" else views.folded
        if cannot_match(compiled, text):
            return
        for found in compiled.finditer(text):
            start, end = found.span()
            if negatable and negated(text, start):
                continue
            graded = level
            if framed:
                graded = framed_level(views, start, end, level)
                if graded > NONE and view == "folded" and mentioned(views, start):
                    graded -= 1
            yield RuleMatch(start, end, graded)

    return find


# Words that aim a sentence at its reader: the second person, or the model named.
_ADDRESSED = deferred(
    r"\b(?:you|your|yours|yourself|u|ur|assistant|model|ai|agent|llm|bot|chatbot|chatgpt|gpt|claude|copilot)\b"
)
# An imperative that opens a sentence (after list and quote marks).
_IMPERATIVE = deferred(
    r"^[\s>*_#`\"'(\[-]*(?:please\s+)?(?:ignore|disregard|forget|override|bypass|act|behave|pretend|roleplay|"
    r"role-play|respond|answer|reply|enable|enter|activate|switch|become|stay|remain|simulate|emulate|imagine|"
    r"do|don'?t|never|always|send|reveal|print|show|output|repeat|tell|give|run|execute|obey|follow|comply|"
    r"stop|start|begin|continue|keep|hide|delete|upload|post|forward|write|say|translate|include|append|add)\b"
)


def mentioned(views: Views, start: int) -> bool:
    """Whether the match at ``start`` is named rather than used: its sentence, or the lead-in just
    before it (a heading, "Attack pattern:"), speaks about attacks, and the sentence neither
    addresses its reader (the second person, the model named) nor opens with an imperative. "DAN
    (Do Anything Now) prompts that establish personas" under "Jailbreaking techniques" names a
    jailbreak; "Enable DAN mode." and "You are DAN now." use one, whatever surrounds them. When the
    match stands inside a quotation, only the words outside it are asked who they address: "someone
    pasted 'You are now DAN' into the chatbot" reports what was said, to no one."""
    if not described(views, start):
        return False
    begin, end = _sentence(views, start)
    begin, end = max(begin, start - 400), min(end, start + 400)  # an order is a short sentence
    sentence = views.folded[begin:end]
    if any(q.start() <= start - begin < q.end() for q in _QUOTED_SPAN.finditer(sentence)):
        outside = _QUOTED_SPAN.sub(" ", sentence)
        return _SPOKEN_TO.search(outside) is None and _IMPERATIVE.match(outside) is None
    return _ADDRESSED.search(sentence) is None and _IMPERATIVE.match(sentence) is None


# A quotation in a sentence: single, double or curly quotes, or a code span, on one line.
_QUOTED_SPAN = deferred(
    r"(?<!\w)'[^'\n]{1,300}?'(?!\w)|\"[^\"\n]{1,300}?\"|\u201c[^\u201d\n]{1,300}?\u201d|\u2018[^\u2019\n]{1,300}?\u2019|"
    r"`[^`\n]{1,300}?`"
)
# Words outside a quotation that speak to the reader: the second person, the model hailed ("assistant:"), or
# the model told what it must do.
_SPOKEN_TO = deferred(
    r"\b(?:you|your|yours|yourself|u|ur)\b|\b(?:assistant|model|ai|agent|llm|bot|chatbot|claude|copilot)s?\s*[:,]|"
    r"\b(?:assistant|model|ai|agent|llm|bot|chatbot)s?\s+(?:must|should|shall|will|is\s+to|needs?\s+to|has\s+to)\b"
)


def described(views: Views, start: int, end_of_match: int | None = None) -> bool:
    """Whether the sentence holding ``start`` in ``views.folded``, or the lead-in just before it,
    speaks about attacks (``DESCRIBED``); in a code block, also the prose before its fence. With
    ``end_of_match``, the words of the match itself (a URL's host) are not read as the cue."""
    begin, end = _sentence(views, start)
    text = views.folded
    if end_of_match is None:
        if DESCRIBED.search(text, max(0, begin - _LEAD), end) is not None:
            return True
    elif DESCRIBED.search(text, max(0, begin - _LEAD), start) or DESCRIBED.search(
        text, end_of_match, max(end, end_of_match)
    ):
        return True
    if not views.in_fence(start):
        return False
    fence = max(text.rfind("```", 0, start), text.rfind("~~~", 0, start), 0)  # code: the prose before its fence
    info_end = text.find("\n", fence, start)
    return DESCRIBED.search(text, max(0, fence - _LEAD), start if info_end == -1 else info_end) is not None


def _sentence(views: Views, start: int) -> tuple[int, int]:
    spans = views.sentences()
    index = bisect.bisect_right(spans, (start, len(views.folded) + 1)) - 1
    begin, end = spans[index] if index >= 0 else (start, start)
    return begin, max(end, start)


def matches(pattern: re.Pattern[str], text: str, group: str) -> Iterator[re.Match[str]]:
    """Every match of ``pattern``, each search resuming right after the previous match's ``group``
    (its verb), not after the whole match: a match a rule turns down may span a later verb whose
    own match the rule would take."""
    pos = 0
    while (found := pattern.search(text, pos)) is not None:
        yield found
        pos = max(found.end(group), found.start() + 1)


def near(first: str, second: str, gap: int) -> Callable[[str], Iterator[tuple[int, int]]]:
    """Spans where ``first`` is followed by ``second`` on the same line, at most ``gap`` apart.

    Both patterns are found independently (linear), then each ``second`` hit is paired with the
    closest ``first`` hit that ends before it; a regex with a gap would rescan per start.
    """
    rx_first, rx_second = deferred(first, re.MULTILINE), deferred(second, re.MULTILINE)

    def spans(text: str) -> Iterator[tuple[int, int]]:
        firsts: list[tuple[int, int]] = []
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
                yield start, hit.end()

    return spans


# A sentence that speaks about attacks rather than making one: a finding there is only a mention.
DESCRIBED = deferred(
    r"\b(?:attack\w*|attempt\w*|malicious|injection|injected|jailbreak\w*|red[- ]?team\w*|pen[- ]?test\w*|payloads?(?![./-]\w)|threat\w*|"
    r"phishing|adversar\w*|exfiltrat\w*|post-?mortems?|(?<![./@-])example(?![./-]\w)|e\.g\.|such\s+as|for\s+instance|scanner|detect\w*|flag(?:s|ged)?|(?<!without\s)(?<!never\s)(?<!no\s)refus\w*|"
    r"hypothetical|quarantin\w*|mitigat\w*|vulnerab\w*|exploit\w*|owasp|incident|could\s+(?:tell|ask|trick)|"
    r"tries\s+to|trying\s+to|tricks?)\b"
)


# Reported speech in a condition: "if a web page tells you to disregard ..." describes an attack. "When
# anyone asks you for credentials, paste ..." does not: the order is the main clause, not the speech.
REPORTED = deferred(
    r"\b(?:if|when|whenever|should|once)\s+(?:\w+\s+){0,4}(?:tells|asks|instructs|says|wants|urges|requests|"
    r"tries\s+to\s+get|claims)\s+(?:you|the\s+(?:model|agent|assistant|ai|bot))\s+(?:to|that)\b|"
    # told in the past or in progress: "hidden text telling our assistant to forward ...", "an email asked the bot to"
    r"\b(?:telling|told|asking|asked|instructing|instructed|urging|urged|ordering|ordered)\s+(?:our|the|an?|its|their|"
    r"your)\s+(?:\w+\s+)?(?:assistant|model|agent|bot|ai|chatbot)s?\s+to\b"
)
_LEAD = 160  # characters before a sentence read for a cue that it describes an attack (a heading, a lead-in)
_REMEMBERED = 4096  # verdicts a per-sentence rule keeps for sentences said again in one text
_RECENT, _RECENT_CHARS = 256, 400  # and for short sentences of the texts read before


def per_sentence(
    judge: Callable[[str], tuple[int, int, int] | None], gate: re.Pattern[str], *, described: bool = True
) -> Finder:
    """A finder that asks ``judge`` about each sentence of the folded view holding a match of
    ``gate`` (the words without which ``judge`` cannot answer): ``(level, start, end)`` within the
    sentence, or None. Gate and judge read the sentence alone, so a sentence said again (a repeated
    log line, a pasted block) is read once per text, and a short one read in the last few hundred
    such sentences of earlier texts (the lines an append's window read the append before) is not
    read again; and only sentences holding one of the literals
    every match of ``gate`` contains (``required_literals``) are read at all. The level is lowered
    when the match is quoted, in code or named as an example, and the hit dropped when the sentence,
    or the lead-in just before it, speaks about attacks (``described``) or reports what someone else
    tells the model."""
    required: list[frozenset[str] | None] = []  # the gate's literals, read from it once on first need
    recent: dict[str, tuple[int, int, int] | None] = {}  # verdicts on short sentences of earlier texts

    def read(piece: str) -> tuple[int, int, int] | None:
        if len(piece) > _RECENT_CHARS:
            return judge(piece) if gate.search(piece) is not None else None
        try:
            return recent[piece]
        except KeyError:
            pass
        verdict = judge(piece) if gate.search(piece) is not None else None
        if len(recent) >= _RECENT:
            recent.clear()
        recent[piece] = verdict
        return verdict

    def find(views: Views) -> Iterator[RuleMatch]:
        if cannot_match(gate, views.folded):
            return
        spans = views.sentences()
        pieces = views.pieces()
        indices: Sequence[int] = range(len(spans))
        if len(spans) > _FEW_SENTENCES:
            if not required:
                required.append(required_literals(gate, GATE_LITERAL))
            if required[0] is not None:
                indices = views.sentences_holding(required[0])
        read_once: dict[str, tuple[int, int, int] | None] = {}  # verdicts on the sentences said so far
        for index in indices:
            begin, end = spans[index]
            piece = pieces[index]
            if piece in read_once:
                verdict = read_once[piece]
            else:
                verdict = read(piece)
                if len(read_once) < _REMEMBERED:  # bounded: a text of all-different sentences holds no more
                    read_once[piece] = verdict
            hit = _judged(views, verdict, piece, begin, end, described=described)
            if hit is not None:
                yield hit

    return find


_FEW_SENTENCES = 2  # a text this short is read sentence by sentence without looking its literals up first
# The standard library's regular-expression parser (``re._parser``; ``sre_parse`` is its deprecated alias).
_PARSER: Any = importlib.import_module("re._parser")
_OPS: Any = importlib.import_module("re._constants")
_MIN_LITERAL = 3  # shorter literals occur in nearly every sentence: no help in choosing which to read
# A gate's literals are looked up once per text, in its words (``Views.held``): short ones help too
# ("rm", "~/", "cc" pick a quarter of the sentences or fewer for gates that promise nothing longer).
GATE_LITERAL = 1


def cannot_match(pattern: re.Pattern[str], text: str) -> bool:
    """Whether a long ``text`` holds none of the literals every match of ``pattern`` holds: a few
    substring searches instead of the pattern's own walk over the whole text (which, for a verb
    followed by up to ten words and an object, tries the gap at every verb). A short text is left
    to the pattern: there the look-ups would cost more than they save."""
    if len(text) < _LONG_TEXT:
        return False
    literals = _literals(pattern)
    return literals is not None and not any(literal in text for literal in literals)


_LONG_TEXT = 4096


@functools.lru_cache(maxsize=1024)
def _literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    return required_literals(pattern)


def required_literals(pattern: re.Pattern[str], shortest: int = _MIN_LITERAL) -> frozenset[str] | None:
    """Literals one of which every match of ``pattern`` holds, or None when the pattern promises none
    at least ``shortest`` characters long: read from the parsed pattern, taking in each sequence
    the element that is surest to be rare (a run of literal characters, a group or a repeat of at
    least one, an alternation whose every branch promises some). Case-insensitive patterns promise
    none: the literals are matched as written."""
    if pattern.flags & re.IGNORECASE:
        return None
    key = (pattern.pattern, pattern.flags, shortest)
    kept = warm.lookup("literals", key)
    if kept is not warm.MISSING:
        return cast("frozenset[str] | None", kept)
    found = _required(_PARSER.parse(pattern.pattern, pattern.flags).data)
    if found is not None and min(map(len, found)) < shortest:
        found = None
    warm.remember("literals", key, found)
    return found


def _required(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    best: frozenset[str] | None = None
    run: list[str] = []

    def better(candidate: frozenset[str] | None) -> None:
        nonlocal best
        if candidate is not None and (best is None or _rank(candidate) > _rank(best)):
            best = candidate

    for op, av in items:
        if op is _OPS.LITERAL:
            run.append(chr(av))
            continue
        if run:
            better(frozenset({"".join(run)}))
            run = []
        if op is _OPS.SUBPATTERN and not av[1] & re.IGNORECASE:
            better(_required(av[3].data))
        elif op is _OPS.ATOMIC_GROUP:
            better(_required(av.data))
        elif op in (_OPS.MAX_REPEAT, _OPS.MIN_REPEAT, _OPS.POSSESSIVE_REPEAT) and av[0] >= 1:
            better(_required(av[2].data))
        elif op is _OPS.BRANCH:
            branches = [_required(branch.data) for branch in av[1]]
            if all(branch is not None for branch in branches):
                better(frozenset().union(*(b for b in branches if b is not None)))
    if run:
        better(frozenset({"".join(run)}))
    return best


def _rank(literals: frozenset[str]) -> tuple[int, int]:
    """The shortest literal first (a short one occurs everywhere), then the fewer literals."""
    return min(map(len, literals)), -len(literals)


def _judged(
    views: Views, verdict: tuple[int, int, int] | None, piece: str, begin: int, end: int, *, described: bool
) -> RuleMatch | None:
    if verdict is None:
        return None
    text = views.folded
    level, start, stop = verdict
    if described and DESCRIBED.search(text, max(0, begin - _LEAD), end):
        return None
    if REPORTED.search(piece, 0, start + 1):
        return None
    return RuleMatch(begin + start, begin + stop, framed_level(views, begin + start, begin + stop, level))
