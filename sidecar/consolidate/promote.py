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
    "MIN_PREFERENCE_DAYS",
    "MIN_SOURCES",
    "PREFERENCES",
    "Candidate",
    "EvergreenUpdate",
    "as_item",
    "consolidated_bullets",
    "is_event",
    "normalised",
    "preferences",
    "recurring",
    "title_of",
    "update_evergreen",
]

MIN_SOURCES = 3
HEADING = "Consolidated"
PREFERENCES = "Preferences"
#: Distinct notes a preference must be stated in before it is promoted: never a single note.
MIN_PREFERENCE_DAYS = 3
PREFERENCE_JACCARD = 0.5
RECUR_JACCARD = 0.7
TITLE_WORDS = 4
#: Weeks a recurring line must span: a line said every day of one week is that week's status.
MIN_WEEKS = 2
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
    """Lines of at least ``MIN_TOKENS`` words said, in these words or nearly (``cluster_lines``: a
    word-set Jaccard of ``RECUR_JACCARD``, no number or name that differs), in ``min_sources`` or
    more sources, in order of first sight (a line said in other words each time must span
    ``MIN_WEEKS`` weeks: a status line reworded day by day is that week's, not a standing fact): ``lines`` are the notes rolled up now, ``earlier`` the
    lines of earlier summaries (each summary one source); a fact is a candidate only when the notes
    hold it, in the fullest wording they hold it in."""
    from sidecar.consolidate.cluster import cluster_lines

    mine = [ln for ln in lines if "\n" not in ln.text and _fact_like(ln.text)]  # a fence is an example
    before = [ln for ln in earlier if "\n" not in ln.text and _fact_like(ln.text)]
    ours = {id(ln) for ln in mine}
    out = []
    for cluster in cluster_lines([*mine, *before], RECUR_JACCARD):
        now = [m for m in cluster.members if id(m) in ours]
        sources = {m.source for m in cluster.members}
        exact: dict[str, set[str]] = {}
        for m in cluster.members:
            exact.setdefault(normalised(m.text), set()).add(m.source)
        said_alike = max(len(s) for s in exact.values()) >= min_sources
        if now and len(sources) >= min_sources and (said_alike or len({_week(s) for s in sources}) >= MIN_WEEKS):
            kept = max(now, key=lambda m: (len(m.text.split()), m.text))
            out.append(Candidate(kept.text, tuple(sorted(sources))))
    return out


def _week(source: str) -> str:
    """The ISO week a source stands for: a note's week, a summary's name (else the path itself)."""
    from sidecar.consolidate.periods import note_day, period_of

    day = note_day(source)
    return period_of(day) if day is not None else source.rsplit("/", 1)[-1].removesuffix(".md")


def _fact_like(text: str) -> bool:
    key = normalised(text)
    return len(key.split()) >= MIN_TOKENS and not is_event(key)


def is_event(key: str) -> bool:
    """Whether a normalised line opens with a verb in the past tense (it reports what was done)."""
    head = key.split(" ", 1)[0]
    return head in _PAST or (len(head) > 4 and head.endswith("ed") and not head.endswith("eed"))


def preferences(texts: dict[str, str], min_days: int = MIN_PREFERENCE_DAYS) -> list[Candidate]:
    """The operator's explicit preferences in the notes (``operator.extract_preferences``) stated in
    at least ``min_days`` distinct notes, each once with every note that stated it. Rules that say
    one thing in other words (key words at a Jaccard of ``PREFERENCE_JACCARD``) count together: a
    single note is never a standing preference."""
    from sidecar.consolidate.operator import extract_preferences

    groups: list[tuple[frozenset[str], str, list[str]]] = []
    for source, text in sorted(texts.items()):
        lines = text.splitlines()
        for found in extract_preferences(text, source):
            said = LIST_MARKER.sub("", lines[found.line - 1]).strip() if 0 < found.line <= len(lines) else ""
            key = frozenset(found.key.split())
            group = next((g for g in groups if _jaccard(g[0], key) >= PREFERENCE_JACCARD), None)
            if group is None:
                groups.append((key, said or found.rule, [source]))
            elif source not in group[2]:
                group[2].append(source)
    return [Candidate(text, tuple(sorted(s))) for _, text, s in groups if len(s) >= min_days]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def consolidated_bullets(text: str, heading: str = HEADING) -> list[tuple[str, tuple[str, ...]]]:
    """The promoted lines of the evergreen file's ``## <heading>`` section with the sources their
    provenance comments name."""
    out = []
    for line in _body(text, heading)[1]:
        found = _FROM.search(line)
        if line.strip() and not line.startswith("#") and found:
            out.append((line.strip(), tuple(s.strip() for s in found.group(1).split(",") if s.strip())))
    return out


def update_evergreen(
    current: str,
    candidates: Sequence[Candidate],
    cap_bytes: int,
    retire: Collection[str] = (),
    heading: str = HEADING,
) -> EvergreenUpdate:
    """Drop the ``## <heading>`` lines whose normalised form is in ``retire`` (values a newer line
    changed), then add the candidates the file lacks, while the file fits ``cap_bytes``. Each
    promoted line is a heading section of its own (``### <its first words>``), so a scanner
    finding in one withholds that line alone from the prompt; a section written the older way
    (bullets right under the heading) is rewritten so."""
    span, body = _body(current, heading)
    lines = current.splitlines(keepends=True)
    hand = [ln for ln in body if not ln.startswith("### ") and not _FROM.search(ln)]
    ours = [ln.strip() for ln in body if _FROM.search(ln) and not ln.startswith("#")]
    removed = [ln for ln in ours if normalised(ln) in retire]
    ours = [ln for ln in ours if normalised(ln) not in retire]
    known = {normalised(line) for line in current.splitlines() if normalised(line) not in retire}
    present = [c for c in candidates if normalised(c.text) in known]
    added: list[Candidate] = []
    over: list[Candidate] = []

    facts_span = _body(current, HEADING)[0] if heading == PREFERENCES else None
    after = None if facts_span is None else facts_span[0]

    def render(entries: list[str]) -> str:
        section = _render_section(heading, hand, entries) if entries or hand or span else ""
        if span is None and section and after is not None:  # before the promoted facts: read first
            return "".join(lines[:after]) + section + "".join(lines[after:])
        if span is None:
            before = "".join(lines)
            lead = "" if not before else ("\n" if before.endswith("\n") else "\n\n")
            return before + lead + section if section else before
        return "".join(lines[: span[0]]) + section + "".join(lines[span[1] :])

    for candidate in candidates:
        key = normalised(candidate.text)
        if key in known:
            continue
        entry = _bullet(candidate).strip()
        if len(render([*ours, entry]).encode("utf-8")) > cap_bytes:
            over.append(candidate)
            continue
        known.add(key)
        ours.append(entry)
        added.append(candidate)
    text = render(ours)
    if text == current:
        return EvergreenUpdate(None, (), tuple(present), tuple(over))
    return EvergreenUpdate(text, tuple(added), tuple(present), tuple(over), tuple(removed))


def _render_section(heading: str, hand: list[str], entries: list[str]) -> str:
    """``## heading``, the lines written there by hand, then one ``###`` section per promoted line."""
    kept = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in hand).strip("\n")
    out = [f"## {heading}\n\n"] + ([kept + "\n\n"] if kept else [])
    out += [f"### {title_of(entry)}\n{entry}\n\n" for entry in entries]
    return "".join(out)


def title_of(line: str) -> str:
    """A line's section heading: its first words, without markers, comments or ``#``."""
    words = LIST_MARKER.sub("", COMMENT.sub(" ", line)).split()
    title = " ".join(words[:TITLE_WORDS]).rstrip(".,;:!?")
    return title.replace("#", "").strip() or "Fact"


def _body(text: str, heading: str) -> tuple[tuple[int, int] | None, list[str]]:
    """The 0-based [start, end) line span of the ``## <heading>`` section, its subsections included
    (None when absent), and its lines after the heading line."""
    lines = text.splitlines(keepends=True)
    sections = split_sections(text)
    for n, section in enumerate(sections):
        if section.heading.rsplit(" > ", 1)[-1] == heading and lines[section.line_start - 1].startswith("## "):
            end = section.line_end
            for later in sections[n + 1 :]:
                if not later.heading.startswith(section.heading + " > "):
                    break
                end = later.line_end
            return (section.line_start - 1, end), lines[section.line_start : end]
    return None, []


def _bullet(candidate: Candidate) -> str:
    return f"{as_item(candidate.text)} <!-- from {', '.join(candidate.sources)} -->\n"
