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
from itertools import combinations

from sidecar.consolidate.conduct import (
    REVERSAL,
    chores,
    is_rule,
    key_text,
    listed_rule,
    obeys_someone,
    rule_body,
    rules_heading,
)
from sidecar.consolidate.conversation import conversations
from sidecar.consolidate.cores import MIN_SOURCES, MIN_WEEKS, changed_later, cores, is_row, row_cells, rule_cores
from sidecar.consolidate.cores import week_of as _week
from sidecar.consolidate.periods import Line
from sidecar.consolidate.reworded import Statement, group, same, statement
from sidecar.consolidate.routine import routine_by
from sidecar.consolidate.text import COMMENT, is_event, normalised, reports_work, unstamped
from sidecar.index.query import STOPWORDS
from sidecar.scanner.sections import split_sections
from sidecar.write.dedup import LIST_MARKER, MIN_TOKENS

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

HEADING = "Consolidated"
PREFERENCES = "Preferences"
#: Distinct notes a preference must be stated in before it is promoted: never a single note.
MIN_PREFERENCE_DAYS = 3
PREFERENCE_JACCARD = 0.5
#: The overlap at which two rules' own words are one rule reworded (``_rules_joined``): a rule said
#: again swaps its verb ("ring" / "phone the client before any reprint").
RULE_JACCARD = 0.4
RECUR_JACCARD = 0.7
TITLE_WORDS = 4
_FROM = re.compile(r"<!--\s*from\s+(.*?)\s*-->")
_QUOTE_MARK = re.compile(r"^(?:>\s*)+")
#: Whole sentences in quotation marks inside a line: what someone said, told with who said it
#: ('Dana said it again on the phone: "Never ..."', '"Ring me first." That was Dana.').
_QUOTED_SAYING = re.compile(r"[\"“](?P<said>[^\"“”]{2,}?[.!?])[\"”]")
_HEADING_LINE = re.compile(r"^#{1,6}\s")
_TURN = re.compile(
    r"^(?:[-*+]\s+)?[A-Z][\w'.-]*(?:\s[A-Z][\w'.-]*)?:\s+\S"
)  # "Maria: ...", as conversation.py reads one


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


def recurring(
    lines: Iterable[Line], min_sources: int = MIN_SOURCES, *, earlier: Iterable[Line] = ()
) -> list[Candidate]:
    """Lines of at least ``MIN_TOKENS`` words said, in these words or nearly (``cluster_lines``: a
    word-set Jaccard of ``RECUR_JACCARD``, no number or name that differs) or in other words
    (``reworded``: the same numbers and names, word forms as the index reads them), in
    ``min_sources`` or more sources, in order of first sight (a line said in other words each time must span
    ``MIN_WEEKS`` weeks: a status line reworded day by day is that week's, not a standing fact): ``lines`` are the notes rolled up now, ``earlier`` the
    lines of earlier summaries (each summary one source); a fact is a candidate only when the notes
    hold it, in the fullest wording they hold it in."""
    from sidecar.consolidate.cluster import cluster_lines

    lines = list(lines)
    # A conversation's turn is speech, said as it was said ("Thanks, John! Speak to you soon!"):
    # only its near-duplicates recur with it, and it is never cut to a statement inside it.
    talk = {id(ln) for ln in lines} - {id(ln) for ln in conversations(lines)[0]}
    read = cores([*lines, *earlier], min_sources, whole=talk)  # a statement wrapped differently each day
    # a fence is an example, not a fact
    mine = [c for cut in read[: len(lines)] for c in cut if "\n" not in c.text and _fact_like(c.text)]
    before = [c for cut in read[len(lines) :] for c in cut if "\n" not in c.text and _fact_like(c.text)]
    ours = {id(ln) for ln in mine}
    clusters = cluster_lines([*mine, *before], RECUR_JACCARD)

    # The same statement in other words on other days (``reworded``) joins; two lines each
    # recurring in their own words on their own are two facts (one value, two subjects).
    said = [
        Statement(frozenset(), frozenset(), frozenset()) if id(c.kept) in talk else statement(c.kept.text)
        for c in clusters
    ]
    cut = {id(c) for n, line in enumerate([*lines, *earlier]) for c in read[n] if c is not line}
    out = []
    alone = [_recurs(c.members, ours, min_sources) for c in clusters]
    for joined in group(said, alone=alone):
        members = [m for i in joined for m in clusters[i].members]
        if not _recurs(members, ours, min_sources):
            continue
        sources = {m.source for m in members}
        exact: dict[str, set[str]] = {}
        for m in members:
            exact.setdefault(normalised(m.text), set()).add(m.source)
        now = [m for m in members if id(m) in ours]
        kept = max(now, key=lambda m: (len(exact[normalised(m.text)]), len(m.text.split()), m.text))
        if is_row(kept.text) and not _says(kept.text):
            continue  # a table's header row, or a row of values: what its header says, no statement
        out.append((Candidate(kept.text, tuple(sorted(sources))), id(kept) in cut))
    # A statement cut from its wrappers that a later line says with another value is no current
    # fact, whether or not the change search read the wrapped lines as a change.
    cuts = [c for c, was_cut in out if was_cut]
    changed = {
        c.text
        for c, gone in zip(cuts, changed_later([(c.text, c.sources) for c in cuts], [*lines, *earlier]), strict=True)
        if gone
    }
    return [c for c, _ in out if c.text not in changed]


def _recurs(members: Sequence[Line], ours: set[int], min_sources: int) -> bool:
    """Whether lines of one statement recur: said in the notes rolled up now, in ``min_sources``
    sources, in these words in as many, or else over ``MIN_WEEKS`` weeks."""
    if not any(id(m) in ours for m in members):
        return False
    sources = {m.source for m in members}
    if len(sources) < min_sources:
        return False
    exact: dict[str, set[str]] = {}
    for m in members:
        exact.setdefault(normalised(m.text), set()).add(m.source)
    return max(len(s) for s in exact.values()) >= min_sources or len({_week(s) for s in sources}) >= MIN_WEEKS


def _says(row: str) -> bool:
    """Whether a table's row has a cell of ``MIN_TOKENS`` words or more: a statement written in a
    row ("| backfills | The backfill runs on the large runner |"), where a header row ("| check |
    status | note |") and a row of values ("| ledger-api | Priya |") have none."""
    return any(len(normalised(cell).split()) >= MIN_TOKENS for cell in row_cells(row))


def _fact_like(text: str) -> bool:
    return len(normalised(text).split()) >= MIN_TOKENS and not reports_work(text)


def preferences(texts: dict[str, str], min_days: int = MIN_PREFERENCE_DAYS) -> list[Candidate]:
    """The operator's preferences and rules of conduct stated in at least ``min_days`` distinct
    notes over ``MIN_WEEKS`` weeks (or in the same words in as many notes), each once with every
    note that stated it. A rule is what ``operator.extract_preferences`` finds or a line stating
    how things should be done in any of the forms ``conduct`` reads; the same rule in other words
    counts together (``reworded``, on the rule without the words that make it one), and so does a
    line saying it with no such word ("Chisels get sharpened every Friday") once two notes state it
    as a rule. The lines under a heading of someone's rules ("### Notes from Hedda", "## House
    rules") state rules in a list's clipped way ("- no Friday deploys"). A single note is never a
    standing preference, and an order to obey someone is never one, however often it is said. A
    line taking a rule back ("no need to ... any more") states no rule."""
    from sidecar.consolidate.operator import extract_preferences

    said: list[tuple[str, str, bool]] = []  # (line, source, stated as a rule)
    for source, text in sorted(texts.items()):
        lines = text.splitlines()
        ruled = {found.line for found in extract_preferences(text, source)}
        in_fence = listed = False
        for number, raw in enumerate(lines, start=1):
            if raw.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
                continue
            if not in_fence and _HEADING_LINE.match(raw):
                listed = rules_heading(raw)  # the lines under a heading of rules are its rules
            # a quoted message ("> Dana in #ops, 08:34: \"...\"") is read as what it says: the
            # operator's wish pasted from a chat is said as much as one written in the notes
            line = _QUOTE_MARK.sub("", LIST_MARKER.sub("", raw).strip())
            # a wish quoted with who said it, however the line tells that, is what it says
            line = " ".join(m["said"].strip() for m in _QUOTED_SAYING.finditer(line)) or line
            if in_fence or not line or line.startswith(("#", "<!--", "|")) or obeys_someone(line):
                continue
            if REVERSAL.search(line):
                continue  # a rule taken back is no statement of it (``reversed``)
            line = unstamped(line) or line
            if number in ruled or is_rule(line) or (listed and listed_rule(line)):
                said.append((line, source, True))
            elif _fact_like(line):
                said.append((line, source, False))
    said = rule_cores(said)
    # errands told as instructions, one mould filled with the day's object, are no rules
    errands = chores(line for line, _, as_rule in said if as_rule)
    said = [(line, source, as_rule and line not in errands) for line, source, as_rule in said]
    keys = [key_text(rule_body(line) or line) if as_rule else line for line, _, as_rule in said]
    logged = routine_by([(_week(source), source, line) for line, source, _ in said])
    # One item per wording (a week's routine line is no rule): the days it was said on, whether
    # it was said as a rule, and the key it is compared by.
    wordings: dict[str, tuple[str, set[str], bool, str]] = {}
    for (line, source, as_rule), key, log in zip(said, keys, logged, strict=True):
        if log:
            continue
        first = wordings.setdefault(normalised(line), (line, set(), as_rule, key))
        first[1].add(source)
    items = list(wordings.values())
    # A wording said on enough days stands on its own: two such are two rules or facts
    # ("billing must stay above 99.5 percent uptime" / "ledger must stay above 99.5 ...").
    alone = [len(days) >= min_days for _, days, _, _ in items]
    read = [statement(key) for _, _, _, key in items]
    out = []
    for joined in _rules_joined(group(read, alone=alone), read, [r for _, _, r, _ in items], alone):
        rules = [items[i] for i in joined if items[i][2]]
        sources = sorted({s for i in joined for s in items[i][1]})
        if len({s for _, days, _, _ in rules for s in days}) < 2 or len(sources) < min_days:
            continue
        if max(len(days) for _, days, _, _ in rules) < min_days and len({_week(s) for s in sources}) < MIN_WEEKS:
            continue
        text = max(rules, key=lambda r: (len(r[1]), -rules.index(r)))[0]
        out.append(Candidate(text, tuple(sources)))
    return out


def _rules_joined(
    groups: list[list[int]], read: Sequence[Statement], as_rule: Sequence[bool], alone: Sequence[bool]
) -> list[list[int]]:
    """``groups`` with two groups joined where a rule of one and a rule of the other are one
    statement by their own words (``reworded.same``), a word other lines say too included: a rule
    reworded from day to day changes its verb and small words ("put her in copy on every invoice
    over 500 pounds" / "copy her in on any invoice over 500 pounds"), which ``group`` reads as
    two subjects when other lines say those words. Two groups that each stand alone stay apart.
    Only the rules are compared, through the postings of their words, so it stays small."""
    owner = {i: g for g, members in enumerate(groups) for i in members}
    parent = list(range(len(groups)))
    solo = [any(alone[i] for i in members) for members in groups]

    def root(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    postings: dict[str, list[int]] = {}
    for i in (i for i in range(len(read)) if as_rule[i]):
        for other in dict.fromkeys(o for word in read[i].words for o in postings.get(word, ())):
            a, b = root(owner[i]), root(owner[other])
            if a != b and not (solo[a] and solo[b]) and same(read[i], read[other], RULE_JACCARD):
                parent[max(a, b)] = min(a, b)
                solo[min(a, b)] = solo[a] or solo[b]
        for word in read[i].words:
            postings.setdefault(word, []).append(i)
    out: dict[int, list[int]] = {}
    for g, members in enumerate(groups):
        out.setdefault(root(g), []).extend(members)
    return sorted((sorted(members) for members in out.values()), key=lambda m: m[0])


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

    facts_span = _body(current, HEADING)[0] if heading == PREFERENCES else None
    after = None if facts_span is None else facts_span[0]

    if span is None and after is not None:  # before the promoted facts: read first
        head, tail = "".join(lines[:after]), "".join(lines[after:])
    elif span is None:
        head = "".join(lines)
        head, tail = head + ("" if not head else ("\n" if head.endswith("\n") else "\n\n")), ""
    else:
        head, tail = "".join(lines[: span[0]]), "".join(lines[span[1] :])

    def render(entries: list[str]) -> str:
        if entries or hand or span:
            return head + _render_section(heading, hand, entries) + tail
        return "".join(lines)  # nothing to write: the file as it was

    # The file with a section holding entries is its frame and one block per entry, so each
    # candidate is weighed by its own block's bytes against what the file holds so far.
    used = len((head + _render_section(heading, hand, ours) + tail).encode("utf-8"))
    taken: dict[int, str] = {}
    left: set[int] = set()
    for n in _by_worth(candidates):
        candidate = candidates[n]
        key = normalised(candidate.text)
        if key in known:
            continue
        entry = _bullet(candidate).strip()
        size = len(_entry_block(entry).encode("utf-8"))
        if used + size > cap_bytes:
            left.add(n)
            continue
        known.add(key)
        taken[n] = entry
        used += size
    # written in the order they were first said, whichever the cap let in
    ours += [taken[n] for n in sorted(taken)]
    added = [candidates[n] for n in sorted(taken)]
    over = [candidates[n] for n in sorted(left)]
    text = render(ours)
    if text == current:
        return EvergreenUpdate(None, (), tuple(present), tuple(over))
    return EvergreenUpdate(text, tuple(added), tuple(present), tuple(over), tuple(removed))


#: A word of a line as the moulds of ``_by_worth`` read it: letters, no digits.
_MOULD_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _by_worth(candidates: Sequence[Candidate]) -> list[int]:
    """The order in which ``candidates`` are let into the evergreen file's cap: the ones whose
    mould the fewest other candidates share first, then in the order they were first said. A
    mould is two of a line's words, stopwords aside, and the candidates holding both are its fills:
    a log line written each day with another colleague and topic ("pairing with Tom on the helm
    upgrade for an hour", "... with Maria on logging cost ...") recurs word for word in dozens of
    fills, where a fact has few siblings ("the cost report job fires at 02:27 UTC"). When the cap
    binds, the facts are kept and the log's fills left out; under it, nothing changes."""
    words = [
        sorted({w for w in (m.lower() for m in _MOULD_WORD.findall(c.text)) if w not in STOPWORDS and len(w) > 1})
        for c in candidates
    ]
    fills: dict[tuple[str, str], int] = {}
    for said in words:
        for pair in combinations(said, 2):
            fills[pair] = fills.get(pair, 0) + 1
    siblings = [max((fills[pair] for pair in combinations(said, 2)), default=0) for said in words]
    return sorted(range(len(candidates)), key=lambda n: (siblings[n], n))


def _render_section(heading: str, hand: list[str], entries: list[str]) -> str:
    """``## heading``, the lines written there by hand, then one ``###`` section per promoted line."""
    kept = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in hand).strip("\n")
    out = [f"## {heading}\n\n"] + ([kept + "\n\n"] if kept else [])
    out += [_entry_block(entry) for entry in entries]
    return "".join(out)


def _entry_block(entry: str) -> str:
    """One promoted line's ``###`` section as ``_render_section`` writes it."""
    return f"### {title_of(entry)}\n{entry}\n\n"


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
