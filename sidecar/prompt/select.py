"""One tier of the memory block: which chunks fit its share, which sections are withheld, the text.

Chunks are taken greedily in priority order while they fit. Each heading section is judged by the
scanner once, the first time one of its chunks is considered (with its seam to the section
before it, so a payload split across a heading is caught): a section with a finding (``block``
or ``flag``) costs one notice instead of its chunks, and its clean sibling sections in the same
file stay. Picked chunks are scanned again as they will be rendered. Lines of memory that could
pass for the block's own frame (``--- crew/CREW.md ---``, ``[memory section withheld ...``) are
escaped with a leading backslash, so a file cannot forge where it came from.

The scanner's answers are kept by the text they judged (``VERDICTS``, shared with the search's
flagged sections): a block asked on every prompt judges only sections it has not seen in that
form, so its cost follows what changed, not the tier's size.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sidecar.index.chunker import Chunk
from sidecar.prompt.verdicts import VERDICTS, Verdicts
from sidecar.scanner.normalise import normalise
from sidecar.scanner.scan import Finding
from sidecar.scanner.sections import Section

if TYPE_CHECKING:
    from sidecar.scanner.semantic import SemanticLayer

__all__ = [
    "DATAMARK",
    "MARKERS",
    "VERDICTS",
    "BlockedSection",
    "MemoryFile",
    "Part",
    "Verdicts",
    "chunk_text",
    "datamark",
    "select",
]

MARKERS = {
    "identity": ("[IDENTITY]", "[END IDENTITY]"),
    "pins": ("[PINNED MEMORY]", "[END PINNED MEMORY]"),
    "agent": ("[AGENT MEMORY]", "[END AGENT MEMORY]"),
    "crew": ("[CREW SHARED MEMORY]", "[END CREW SHARED MEMORY]"),
    "operator": ("[OPERATOR MODEL]", "[END OPERATOR MODEL]"),
    "peer": ("[PEER CONTEXT]", "[END PEER CONTEXT]"),
}
#: The mark spotlighting puts in place of every space of recalled memory (Hines et al. 2024 use U+02C6).
DATAMARK = "\u02c6"
# A line that reads as a label (``--- agent/AGENT.md ---``), a notice or budget line of the block
# (``[memory ...``), a tier marker or the preamble, once folded like the scanner folds text.
_UNKNOWN = Finding("", "", "")  # the shortest notice, for a size bound before a section is scanned
_FORGED = re.compile(
    r"^\s*(?:-{2,}|—)\s*\S(?:.*\S)?\s*(?:-{2,}|—)\s*$|"
    r"^\s*\[\s*(?:memory\b|end\b|pinned\s+memory|agent\s+memory|crew\s+shared\s+memory|operator\s+model|"
    r"peer\s+context|recalled\s+memory|identity|essential\s+memories)|^\s*memory\s+from\s+earlier\s+sessions\s+follows"
)


@dataclass(frozen=True, slots=True)
class BlockedSection:
    """A section whose body was withheld: which file (tier/path), which scanner rule hit, the
    finding's level and the section's 1-based line span in the file."""

    label: str
    category: str
    pattern: str
    level: str = "block"
    line_start: int = 0
    line_end: int = 0


@dataclass(frozen=True, slots=True)
class MemoryFile:
    label: str  # "agent/daily/2026-05-01.md": tier and path, shown in the prompt
    rel: str  # path relative to the tier dir, as the index names it
    text: str
    chunks: tuple[Chunk, ...]
    sections: tuple[Section, ...]
    chunk_section: tuple[int, ...]  # the section each chunk lies in


@dataclass(slots=True)
class Part:
    """One tier's selection: its rendered text ("" when nothing was picked) and what was cut."""

    text: str = ""
    omitted: list[tuple[str, int]] = field(default_factory=list)
    blocked: list[BlockedSection] = field(default_factory=list)
    picked: list[tuple[int, int]] = field(default_factory=list)  # (file, chunk) indexes shown

    @property
    def cost(self) -> int:
        return len(self.text) + 1 if self.text else 0


@dataclass(slots=True)
class _Pick:
    """What one file contributes: picked chunk indexes and withheld sections (index -> finding)."""

    file: MemoryFile
    index: int  # of the file in the tier's list
    picked: list[int] = field(default_factory=list)
    withheld: dict[int, Finding] = field(default_factory=dict)

    def empty(self) -> bool:
        return not self.picked and not self.withheld


def select(
    kind: str,
    files: list[MemoryFile],
    order: Iterable[tuple[int, int]],
    share: int,
    semantic: SemanticLayer | None = None,
) -> Part:
    """Take (file, chunk) indexes in ``order`` while they fit ``share``; render the tier. With
    ``semantic``, a section the rules leave clean is also judged against the prototype intents
    (a flag withholds it like any other)."""
    start, end = MARKERS[kind]
    used = len(start) + len(end) + 2
    order = list(order)
    picks: dict[int, _Pick] = {}
    verdicts: dict[tuple[int, int], Finding | None] = {}
    for fi, ci in order:
        memory = files[fi]
        si = memory.chunk_section[ci]
        pick = picks.get(fi) or _Pick(memory, fi)
        overhead = 2 if not pick.empty() else len(_label_line(memory.label)) + 2
        if (fi, si) not in verdicts:
            smallest = min(len(chunk_text(memory.chunks[ci])), len(_notice(memory, si, _UNKNOWN)))
            if used + overhead + smallest > share:
                continue  # fits neither as itself nor as a notice: no need to scan its section yet
            verdicts[fi, si] = VERDICTS.section(memory.text, memory.sections, si, semantic)
        finding = verdicts[fi, si]
        if finding is not None and si in pick.withheld:
            continue
        body = _notice(memory, si, finding) if finding is not None else chunk_text(memory.chunks[ci])
        cost = len(body) + overhead
        if used + cost > share:
            continue
        if finding is not None:
            pick.withheld[si] = finding
        else:
            pick.picked.append(ci)
        picks[fi] = pick
        used += cost
    # Files in the order first picked; only what the caller asked for can be "left out".
    return _finish(kind, list(picks.values()), files, share, order)


def chunk_text(chunk: Chunk) -> str:
    """A chunk as the block shows it: ``## heading`` then the body, frame-like lines escaped."""
    heading = f"## {chunk.heading}" if chunk.heading else ""
    return "\n".join(_escape(piece) for piece in (heading, chunk.body) if piece)


def _escape(text: str) -> str:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        probe = line if line.isascii() else normalise(line).folded
        if _FORGED.match(probe.casefold()):
            lines[i] = "\\" + line
    return "\n".join(lines)


def _finish(
    kind: str, picks: list[_Pick], files: list[MemoryFile], share: int, wanted: Sequence[tuple[int, int]]
) -> Part:
    """Scan each section's picked chunks as rendered, withhold any that now hit, render the tier;
    a notice that no longer fits drops its section."""
    part = Part()
    for pick in picks:
        by_section: dict[int, list[int]] = {}
        for ci in sorted(pick.picked):
            by_section.setdefault(pick.file.chunk_section[ci], []).append(ci)
        for si, chunks in sorted(by_section.items()):
            finding = VERDICTS.text("\n\n".join(chunk_text(pick.file.chunks[ci]) for ci in chunks))
            if finding is not None:
                pick.picked = [ci for ci in pick.picked if ci not in chunks]
                pick.withheld[si] = finding
                if len(_render_tier(kind, picks)) + 1 > share:
                    del pick.withheld[si]
    kept = [pick for pick in picks if not pick.empty()]
    part.text = _render_tier(kind, kept) if kept else ""
    part.picked = [(pick.index, ci) for pick in kept for ci in sorted(pick.picked)]
    for pick in kept:
        for si in sorted(pick.withheld):
            section, finding = pick.file.sections[si], pick.withheld[si]
            part.blocked.append(
                BlockedSection(
                    pick.file.label,
                    finding.category,
                    finding.pattern,
                    finding.level,
                    section.line_start,
                    section.line_end,
                )
            )
    # Left out: the chunks asked for that are neither shown nor in a section withheld by a notice.
    shown = {(p.index, ci) for p in kept for ci in p.picked}
    noticed = {(p.index, si) for p in kept for si in p.withheld}
    left: Counter[int] = Counter(
        fi
        for fi, ci in dict.fromkeys(wanted)
        if (fi, ci) not in shown and (fi, files[fi].chunk_section[ci]) not in noticed
    )
    part.omitted.extend((files[fi].label, left[fi]) for fi in sorted(left))
    return part


def _render_tier(kind: str, picks: list[_Pick]) -> str:
    start, end = MARKERS[kind]
    return "\n".join([start, *(_render_file(p) for p in picks if not p.empty()), end])


def _render_file(pick: _Pick) -> str:
    """The label line, then the file's items in file order: picked chunks and withheld notices."""
    memory = pick.file
    items = [(memory.chunk_section[ci], ci, chunk_text(memory.chunks[ci])) for ci in pick.picked]
    items += [(si, -1, _notice(memory, si, finding)) for si, finding in pick.withheld.items()]
    return f"{_label_line(memory.label)}\n" + "\n\n".join(text for _, _, text in sorted(items))


def datamark(part_text: str, kind: str) -> str:
    """Spotlighting by datamarking: every space of the memory's own lines replaced by ``DATAMARK``,
    the block's frame (the tier markers, file labels, notices) left as it is. One character for
    one, so a part keeps its length and the budget its accounting. A memory line can never pass for
    a frame line here: ``select`` escapes those with a backslash."""
    start, end = MARKERS[kind]
    lines = part_text.split("\n")
    for i, line in enumerate(lines):
        frame = line in (start, end) or _LABEL.fullmatch(line) or line.startswith("[memory section withheld: ")
        if not frame:
            lines[i] = line.replace(" ", DATAMARK)
    return "\n".join(lines)


_LABEL = re.compile(r"--- \S+ ---")


def _label_line(label: str) -> str:
    return f"--- {label} ---"


def _notice(memory: MemoryFile, si: int, finding: Finding | None) -> str:
    assert finding is not None
    section = memory.sections[si]
    return (
        f"[memory section withheld: {memory.label} lines {section.line_start}-{section.line_end} matched "
        f"{finding.category} ({finding.pattern}); the file on disk is unchanged]"
    )
