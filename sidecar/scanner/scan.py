"""Deterministic prompt-injection scanner for memory text.

Memory files are written by past agent runs and can carry indirect-injection payloads, so text is
scanned on the write path and again when the prompt is assembled. A finding has a level:

- ``block``: high confidence. The write path refuses it (422); assembly withholds the section.
- ``flag``: suspicious. A write goes through with a warning; assembly withholds the section too.

Text is first normalised (``normalise``: entities, confusables, fillers, emphasis inside words,
hyphenated line breaks), and encoded runs are decoded and scanned again (``decode``). The rules
come in layers (``LAYERS``): ``patterns`` match phrases by intent (``intent``, ``covert``) or by
shape (``patterns``); ``intent`` judges English sentences by what they ask of the model
(``directive``, ``conceal``, ``leak``, ``agency``, ``headers``); ``multilingual`` does the same in
other languages. Each hit is graded by where it stands (``context``): quoted, in code, named as an
example, negated. An optional ``semantic`` layer (a caller's embedder) can flag what the rules
left clean. Rules run in a fixed order and the first hit of the highest level wins, so a verdict
never flickers; every finding carries the sentence it stands in.

Entry points:

- ``scan(text)``: the first ``block`` finding, or None. What the write path refuses.
- ``verdict(text)``: the first ``block`` finding, else the first ``flag`` finding, or None.
- ``scan_all(text)``: one finding per rule that hits, at its most severe level, in rule order.
- ``scan_write(old, new)``: the verdict on the heading sections a write changed, and for an
  append on its seam with the file's tail, so an append that completes a payload begun by an
  earlier one is judged whole, even under a new heading.
- ``section_verdict(text, sections, i)``: a section's verdict, with its seam to the one before
  (what the block withholds).
- ``flagged_sections(text)`` and ``finding_at``: which sections of a file have a finding, each
  judged as ``section_verdict`` judges it, to mark read and search hits as the block withholds them.

Time stays linear on any input: no nested unbounded quantifiers, bounded windows around each
match, at most ``MAX_HITS`` hits examined per rule, and a rule runs only when its words occur in
the text (literal needles, or word stems looked up in the text's sorted words).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sidecar.scanner.agency import AGENCY_RULES
from sidecar.scanner.conceal import CONCEAL_RULES
from sidecar.scanner.context import BLOCK, FLAG, NONE, framed_level
from sidecar.scanner.covert import COVERT_RULES
from sidecar.scanner.decode import (
    base64_runs,
    decode_order,
    decoded_transforms,
    hex_runs,
    hidden_segments,
    order_in,
    other_runs,
    reads_as_words,
    url_runs,
)
from sidecar.scanner.deferred import deferred
from sidecar.scanner.directive import DIRECTIVE_RULES
from sidecar.scanner.harm import HARM_RULES
from sidecar.scanner.headers import HEADER_RULES
from sidecar.scanner.intent import INTENT_RULES
from sidecar.scanner.joined import JOINED_RULES
from sidecar.scanner.leak import LEAK_RULES
from sidecar.scanner.multilingual import MULTILINGUAL_RULES
from sidecar.scanner.normalise import Stems, Views, literals_of, normalise
from sidecar.scanner.patterns import SHAPE_RULES
from sidecar.scanner.rule import Rule, RuleMatch, described
from sidecar.scanner.sections import Section, split_sections
from sidecar.scanner.sentences import sentence_at

if TYPE_CHECKING:
    from sidecar.scanner.semantic import SemanticLayer

__all__ = [
    "CATEGORIES",
    "LAYERS",
    "LEVELS",
    "MAX_HITS",
    "Finding",
    "Level",
    "SectionFinding",
    "finding_at",
    "flagged_sections",
    "judged_sections",
    "scan",
    "scan_all",
    "scan_write",
    "seam",
    "section_verdict",
    "verdict",
]

CATEGORIES = (
    "invisible_unicode",
    "fence_breakout",
    "hidden_instructions",
    "tampering",
    "instruction_override",
    "role_hijack",
    "exfiltration",
    "secret_access",
    "concealment",
    "tool_abuse",
    "base64_payload",
    "encoded_payload",
)
Level = Literal["block", "flag"]
#: The rule layers: phrases and shapes, English sentence intents, other languages.
LAYERS = frozenset(("patterns", "intent", "multilingual"))
LEVELS: tuple[Level, ...] = ("block", "flag")
MAX_HITS = 256  # hits of one rule looked at for a block-level one before settling for the first flag

_EXCERPT_CHARS = 80
_MAX_DEPTH = 2
_RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            *SHAPE_RULES,
            *INTENT_RULES,
            *COVERT_RULES,
            *DIRECTIVE_RULES,
            *CONCEAL_RULES,
            *LEAK_RULES,
            *AGENCY_RULES,
            *HARM_RULES,
            *JOINED_RULES,
            *HEADER_RULES,
            *MULTILINGUAL_RULES,
        ),
        key=lambda rule: CATEGORIES.index(rule.category),
    )
)
_NAMES: dict[int, Level] = {BLOCK: "block", FLAG: "flag"}
# The intent rules' word stems, looked up together once per text; a rule runs when one of its own is there.
_STEMS = {rule.pattern: Stems.of(rule.needles) for rule in _RULES if rule.layer == "intent"}
# The other rules' needles in the folded view, looked up together once per text (``Views.holding``).
_NEEDLES = literals_of(
    frozenset().union(*(rule.needles for rule in _RULES if rule.layer != "intent" and rule.view != "raw"))
)
_ALL_STEMS = Stems.of(frozenset().union(*(rule.needles for rule in _RULES if rule.layer == "intent")))


def _index(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for word, pattern in pairs:
        out.setdefault(word, []).append(pattern)
    return {word: tuple(patterns) for word, patterns in out.items()}


# The rules each word wakes: an intent rule's stems and other terms, another rule's needles (folded view).
_BY_STEM = _index((stem, r.pattern) for r in _RULES if r.layer == "intent" for stem in _STEMS[r.pattern].words)
_BY_OTHER = _index((term, r.pattern) for r in _RULES if r.layer == "intent" for term in _STEMS[r.pattern].other_terms)
_BY_NEEDLE = _index(
    (needle, r.pattern) for r in _RULES if r.layer != "intent" and r.view != "raw" for needle in r.needles
)


def _woken(views: Views) -> set[str]:
    """The rules (by pattern) whose words occur in the text, each word looked up once for all of them:
    an intent rule runs when one of its stems starts a word (``Views.present``) or one of its other
    terms occurs (``Views.holds_any`` asked of each rule gives the same answer); another rule when one
    of its needles occurs (``Views.holding``)."""
    return set(
        itertools.chain.from_iterable(
            itertools.chain(
                map(_BY_STEM.__getitem__, views.present(_ALL_STEMS)),
                map(_BY_OTHER.__getitem__, views.others_held(_ALL_STEMS)),
                map(_BY_NEEDLE.__getitem__, views.holding(_NEEDLES)),
            )
        )
    )


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule hit: its category, a stable pattern id, a short printable excerpt, its level and the
    sentence it stands in."""

    category: str
    pattern: str
    excerpt: str
    level: Level = "block"
    sentence: str = ""  # the whole sentence the hit stands in (folded), the reason a reader can check


@dataclass(frozen=True, slots=True)
class SectionFinding:
    """A heading section's verdict: its heading path, 1-based inclusive line span and the finding."""

    heading: str
    line_start: int
    line_end: int
    finding: Finding

    def as_json(self) -> dict[str, Any]:
        """As the answers show a flagged section (the contract's ``Flagged``)."""
        return {
            "category": self.finding.category,
            "pattern": self.finding.pattern,
            "level": self.finding.level,
            "heading": self.heading,
            "line_start": self.line_start,
            "line_end": self.line_end,
        }


def scan(text: str) -> Finding | None:
    """The first ``block`` finding in rule order, or None: what a write is refused for."""
    for finding in _findings(text, depth=0):
        if finding.level == "block":
            return finding
    return None


def verdict(text: str, *, layers: frozenset[str] = LAYERS, semantic: SemanticLayer | None = None) -> Finding | None:
    """The first ``block`` finding, else the first ``flag`` finding, else None. ``layers`` picks the
    rule layers that run (all by default; the benchmark measures each alone); ``semantic``, when
    given, judges the sentences the rules left clean against prototype intents."""
    flagged: Finding | None = None
    for finding in _findings(text, depth=0, layers=layers):
        if finding.level == "block":
            return finding
        flagged = flagged or finding
    if flagged is None and semantic is not None:
        return _semantic_finding(text, semantic)
    return flagged


def _semantic_finding(text: str, semantic: SemanticLayer) -> Finding | None:
    near = semantic.finding(text)
    if near is None:
        return None
    prefix = "learned" if near.part == "head" else "semantic"
    return Finding(near.intent, f"{prefix}.{near.intent}", near.excerpt, "flag", near.sentence)  # evidence, not proof


def scan_all(text: str) -> list[Finding]:
    """One finding per rule that hits (at its most severe level), in rule order."""
    return list(_findings(text, depth=0))


def scan_write(
    old: str | None, new: str, *, layers: frozenset[str] = LAYERS, semantic: SemanticLayer | None = None
) -> SectionFinding | None:
    """The verdict on the heading sections of ``new`` (the file after the write) that differ from
    ``old`` (the file before it, None when new): the first ``block`` one, else the first ``flag`` one.

    For an append that is the file's last section, grown, plus any section the append adds, so a
    payload split over two appends is judged whole; for a replace, the sections it changed. An
    append is also judged together with the tail of the file it joins (``seam``), line breaks and
    heading marks read as spaces, so a sentence cut across a new heading is still one sentence.
    ``semantic``, when given and it has the learned head, judges each changed section the rules leave
    clean (a ``flag`` at most); the prototypes alone are not worth a write's CPU (tens of ms per KB).
    """
    flagged: SectionFinding | None = None
    sections = _touched(old or "", new)
    for section in sections:
        found = verdict(new[section.start : section.end], layers=layers)
        if found is None:
            continue
        hit = SectionFinding(section.heading, section.line_start, section.line_end, found)
        if found.level == "block":
            return hit
        flagged = flagged or hit
    if old and sections and new.startswith(old):
        found = _seam_finding(old, new[len(old) :], layers)
        if found is not None and (found.level == "block" or flagged is None):
            joined = len(old) + len(new[len(old) :]) - len(new[len(old) :].lstrip())  # the append's first character
            section = next((s for s in sections if s.start <= joined < s.end), sections[0])
            return SectionFinding(section.heading, section.line_start, section.line_end, found)
    if flagged is None and semantic is not None and semantic.has_head:
        for section in sections:
            found = _semantic_finding(new[section.start : section.end], semantic)
            if found is not None:
                return SectionFinding(section.heading, section.line_start, section.line_end, found)
    return flagged


SEAM_CHARS = 400  # characters each side of an append's join read as one text


def seam(before: str, appended: str) -> str:
    """The end of ``before`` and the start of ``appended`` as one paragraph, heading lines left out
    and quote or list marks dropped: what an append completes, read as the sentence it makes."""
    tail, head = before[-SEAM_CHARS:], appended[:SEAM_CHARS]
    lines = (line.strip() for line in f"{tail}\n{head}".split("\n"))
    return " ".join(line.lstrip(">*-").strip() for line in lines if line and not line.startswith("#"))


def section_verdict(
    text: str,
    sections: Sequence[Section],
    index: int,
    *,
    layers: frozenset[str] = LAYERS,
    semantic: SemanticLayer | None = None,
) -> Finding | None:
    """The verdict on ``sections[index]`` of ``text``: its own, else the one on its seam with the
    section before it, so the half that completes a payload split across a heading is withheld.
    ``semantic``, when given, judges the section's own text after the rules left it and its seam
    clean (a ``flag`` at most)."""
    section = sections[index]
    found = verdict(text[section.start : section.end], layers=layers)
    if found is None and index > 0:
        previous = sections[index - 1]
        found = _seam_finding(text[previous.start : previous.end], text[section.start : section.end], layers)
    if found is None and semantic is not None:
        found = _semantic_finding(text[section.start : section.end], semantic)
    return found


def _seam_finding(before: str, after: str, layers: frozenset[str] = LAYERS) -> Finding | None:
    """A finding on the seam of ``before`` and ``after`` that the tail of ``before`` alone does not
    have: what joining them made, not what ``before`` already held."""
    found = verdict(seam(before, after), layers=layers)
    if found is None or verdict(seam(before, ""), layers=layers) is not None:
        return None
    return found


def flagged_sections(
    text: str, judge: Callable[[str, Sequence[Section], int], Finding | None] | None = None
) -> list[SectionFinding]:
    """Every heading section of a file that has a finding (either level), in file order: each judged
    as the block judges it (``section_verdict``: its own text, else its seam with the section before
    it), so a search or read hit is marked exactly when the block would withhold its section.
    ``judge``: what gives a section's verdict in place of ``section_verdict`` with its arguments (a
    store of verdicts already given)."""
    sections = split_sections(text)
    return [finding for _, finding in judged_sections(text, sections, range(len(sections)), judge)]


def judged_sections(
    text: str,
    sections: Sequence[Section],
    indexes: Iterable[int],
    judge: Callable[[str, Sequence[Section], int], Finding | None] | None = None,
) -> list[tuple[int, SectionFinding]]:
    """``flagged_sections`` of the sections of ``text`` at ``indexes`` alone (a section's verdict reads
    it and the one before it, never the rest of the text), each with its index."""
    out = []
    for index in indexes:
        found = (judge or section_verdict)(text, sections, index)
        if found is not None:
            section = sections[index]
            out.append((index, SectionFinding(section.heading, section.line_start, section.line_end, found)))
    return out


def finding_at(sections: Sequence[SectionFinding], line: int) -> SectionFinding | None:
    """The flagged section holding 1-based ``line`` (a search hit's ``line_start``), if any."""
    index = bisect.bisect_right([s.line_start for s in sections], line) - 1
    if index >= 0 and sections[index].line_start <= line <= sections[index].line_end:
        return sections[index]
    return None


def _touched(old: str, new: str) -> list[Section]:
    """The sections of ``new`` that overlap the span where it differs from ``old``."""
    if old == new:
        return []
    prefix = _common_prefix(old, new)
    suffix = _common_prefix(old[prefix:][::-1], new[prefix:][::-1])
    begin, end = prefix, len(new) - suffix
    sections = split_sections(new)
    touched = [s for s in sections if s.start < end and s.end > begin]
    if not touched:  # a pure deletion: the section the cut closed up
        touched = [s for s in sections if s.start <= begin < s.end] or sections[-1:]
    return touched


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by binary search on slice equality (memcmp speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _findings(text: str, depth: int, layers: frozenset[str] = frozenset()) -> Iterator[Finding]:
    views = normalise(text)
    ascii_only = text.isascii()  # every raw-view rule looks for a non-ASCII character
    woken = _woken(views)  # word stems and needles: every rule's looked up in the text at once
    for rule in _RULES:
        if layers and rule.layer not in layers:
            continue
        raw = rule.view == "raw"
        if raw and ascii_only:
            continue
        if raw:
            if rule.needles and not any(views.has(needle, raw=True) for needle in rule.needles):
                continue
        elif (rule.layer == "intent" or rule.needles) and rule.pattern not in woken:
            continue
        view = rule.text(views)
        hit = _most_severe(rule, views)
        if hit is not None:
            yield Finding(
                rule.category,
                rule.pattern,
                _excerpt(view, hit),
                _NAMES[hit.level],
                sentence_at(view, hit.start, hit.end),
            )
    if depth < _MAX_DEPTH and (not layers or "patterns" in layers):
        yield from _encoded(views, depth)


def _most_severe(rule: Rule, views: Views) -> RuleMatch | None:
    """The rule's first block-level hit, else its first flag-level hit, among ``MAX_HITS`` hits."""
    flagged: RuleMatch | None = None
    for count, hit in enumerate(rule.find(views)):
        if hit.level >= BLOCK:
            return hit
        if hit.level == FLAG and flagged is None:
            flagged = hit
        if count >= MAX_HITS:
            break
    return flagged


def _encoded(views: Views, depth: int) -> Iterator[Finding]:
    """Findings inside decoded base64 and hex runs: hiding an instruction in an encoding is itself
    a sign of intent, so an inner finding is ``block``; a run quoted or in code is a mention and is
    lowered as a phrase there would be (``framed_level``: a level for the quote or code, another
    when the words before it name it as an example), so documentation that shows an encoded attack
    string is not refused for it. Runs in the looser encodings (``decode.other_runs``) flag at most;
    an encoded order, or an order to decode and act, is flagged whatever it says (``_hidden_order``)."""
    decoded_runs: list[str] = []  # what each run decodes to, at a level above a mention
    for category, prefix, runs in (
        ("base64_payload", "base64.", base64_runs(views.cased)),
        ("encoded_payload", "hex.", hex_runs(views.cased)),
        ("encoded_payload", "decoded.", other_runs(views.cased)),
    ):
        by_level: dict[int, list[str]] = {}
        for start, end, decoded in runs:
            level = _run_level(views, start, end)
            if prefix == "decoded.":  # spelled, NATO, bits, leetspeak: looser readings, never refused for
                level = min(level, FLAG)
            if level > NONE:
                by_level.setdefault(level, []).append(decoded)
                decoded_runs.append(decoded)
        for level in sorted(by_level, reverse=True):
            yield from _inner(category, prefix, "\n".join(by_level[level]), _NAMES[level], depth)
    transformed = decoded_transforms(views.folded, views.cased)
    if transformed:
        yield from _inner("encoded_payload", "transform.", transformed, "block", depth)
    yield from _hidden_order(views, decoded_runs)


def _hidden_order(views: Views, decoded_runs: list[str]) -> Iterator[Finding]:
    """An encoded order (``decode.order_in``), or an order to decode and act on text the page hides
    (``decode.decode_order``), flagged whatever the inner text says: the act is what marks it."""
    order = decode_order(views.folded)
    if order is not None and _hides(views, decoded_runs) and not described(views, order[0]):
        hit = RuleMatch(order[0], order[1], FLAG)
        yield Finding(
            "encoded_payload",
            "encoded.decode_then_act",
            _excerpt(views.folded, hit),
            "flag",
            sentence_at(views.folded, *order),
        )
        return
    for decoded in decoded_runs:
        if reads_as_words(decoded) and order_in(decoded):
            excerpt = " ".join(decoded.split())[:_EXCERPT_CHARS]
            yield Finding("encoded_payload", "encoded.order", excerpt, "flag", f"decoded: {excerpt}")
            return


def _hides(views: Views, decoded_runs: list[str]) -> bool:
    """Whether the text hides something to decode: an encoded run, URL escapes or a transformed piece."""
    return bool(decoded_runs) or bool(url_runs(views.raw)) or bool(hidden_segments(views.folded, views.cased))


def _run_level(views: Views, start: int, end: int) -> int:
    """The level an encoded run at ``start:end`` of ``views.cased`` stands at: ``BLOCK`` unless it
    is quoted, in code or named as an example in a passage about attacks."""
    if len(views.cased) != len(views.folded):  # case folding changed lengths: find the run again
        run = views.cased[start:end].casefold()
        start = views.folded.find(run)
        if start < 0:
            return BLOCK
        end = start + len(run)
    level = framed_level(views, start, end, BLOCK)
    if level < BLOCK and not described(views, start):
        return BLOCK  # quoted or fenced alone is no mention: an encoded order needs the page to be about attacks
    return level


# A download run by a shell: common in install docs as plain text, but hidden in an encoding it is a payload.
_FETCH_TO_SHELL = deferred(
    r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\biex\s*\(|\beval\s+\$\("
)


def _inner(category: str, prefix: str, decoded: str, level: Level, depth: int) -> Iterator[Finding]:
    seen: set[str] = set()
    for inner in _findings(decoded, depth + 1):
        pattern = prefix + inner.pattern.removeprefix("base64.").removeprefix("hex.").removeprefix("transform.")
        if pattern not in seen:
            seen.add(pattern)
            yield Finding(category, pattern, inner.excerpt, level, f"decoded: {inner.sentence}")
    if not seen and (found := _FETCH_TO_SHELL.search(decoded.casefold())) is not None:
        excerpt = " ".join(decoded[found.start() : found.end()].split())[:80]
        yield Finding(category, prefix + "fetch_to_shell", excerpt, level, f"decoded: {excerpt}")


def _excerpt(text: str, hit: RuleMatch) -> str:
    """A short, single-line, printable excerpt around the hit (invisible characters shown as U+XXXX)."""
    begin = max(0, hit.start - 16)
    piece = text[begin : min(hit.end, begin + _EXCERPT_CHARS)]
    shown = "".join(ch if ch.isprintable() else " " if ch.isspace() else f"<U+{ord(ch):04X}>" for ch in piece)
    return " ".join(shown.split())[:_EXCERPT_CHARS]
