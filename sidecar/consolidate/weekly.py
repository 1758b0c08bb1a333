"""A week's summary file, made from the week's notes: its current lines clustered, its standing
lines (facts, rules, states) and its log ("Reviewed ...", and the routine lines written in one
mould over and over: ``routine.py``) summarised apart, a conversation
(a transcript of turns) as a digest line (``conversation.py``), the lines that changed a value
listed first with what they replaced, the lines a newer value superseded last, and every line the
injection scanner flags left out (``guard.py``). The CPU-heavy steps run on threads.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import structlog

from sidecar.consolidate.bound import shared
from sidecar.consolidate.cluster import Cluster, cluster_lines, vector_partners
from sidecar.consolidate.conversation import Conversation, conversations, digest
from sidecar.consolidate.guard import clean_summary
from sidecar.consolidate.periods import Line, apart_parts, as_context, note_day, period_bounds, week_lines
from sidecar.consolidate.promote import COMMENT, normalised
from sidecar.consolidate.report import DroppedLine, SupersededLine, Withheld
from sidecar.consolidate.routine import apart, routine
from sidecar.consolidate.summarise import SourceItem, Summariser, Summary, extractive_summary
from sidecar.consolidate.supersede import SUPERSEDED, Said, changed_section, in_sections, superseded_line
from sidecar.consolidate.text import reports_work
from sidecar.retrieval.standing import REST_PREFIX

__all__ = [
    "FACT_BUDGET_SHARE",
    "LOG_BUDGET_SHARE",
    "LOG_SUFFIX",
    "REST_DIR",
    "SUMMARY_DIR",
    "Embed",
    "Week",
    "rest_path",
    "summarise_week",
]

SUMMARY_DIR = "daily/summaries"
#: Where a week's left-out lines go (``Week.rest``): in the archive, out of the tier's cap and the
#: block, where search ranks them as live text (``standing.REST_PREFIX``, the one place it is named).
REST_DIR = REST_PREFIX.rstrip("/")
FACT_BUDGET_SHARE = 2
LOG_BUDGET_SHARE = 2  # the log's budget: the section budget divided by this
#: A week's summary holds at most this many section budgets of lines, whatever its sections
#: (``bound.shared``): what one section of standing lines may hold. The rest of its lines that are
#: no routine is kept beside it in the archive (``Week.rest``), where search ranks it as live text.
WEEK_BOUND = FACT_BUDGET_SHARE
#: A week's own superseded lines in its summary: at most the section budget divided by this; the
#: others of the section budget's worth go with the rest of it (``Week.rest``), out of the tier's cap.
SUPERSEDED_SHARE = 4
_FIT_TRIES = 4  # an extractive part asked again for fewer lines, at most this many times
#: A heading of at most this many words names a topic: its part's lines go under it in a summary or
#: its rest, whatever their number; a longer one (a note's title) heads them only when it heads one
#: line (``_placed``).
TOPIC_WORDS = 4
_HEADING_WORD = re.compile(r"(?<!\w)[^\W\d_][\w'’-]*")
#: Embeds lines into L2-normalised rows (an embedding model's background path), for clustering.
Embed = Callable[[Sequence[str]], Awaitable[npt.NDArray[np.float32]]]
_ENTRY_ID = re.compile(r"\bje_[0-9a-f]{32}\b")
LOG_SUFFIX = " (log)"  # the heading of a summary's log part: "<heading> (log)"
#: A value in a line: a digit, a capital inside a word, or a capital that opens no sentence (a name).
_VALUE = re.compile(r"\d|[a-z][A-Z]|(?<=[^\s.!?:;*+>-] )[A-Z]")

log = structlog.get_logger("sidecar.consolidate")


@dataclass(frozen=True, slots=True)
class Week:
    """A week's summary as it will be written, and what it left out."""

    name: str
    path: str
    sources: tuple[str, ...]
    text: str
    engine: str
    dropped: tuple[DroppedLine, ...]
    evidence: tuple[str, ...]
    superseded: tuple[SupersededLine, ...] = ()
    clustered_by: str = "words"
    withheld: tuple[Withheld, ...] = ()
    fallbacks: tuple[str, ...] = ()
    #: The rest of the summary (``rest_path``): the week's current lines its bound left out, but for
    #: its routine lines, each a ``###`` section of its own; empty when the summary kept them all.
    rest: str = ""


def rest_path(name: str) -> str:
    """The file holding the lines week ``name``'s summary left out (``Week.rest``)."""
    return f"{REST_DIR}/{name}.md"


async def summarise_week(
    name: str,
    sources: Sequence[str],
    texts: dict[str, str],
    summariser: Summariser,
    *,
    budget: int,
    threshold: float,
    stale: dict[str, Said],
    embed: Embed | None = None,
    frames: Collection[frozenset[str]] = frozenset(),
    readings: Collection[str] = frozenset(),
) -> Week:
    """A week's summary file: the lines that changed a value first (``## Changed``, as said, never
    cut by the budget), then one section per heading, each made by the summariser from the week's
    merged clusters under a comment naming the notes it came from, and last the week's lines a
    newer value superseded (``## Superseded``, within ``budget`` characters: the rest stay in the
    archive and are reported). Standing lines and changed values stand a few to a
    ``###`` section (``in_sections``). The clustering and the scan run off the event loop;
    a line the scanner flags is left out (``guard.py``). ``readings`` (keys, ``normalised``: the
    run's ``changes.reading_keys``, a value pasted day after day) are routine lines: the log's."""
    lines, changed, old, talks = await asyncio.to_thread(_week_lines, sources, texts, stale, frames)
    vectors = await _vectors(embed, lines)
    shown = {normalised(c.text) for c in changed}
    parts, dropped, moulds = await asyncio.to_thread(
        functools.partial(_clustered, shown=shown, frames=frames, readings=readings),
        name,
        lines,
        threshold,
        vectors,
        budget,
    )
    monday, sunday = period_bounds(name)
    head = f"# Summary of {name} ({monday.isoformat()} to {sunday.isoformat()})\n"
    out = [head, changed_section(changed, _replaced(stale))]
    shown_talks = [
        f"\n## {talk.heading} ({note_day(talk.source)})\n<!-- from {talk.source} -->\n{digest(talk)}" for talk in talks
    ]
    retired_shown, retired_lines, left = await asyncio.to_thread(_superseded, name, old, stale, threshold, budget)
    # a line as written -> what it is read under in its note (``_titled``), for the titles
    part_contexts = [_contexts(members, title) for title, members, _ in parts]
    contexts = {text: said for found in part_contexts for text, said in found.items()}
    heads = _heads(parts)
    # the bound counts what the summary writes: its fixed sections, then each part's heading,
    # comment, titles and lines (``bound``)
    fixed = sum(map(len, out)) + sum(map(len, shown_talks)) + len(retired_shown)
    whole = [
        len(part_head) + len(_body(title, "".join(f"{c.kept.text}\n" for c in members), found))
        for (title, members, _), part_head, found in zip(parts, heads, part_contexts, strict=True)
    ]
    parts = shared(parts, max(0, int(budget * WEEK_BOUND) - fixed), whole)  # ``bound``
    engines: list[str] = []
    fallbacks: list[str] = []
    rest: dict[str, list[tuple[str, tuple[str, ...]]]] = {}  # a heading -> its lines the bound left out
    last = ""
    for (title, members, allowed), found, part_head, size in zip(parts, part_contexts, heads, whole, strict=True):
        summary = await _fitted(
            summariser, title, members, found, room=allowed - len(part_head), whole=size - len(part_head)
        )
        engines.append(summary.engine)
        if summary.fallback_reason:
            fallbacks.append(summary.fallback_reason)
        dropped += _left_over(rest, title, summary, members, moulds=moulds, period=name)
        if summary.text.strip():  # a log's second part goes on in its section (``_parts``)
            out.append(_placed(title, _head(title, members, title == last), summary.text.strip() + "\n", found))
            last = title
    out += shown_talks  # a digest each; the transcript is searchable whole in the archive
    for talk in talks:
        dropped.append(
            DroppedLine(f"{len(talk.turns)} turns", (talk.source,), "conversation", name, digest(talk).strip())
        )
    out += [retired_shown] if retired_shown else []
    dropped += left
    if len(out) == 2 and not changed:
        out.append("\nNo notes this week.\n")
    withheld: list[Withheld] = []
    text = await asyncio.to_thread(clean_summary, "".join(out), f"{SUMMARY_DIR}/{name}.md", withheld)
    rest_text = (
        await asyncio.to_thread(
            clean_summary, _rest_text(name, rest, contexts, retired_lines), rest_path(name), withheld
        )
        if rest or retired_lines
        else ""
    )
    evidence = tuple(dict.fromkeys(_ENTRY_ID.findall("\n".join(texts[s] for s in sources))))
    engine = "+".join(dict.fromkeys(engines)) or "extractive"
    retired = tuple(
        SupersededLine(line.text, line.source, stale[k].text, stale[k].where, stale[k].when[0].isoformat())
        for k, line in {normalised(line.text): line for line in old}.items()
    )
    clustered_by = "words" if vectors is None else "words+embeddings"
    return Week(
        name,
        f"{SUMMARY_DIR}/{name}.md",
        tuple(sources),
        text,
        engine,
        tuple(dropped),
        evidence,
        retired,
        clustered_by,
        tuple(withheld),
        tuple(dict.fromkeys(fallbacks)),
        rest_text,
    )


def _left_over(
    rest: dict[str, list[tuple[str, tuple[str, ...]]]],
    title: str,
    summary: Summary,
    members: list[Cluster],
    *,
    moulds: set[int],
    period: str,
) -> list[DroppedLine]:
    """A part's left-out lines (``_summary_dropped``); those its summary left out over the budget
    are added to ``rest`` by heading, but for the lines of a log's second part (``moulds``: their
    clusters' ids): routine lines and one-off lines with no value, which match common words of
    unrelated questions."""
    left_out = _summary_dropped(summary, members, period)
    for item, line in zip(summary.dropped, left_out, strict=True):
        ids = [int(i) for i in item.sources if i.isdigit() and int(i) < len(members)]
        if line.reason == "budget" and not any(id(members[i]) in moulds for i in ids):
            rest.setdefault(title.removesuffix(LOG_SUFFIX), []).append((line.text, line.sources))
    return left_out


def _rest_text(
    name: str,
    rest: dict[str, list[tuple[str, tuple[str, ...]]]],
    contexts: dict[str, str] | None = None,
    retired: Sequence[str] = (),
) -> str:
    """The file of the lines a week's summary left out (``Week.rest``), by heading, with a comment
    naming their notes, each line a section of its own titled with what the line is read under in
    its note (``_placed``, ``_titled``)."""
    monday, sunday = period_bounds(name)
    out = [f"# Left out of the summary of {name} ({monday.isoformat()} to {sunday.isoformat()})\n"]
    for heading, lines in rest.items():
        comment = f"<!-- from {', '.join(sorted({s for _, sources in lines for s in sources}))} -->\n"
        text = "".join(f"{line}\n" for line, _ in lines)
        out.append(_placed(heading, f"\n## {heading}\n{comment}", text, contexts or {}))
    if retired:  # the week's lines a newer value superseded, each with when and where it changed
        out.append(f"\n## {SUPERSEDED}\n{''.join(retired)}")
    return "".join(out)


def _heads(parts: Sequence[tuple[str, list[Cluster], int]]) -> list[str]:
    """What each part writes before its lines when every part is written (``_head``)."""
    return [_head(title, members, n > 0 and parts[n - 1][0] == title) for n, (title, members, _) in enumerate(parts)]


def _head(title: str, members: Sequence[Cluster], goes_on: bool) -> str:
    """What a part writes before its lines: its ``## heading`` (but for a log's second part going
    on in its first part's section, ``goes_on``) and a comment naming the notes it came from."""
    comment = f"<!-- from {', '.join(sorted({s for c in members for s in c.sources}))} -->\n"
    return comment if goes_on else f"\n## {title}\n{comment}"


def _body(title: str, text: str, contexts: dict[str, str]) -> str:
    """A part's lines under its heading, as the week's bound counts them: a log's as they are, the
    others each under a ``###`` title (``in_sections``, ``_titled``). ``_placed`` writes them so or
    shorter."""
    return text if title.endswith(LOG_SUFFIX) else _titled(in_sections(text), contexts)


def _placed(title: str, head: str, text: str, contexts: dict[str, str]) -> str:
    """A part as a summary or its rest writes it after its heading and comment (``head``: ``_head``).
    A log's lines go on under the heading as they are. The others are each a section of its own:
    under the heading (``###``, ``_body``) when it names a topic (at most ``TOPIC_WORDS`` words but
    numbers: "Quayside House", "billing-api", "Decisions"), which is what lines that seldom name it
    are about, or when it heads one line; else beside it (``##``). A section's chunk carries every
    heading above it, and a note's title ("Session 16:10: track down the 500s in billing-worker
    staging") over each of a week's lines ranked dozens of one-line chunks on its words above the
    line a question naming those words asks for; in the note the title heads one chunk of many
    lines, and beside them it heads its own."""
    sectioned = _body(title, text, contexts)
    if (
        title.endswith(LOG_SUFFIX)
        or len(_HEADING_WORD.findall(title)) <= TOPIC_WORDS
        or sum(ln.startswith("### ") for ln in sectioned.splitlines()) <= 1
    ):
        return head + sectioned
    return head + _titled(in_sections(text, "##"), contexts, "##")


async def _fitted(
    summariser: Summariser, title: str, members: list[Cluster], contexts: dict[str, str], *, room: int, whole: int
) -> Summary:
    """A part's summary whose lines, as written with their titles (``_body``), take at most
    ``room`` characters, or all of them when they fit (``whole``). The summariser counts its lines
    alone, so it is asked for its share of ``room`` in lines; an extractive summary (a model's
    fallback too) that still writes more is made again for less, without the model (a model's
    answer is used as it is: asking a model again costs the run's time)."""
    items = [SourceItem(str(i), c.kept.text) for i, c in enumerate(members)]
    lines = sum(len(c.kept.text) + 1 for c in members)
    ask = max(0, room) * lines // max(1, whole)  # at least every line when they fit
    summary = await summariser.summarise(items, ask)
    for _ in range(_FIT_TRIES):
        over = len(_body(title, summary.text.strip() + "\n", contexts)) - room if summary.text.strip() else 0
        if over <= 0 or summary.engine != "extractive" or ask == 0:
            break
        ask = max(0, ask - over)  # the extractive summary again, the model not asked twice
        summary = await extractive_summary(items, ask, summary.fallback_reason)
    return summary


def _superseded(
    name: str, old: list[Line], stale: dict[str, Said], threshold: float, budget: int
) -> tuple[str, list[str], list[DroppedLine]]:
    """A week's lines a newer value superseded, kept for the record within one section's
    ``budget`` (near-duplicates merged as the current lines are: "sprint 11" said three ways is
    one line): the summary's ``## Superseded`` with the first of them, within ``SUPERSEDED_SHARE``
    of the budget (the first one whatever its length); the others, for the rest of the summary (``Week.rest``: out of the tier's cap,
    ranked as a summary's ``## Superseded`` is) and reported as left out over the budget, as the
    lines of its bound are; and what neither keeps, reported so too."""
    if not old:
        return "", [], []
    kept: list[str] = []
    rest: list[str] = []
    dropped: list[DroppedLine] = []
    room, share = budget, budget // SUPERSEDED_SHARE
    for cluster in cluster_lines(old, threshold):
        line = superseded_line(cluster.kept.text, stale[normalised(cluster.kept.text)])
        if len(line) > room:
            dropped += [DroppedLine(m.text, (m.source,), "budget", name) for m in cluster.members]
            continue
        room -= len(line)
        if not rest and (len(line) <= share or not kept):  # the first line whatever its length
            share -= len(line)
            kept.append(line)
            dropped += [DroppedLine(m.text, (m.source,), "duplicate", name, cluster.kept.text) for m in cluster.merged]
        else:
            rest.append(line)
            dropped += [DroppedLine(m.text, (m.source,), "budget", name) for m in cluster.members]
    return (f"\n## {SUPERSEDED}\n" + "".join(kept) if kept else ""), rest, dropped


def _contexts(members: Sequence[Cluster], heading: str) -> dict[str, str]:
    """For each of a part's lines as written, what it is read under in its note (``Line.context``:
    a nested bullet's parent, a table row's header, a quoted email's subject, a bold label), from
    the first of its cluster's lines that has one; none that its section's heading already says."""
    out: dict[str, str] = {}
    said = heading.removesuffix(LOG_SUFFIX).casefold()
    for cluster in members:
        context = next((m.context for m in cluster.members if m.context), "")
        if context and context.casefold() not in said:
            out[cluster.kept.text.strip()] = context
    return out


def _titled(sectioned: str, contexts: dict[str, str], mark: str = "###") -> str:
    """``sectioned`` (``in_sections``: each unit under a ``###`` title of its first words) with the
    title of a unit whose first line has a context (``_contexts``) opening with it: "### Quayside
    House: lift: Apex Lifts". A section is found by its heading's words as well as its body's, so
    a question naming the context ("the Quayside House lift contractor") finds a line that does not;
    the line itself is as written, and is what every later run reads."""
    if not contexts:
        return sectioned
    lines = sectioned.split("\n")
    for n in range(len(lines) - 1):
        context = contexts.get(lines[n + 1].strip())
        if lines[n].startswith(f"{mark} ") and context and context.casefold() not in lines[n].casefold():
            lines[n] = f"{mark} {context}: {lines[n][len(mark) + 1 :]}"
    return "\n".join(lines)


def _clustered(
    name: str,
    lines: list[Line],
    threshold: float,
    vectors: npt.NDArray[np.float32] | None,
    budget: int,
    *,
    shown: set[str],
    frames: Collection[frozenset[str]] = frozenset(),
    readings: Collection[str] = frozenset(),
) -> tuple[list[tuple[str, list[Cluster], int]], list[DroppedLine], set[int]]:
    """The week's clusters as the summary's parts (``_parts``), the duplicates they merged, and the
    ids of the clusters of the logs' second parts (routine lines, one-off lines with no value); a cluster holding a line ``## Changed`` shows (``shown``,
    by key) is that line there, the rest of it duplicates. A reading (``readings``, by key) is
    routine, as a mould's line is."""
    clusters = cluster_lines(lines, threshold, vectors)
    routine_lines = {
        id(line)
        for line, flag in zip(lines, routine([(line.source, line.text) for line in lines], frames), strict=True)
        if flag or normalised(line.text) in readings
    }
    dropped: list[DroppedLine] = []
    sections: dict[str, list[Cluster]] = {}
    for cluster in clusters:
        changed = next((m for m in cluster.members if normalised(m.text) in shown), None)
        if changed is None:
            dropped += [DroppedLine(m.text, (m.source,), "duplicate", name, cluster.kept.text) for m in cluster.merged]
            sections.setdefault(cluster.heading, []).append(cluster)
            continue
        dropped += [
            DroppedLine(m.text, (m.source,), "duplicate", name, changed.text)
            for m in cluster.members
            if normalised(m.text) not in shown
        ]
    moulds: set[int] = set()
    return _parts(sections, budget, routine_lines, moulds), dropped, moulds


def _parts(
    sections: dict[str, list[Cluster]],
    budget: int,
    routine_lines: set[int] | frozenset[int] = frozenset(),
    moulds: set[int] | None = None,
) -> list[tuple[str, list[Cluster], int]]:
    """What each summary section is made from: per heading, its standing lines (facts, rules,
    states) with ``FACT_BUDGET_SHARE`` times the budget, then the lines reporting what was done
    ("Reviewed ...", ``reports_work``, as the promotions read it: "embed-api sits behind the LB"
    and "Forced-update floor: 4.11.0" open with a word that only looks like a past tense, and are
    standing lines) and the week's routine lines (``routine.py``: one mould written
    over and over with other values; ``routine_lines`` holds their ids) under ``<heading> (log)``
    with ``LOG_BUDGET_SHARE`` of it: a week's log is what the archive keeps, its facts are what
    later searches ask for. The log is two parts of one section, each with that budget: first the
    lines reporting what was done with a value (``_VALUE``) in no mould of the week ("Moved the
    nightly to 02:30 UTC", "Checked the signing certificate: valid until 2028-05-09"), then the
    others. In one part the budget would keep the lines of the most frequent words, the mould's,
    and leave a one-off line with a value, often a fact said as what was done, to the archive alone.
    A line that only labels the lines under it ("- Quayside House:", said in their titles) and a
    question are no standing lines either: they go with the routine lines. ``moulds`` is given the
    ids of the clusters of the second part."""
    out = []
    for heading, members in sections.items():
        facts: list[Cluster] = []
        done: list[Cluster] = []
        mould: list[Cluster] = []
        # a line that only labels the lines under it ("- Quayside House:") is said in their titles
        labels = {part for c in members for m in c.members for part in m.context.split(" > ") if part}
        for c in members:
            if any(id(m) in routine_lines for m in c.members) or as_context(c.kept.text) in labels or _asked(c):
                mould.append(c)
            elif not reports_work(c.kept.text):
                facts.append(c)
            else:
                (done if _VALUE.search(c.kept.text) else mould).append(c)
        if facts:
            out.append((heading, facts, budget * FACT_BUDGET_SHARE))
        out += [(f"{heading}{LOG_SUFFIX}", part, budget // LOG_BUDGET_SHARE) for part in (done, mould) if part]
        if moulds is not None:
            moulds.update(id(c) for c in mould)
    return out


def _asked(cluster: Cluster) -> bool:
    """Whether a cluster's line is a question ("Q (Fen): what came of item 242?"): it states
    nothing a later search asks for, and its answer, said after it, is read as a line of its own."""
    return COMMENT.sub("", cluster.kept.text).rstrip().endswith("?")


def _replaced(stale: dict[str, Said]) -> dict[str, list[str]]:
    """For each line that changed a value (by key), the lines it superseded, as said."""
    out: dict[str, list[str]] = {}
    for old, newer in stale.items():
        out.setdefault(normalised(newer.text), []).append(old)
    return out


def _week_lines(
    sources: Sequence[str],
    texts: dict[str, str],
    stale: dict[str, Said],
    frames: Collection[frozenset[str]] = frozenset(),
) -> tuple[list[Line], list[Said], list[Line], list[Conversation]]:
    """A week's current lines to cluster (those that changed a value among them), its lines that
    changed a value (as first said there), its lines a newer value superseded, and its
    conversations (their turns none of these). A routine line that says a fact beside its mould
    (``routine.apart``) is read apart: the fact is summarised as a fact, the mould's part as
    routine."""
    lines, talks = conversations(week_lines(sources, texts))
    changes = {normalised(s.text): s for s in stale.values() if s.where in sources and normalised(s.text) not in stale}
    changed = [changes.pop(normalised(line.text)) for line in lines if normalised(line.text) in changes]
    old = [line for line in lines if normalised(line.text) in stale]
    lines = [line for line in lines if normalised(line.text) not in stale]
    where = apart([(line.source, line.text) for line in lines], frames)
    lines = [
        part for line, at in zip(lines, where, strict=True) for part in ([line] if at is None else _parts_of(line, at))
    ]
    return lines, changed, old, talks


def _parts_of(line: Line, at: tuple[int, int]) -> list[Line]:
    """``line`` read apart where ``routine.apart`` says (``apart_parts``: its sentences, or its
    mould and the statement said inside it), each under the line's list marker."""
    return [Line(text, line.source, line.heading, line.context) for text in apart_parts(line.text, at)]


async def _vectors(embed: Embed | None, lines: Sequence[Line]) -> npt.NDArray[np.float32] | None:
    """The lines' vectors, or None without a model or when it fails (words alone then cluster).
    Only a line that may join another by meaning is embedded (``cluster.vector_partners``: the
    same numbers and names as another line of the week); the others' rows are zeros, which match
    nothing, as they could not have. A week's log, a different number on every line, is most of
    its lines: embedding them all cost a run on a full tier five times its time without the model."""
    if embed is None or len(lines) < 2:
        return None
    partnered = [n for n, flag in enumerate(await asyncio.to_thread(vector_partners, lines)) if flag]
    texts = list(dict.fromkeys(lines[n].text for n in partnered))  # a line said on several days, once
    try:
        found = await embed(texts) if texts else None
    except Exception as exc:  # an embedder down or broken never stops a consolidation
        log.warning("consolidate.embed_failed", error=str(exc))
        return None
    if found is None:
        return np.zeros((len(lines), 1), dtype=np.float32)
    if found.shape[0] != len(texts):
        return None
    row = {text: n for n, text in enumerate(texts)}
    vectors = np.zeros((len(lines), found.shape[1]), dtype=np.float32)
    for n in partnered:
        vectors[n] = found[row[lines[n].text]]
    return vectors


def _summary_dropped(summary: Summary, members: list[Cluster], period: str) -> list[DroppedLine]:
    """The summariser's left-out lines, credited to the notes of the clusters they came from."""
    out = []
    for item in summary.dropped:
        clusters = [members[int(i)] for i in item.sources if i.isdigit() and int(i) < len(members)]
        key = normalised(item.text)
        # a line left out whole is credited to the notes that said it as kept; the cluster's other
        # wordings are reported as its duplicates (``_clustered``)
        said = {m.source for c in clusters for m in c.members if normalised(m.text) == key}
        notes = sorted(said or {s for c in clusters for s in c.sources})
        out.append(DroppedLine(item.text, tuple(notes), item.reason, period, item.kept_as))
    return out
