"""Facts that keep coming back, promoted to the evergreen file (AGENT.md, CREW.md).

A line is recurring when its normalised form (its words in order, case and list marker aside)
appears in at least ``MIN_SOURCES`` distinct sources: the daily notes a run rolls up and the
weekly summaries of earlier runs (a fact said once a week for three weeks recurs as much as one
said on three days of a week). A line that reports what was done (it opens with a verb in the
past tense: "Deployed ...", "Ran ...") is an event, not a standing fact, and is never promoted. It is appended as a bullet under a
``## Consolidated`` heading, with an HTML comment naming the notes it came from; a line whose
normalised form the evergreen file already holds (provenance comments aside) is not added again,
so a run repeated or resumed promotes nothing twice. The evergreen cap is a hard limit: a fact
that does not fit is reported, never written.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from sidecar.consolidate.periods import Line
from sidecar.scanner.sections import split_sections
from sidecar.write.dedup import LIST_MARKER, MIN_TOKENS, words

__all__ = [
    "COMMENT",
    "HEADING",
    "MIN_SOURCES",
    "Candidate",
    "EvergreenUpdate",
    "as_item",
    "consolidated_bullets",
    "normalised",
    "recurring",
    "update_evergreen",
]

MIN_SOURCES = 3
HEADING = "Consolidated"
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FROM = re.compile(r"<!--\s*from\s+(.*?)\s*-->")
_PAST = frozenset(
    str.split(
        "ran spent met wrote sent made took got did went had saw led held began left paid found kept told "
        "gave brought bought caught thought taught sought fought won lost rode drove flew"
    )
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A recurring line (as first written) and the notes it appeared in, by date."""

    text: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EvergreenUpdate:
    """The evergreen file's new text (None when unchanged), what was added, what was already there,
    and what did not fit under the cap."""

    text: str | None
    added: tuple[Candidate, ...]
    present: tuple[Candidate, ...]
    over_cap: tuple[Candidate, ...]
    removed: tuple[str, ...] = ()


def as_item(text: str) -> str:
    """``text`` as a markdown list item: stripped, with a ``- `` marker unless it has one."""
    text = text.strip()
    return text if LIST_MARKER.match(text) else f"- {text}"


def normalised(line: str) -> str:
    """A line's words in order, lowercased, without its list marker or HTML comments."""
    return " ".join(words(COMMENT.sub(" ", line)))


def recurring(
    lines: Iterable[Line], min_sources: int = MIN_SOURCES, *, earlier: Iterable[Line] = ()
) -> list[Candidate]:
    """Lines of at least ``MIN_TOKENS`` words seen in ``min_sources`` or more sources, in order of
    first sight: ``lines`` are the notes rolled up now, ``earlier`` the lines of earlier summaries
    (each summary one source); a line is a candidate only when the notes hold it."""
    first: dict[str, str] = {}
    seen: dict[str, list[str]] = {}
    for line in lines:
        if "\n" in line.text:
            continue  # a fenced block is an example, not a fact to promote
        key = normalised(line.text)
        if len(key.split()) < MIN_TOKENS or is_event(key):
            continue
        first.setdefault(key, line.text)
        sources = seen.setdefault(key, [])
        if line.source not in sources:
            sources.append(line.source)
    for line in earlier:
        key = normalised(line.text)
        if key in seen and line.source not in seen[key]:
            seen[key].append(line.source)
    return [Candidate(first[key], tuple(sorted(s))) for key, s in seen.items() if len(s) >= min_sources]


def is_event(key: str) -> bool:
    """Whether a normalised line opens with a verb in the past tense (it reports what was done)."""
    head = key.split(" ", 1)[0]
    return head in _PAST or (len(head) > 4 and head.endswith("ed") and not head.endswith("eed"))


def preferences(texts: dict[str, str]) -> list[Candidate]:
    """The operator's explicit preferences in the notes (``operator.extract_preferences``), each once
    with every note that stated it: a preference is promoted the first time it is said, where a
    fact must recur."""
    from sidecar.consolidate.operator import extract_preferences

    rules: dict[str, str] = {}
    seen: dict[str, list[str]] = {}
    for source, text in texts.items():
        lines = text.splitlines()
        for found in extract_preferences(text, source):
            said = LIST_MARKER.sub("", lines[found.line - 1]).strip() if 0 < found.line <= len(lines) else ""
            rules.setdefault(found.key, said or found.rule)  # as the notes said it, or the rule
            sources = seen.setdefault(found.key, [])
            if source not in sources:
                sources.append(source)
    return [Candidate(rules[key], tuple(sorted(s))) for key, s in seen.items()]


def consolidated_bullets(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The lines of the evergreen file's ``## Consolidated`` section with the sources their
    provenance comments name."""
    lines = text.splitlines()
    start, end = _section_span(text)
    out = []
    for line in lines[start:end]:
        found = _FROM.search(line)
        if line.strip() and not line.startswith("#") and found:
            out.append((line.strip(), tuple(s.strip() for s in found.group(1).split(",") if s.strip())))
    return out


def update_evergreen(
    current: str, candidates: Sequence[Candidate], cap_bytes: int, retire: Collection[str] = ()
) -> EvergreenUpdate:
    """Drop the ``## Consolidated`` lines whose normalised form is in ``retire`` (values a newer line
    changed), then append the candidates the file lacks there, while the file fits ``cap_bytes``."""
    lines = current.splitlines(keepends=True)
    start, end = _section_span(current)
    removed = [ln.strip() for ln in lines[start:end] if ln.strip() and normalised(ln) in retire]
    if removed:
        lines = [ln for i, ln in enumerate(lines) if not (start <= i < end and ln.strip() and normalised(ln) in retire)]
        current = "".join(lines)
    known = {normalised(line) for line in current.splitlines()}
    present = [c for c in candidates if normalised(c.text) in known]
    insert_at, head = _section_end(current, lines)
    added: list[Candidate] = []
    over: list[Candidate] = []
    new_lines: list[str] = [] if head is None else [head]
    for candidate in candidates:
        key = normalised(candidate.text)
        if key in known:
            continue
        entry = _bullet(candidate)
        if _size(lines, insert_at, [*new_lines, entry]) > cap_bytes:
            over.append(candidate)
            continue
        known.add(key)
        new_lines.append(entry)
        added.append(candidate)
    if not added and not removed:
        return EvergreenUpdate(None, (), tuple(present), tuple(over))
    text = "".join(_joined(lines, insert_at, new_lines if added else []))
    return EvergreenUpdate(text, tuple(added), tuple(present), tuple(over), tuple(removed))


def _section_span(text: str) -> tuple[int, int]:
    """The 0-based [start, end) line span of the ``## Consolidated`` section's body; (0, 0) when absent."""
    lines = text.splitlines(keepends=True)
    for section in split_sections(text):
        if section.heading.rsplit(" > ", 1)[-1] == HEADING and lines[section.line_start - 1].startswith("## "):
            return section.line_start, section.line_end
    return 0, 0


def _bullet(candidate: Candidate) -> str:
    return f"{as_item(candidate.text)} <!-- from {', '.join(candidate.sources)} -->\n"


def _section_end(text: str, lines: list[str]) -> tuple[int, str | None]:
    """Where new bullets go (a line index) and the heading to write first (None when it exists)."""
    for section in split_sections(text):
        if section.heading.rsplit(" > ", 1)[-1] == HEADING and lines[section.line_start - 1].startswith("## "):
            end = section.line_end
            while end > section.line_start and not lines[end - 1].strip():
                end -= 1  # new bullets follow the last one, not the blank lines after it
            return end, None
    lead = "\n" if text else ""  # a blank line between the file's last line and the new heading
    return len(lines), f"{lead}## {HEADING}\n\n"


def _joined(lines: list[str], at: int, new: list[str]) -> list[str]:
    before = lines[:at]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"
    return [*before, *new, *lines[at:]]


def _size(lines: list[str], at: int, new: list[str]) -> int:
    return len("".join(_joined(lines, at, new)).encode("utf-8"))
