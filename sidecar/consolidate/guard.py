"""What the job writes passes the scan an API write passes: the injection scanner's verdict.

Notes reached the tier through the write path, but a summary, a promoted line or a model's
answer is new text in a new place (a line harmless in a week of notes can be a standing
instruction in the evergreen file, which every prompt carries), so every line the job writes is
judged again. A line with a finding of either level is left out and reported: one finding
withholds one line, never its neighbours. A summary is then judged by heading section as the
memory block judges it, and a section still flagged (a payload split over lines) is left out whole.
"""

from __future__ import annotations

from sidecar.consolidate.report import Withheld
from sidecar.scanner.scan import flagged_sections, verdict
from sidecar.scanner.sections import split_sections

__all__ = ["clean_summary", "judged"]


def judged(line: str, target: str, withheld: list[Withheld]) -> bool:
    """Whether ``line`` may be written to ``target``; a flagged one is added to ``withheld``."""
    found = verdict(line)
    if found is None:
        return True
    withheld.append(Withheld(line.strip(), target, found.category, found.level))
    return False


def clean_summary(text: str, target: str, withheld: list[Withheld]) -> str:
    """``text`` (a summary) without its flagged lines, then without any section still flagged."""
    kept = []
    for raw in text.splitlines(keepends=True):
        body = raw.strip()
        if not body or body.startswith(("#", "<!--")) or judged(body, target, withheld):
            kept.append(raw)
    text = "".join(kept)
    flagged = flagged_sections(text)
    if not flagged:
        return text
    bad = {(f.line_start, f.line_end): f.finding for f in flagged}
    out = []
    for section in split_sections(text):
        if (found := bad.get((section.line_start, section.line_end))) is not None:
            withheld.append(Withheld(f"section {section.heading!r}", target, found.category, found.level))
            continue
        out.append(text[section.start : section.end])
    return "".join(out)
