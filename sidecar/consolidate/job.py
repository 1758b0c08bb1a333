"""The consolidation job: old daily notes rolled up into weekly summaries, recurring facts promoted
to the evergreen file, and the notes themselves moved to the archive.

1. The plan: every ``daily/YYYY-MM-DD.md`` from ``since`` on whose ISO week ends more than
   ``keep_days`` before ``until`` (the last days stay as they are), by week. It is recorded in
   ``.consolidate/state.json`` before anything is touched.
2. Per week, the notes' lines (a fenced block is one) are clustered: near-duplicates are merged,
   the fullest line kept and credited to every note it appeared in. Clusters are grouped by the
   section they first appeared under, and each section is summarised by the summariser (the
   extractive one keeps whole lines), under a provenance comment naming its notes. The summary is
   ``daily/summaries/YYYY-Www.md``.
3. A fact line whose value a newer line changed (``supersede.py``, ``changes.py``: a change
   word, or a standing line restated later with another value) moves under ``## Superseded`` of
   its summary, this run's and earlier runs' alike; the week's lines that changed a value are
   listed under ``## Changed`` of their summary. A week's routine lines (``routine.py``) are
   summarised with its log and are never read as changed values.
4. A line in at least three distinct sources (notes of the plan, earlier summaries) that the
   evergreen file lacks is added to it under ``## Consolidated`` with the sources named, within
   the evergreen cap; a ``## Consolidated`` line a newer value superseded is replaced by it. The
   operator's preferences stated in at least three notes go under ``## Preferences``. Each promoted
   line is a heading section of its own and is scanned first (``guard.py``). The run then reads
   the summaries and the evergreen file it wrote as the next run would and retires what they show
   changed (a line promoted from one week's notes is a standing fact once promoted), until nothing
   changes: a second run over an unchanged tier changes nothing.
   With an operator model configured, the operator's stated preferences in the plan's notes are
   merged into ``operators/<slug>.md`` (``operator.py``).
5. Each note is copied to ``archive/daily/YYYY-MM-DD.md`` and only then removed from ``daily/``;
   the archive is out of the tier's cap and bounded by its own (``archive.py``), once the plan is
   cleared (step 7), so a resumed run always reads its notes whole.
6. With a journal, one ``memory.consolidated`` entry per week (a stable id: recording it twice is
   a no-op), linked ``supports`` to the journal entries the week's notes name by id.
7. The state file is removed.

A run with no week due still retires what the notes in ``daily/`` changed (step 3 and the
evergreen half of step 4), so a changed value's old line drops in search the next run, not the
week after.

Where the outputs live: the memory block reads ``AGENT.md`` (or ``CREW.md``) and the files directly
in ``daily/`` only, so the summaries (one directory down) and the archive are out of the prompt;
both are tier files (visible ``.md`` paths), so search finds them, and a promoted fact reaches the
prompt through the evergreen file. Nothing is lost silently: every line left out of a summary, as
a duplicate or over the budget, is in the report and still in its archived note.

Every file is written with ``durable_replace`` (temp file, fsync, rename) and a note leaves
``daily/`` only after its summary, the promotions and its archive copy are on disk. A run killed at
any point is finished by the next one from the recorded plan: summaries are rewritten from the same
notes (archived or not) to the same bytes, a promoted line already in the evergreen file is not
added again, and an archived note is not archived twice. ``dry_run`` computes the same report and
writes nothing.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt
import structlog

from sidecar.consolidate.archive import bound_archive
from sidecar.consolidate.changes import (
    MAX_LINE_CHARS,
    WORDS_COSINE,
    Vectors,
    changed_by_meaning,
    changed_by_signal,
    changed_by_value,
    meaning_texts,
    reading_keys,
    reverted,
    routine_said,
    word_vectors,
)
from sidecar.consolidate.cluster import CLUSTER_JACCARD
from sidecar.consolidate.guard import judged
from sidecar.consolidate.periods import (
    ARCHIVE_DIR,
    DAILY_DIR,
    Line,
    apart_parts,
    archive_rel,
    claimed_rel,
    daily_notes,
    day_text,
    eligible_days,
    file_names,
    merged,
    note_day,
    period_bounds,
    period_of,
    said_inside,
    section_lines,
    statement_text,
)
from sidecar.consolidate.promote import (
    COMMENT,
    MIN_SOURCES,
    PREFERENCES,
    Candidate,
    EvergreenUpdate,
    consolidated_bullets,
    normalised,
    preferences,
    recurring,
    update_evergreen,
)
from sidecar.consolidate.report import (
    Archived,
    Fallback,
    NotPromoted,
    OperatorUpdate,
    Promoted,
    Report,
    Skipped,
    SummaryWritten,
    SupersededLine,
)
from sidecar.consolidate.routine import Apart, apart, routine_by, run_frames
from sidecar.consolidate.state import Plan, clear_plan, load_plan, rename_durably, save_plan, unlink_durably
from sidecar.consolidate.summarise import Summariser
from sidecar.consolidate.supersede import (
    CHANGED,
    SUPERSEDED,
    Said,
    claim,
    retire,
    summary_lines,
    superseded,
)
from sidecar.consolidate.weekly import LOG_SUFFIX, REST_DIR, SUMMARY_DIR, Embed, Week, rest_path, summarise_week
from sidecar.episodic.entry import MAX_SUMMARY_CHARS, JournalEntry
from sidecar.episodic.relations import link_supports
from sidecar.episodic.store import JournalStore
from sidecar.errors import Conflict
from sidecar.index.files import scan_tier
from sidecar.write.dedup import LIST_MARKER
from sidecar.write.durable import durable_replace, read_file

__all__ = [
    "SUMMARY_DIR",
    "Embed",
    "OperatorModel",
    "Progress",
    "Record",
    "Step",
    "consolidate",
    "record_week",
    "recorder",
]

Step = Literal["plan", "summaries", "supersede", "promotions", "operators", "archive", "journal"]
#: Told (step, done, total) as a run goes: "summaries" per week written, "archive" per note moved.
Progress = Callable[[str, int, int], None]
#: Hands a week's ``memory.consolidated`` entry to the journal: the week, and the entry's id.
Record = Callable[[Week, str], Awaitable[None]]
_ARCHIVE_ROOT = ARCHIVE_DIR.split("/", 1)[0] + "/"
_SUMMARY_NAME = re.compile(r"^(\d{4}-W\d{2})\.md$")
_END_OF_DAY = 1_000_000  # the order of an evergreen line: after every line of the notes it names
_UNCHANGED = EvergreenUpdate(None, (), (), ())
#: A run's retire passes over what it wrote, until one changes nothing (``_settle``): each retires what
#: the last promoted, and a promoted line whose new value a later line changes again (one mould said of
#: other people week after week) takes one step a pass. Fewer passes than its steps leave the next run,
#: with nothing new, to take the rest: a second run would change what the first wrote.
_SETTLE_PASSES = 16

_T = TypeVar("_T")
log = structlog.get_logger("sidecar.consolidate")


@dataclass(frozen=True, slots=True)
class OperatorModel:
    """Where the operator's preferences go: ``path`` (``operators/<slug>.md``) in the crew dir
    ``root``, within ``cap_bytes``."""

    root: Path
    path: str
    cap_bytes: int


async def consolidate(
    root: Path,
    *,
    since: date | None,
    until: date,
    summariser: Summariser,
    dry_run: bool,
    evergreen: str = "AGENT.md",
    journal: JournalStore | None = None,
    record: Record | None = None,
    workspace_id: str = "default",
    agent_id: str | None = None,
    keep_days: int = 7,
    section_budget: int = 2000,
    evergreen_cap_bytes: int = 16 * 1024,
    min_sources: int = MIN_SOURCES,
    cluster_threshold: float = CLUSTER_JACCARD,
    operator: OperatorModel | None = None,
    progress: Progress | None = None,
    embed: Embed | None = None,
    stop_after: Step | None = None,
    archive_cap_bytes: int | None = None,
    packed_cap_bytes: int | None = None,
) -> Report:
    """Consolidate the tier at ``root`` (see the module docstring); ``stop_after`` ends the run
    after that step, as a run killed there would (for tests of resuming). Each week's entry goes to
    ``journal``, or without one to ``record`` (the journal of another process). With
    ``archive_cap_bytes`` the archive is bounded (``archive.py``): plain notes past it compressed,
    compressed ones past ``packed_cap_bytes`` (a quarter of it by default) removed."""
    saved = await asyncio.to_thread(load_plan, root)
    fresh = await asyncio.to_thread(eligible_days, root, since=since, cutoff=until - timedelta(days=keep_days))
    plan = _merge_plans(saved or {}, fresh)
    sizes = await asyncio.to_thread(_sizes, root)
    report = Report(dry_run=dry_run, resumed=saved is not None, periods=list(plan))
    report.bytes_before, report.live_bytes_before = _totals(sizes)
    meant = _Meant(embed)
    if not plan:  # no week is due: values the live notes changed are still retired
        await _retire_only(
            root, report, sizes, evergreen=evergreen, cap_bytes=evergreen_cap_bytes, dry_run=dry_run, meant=meant
        )
        if saved is not None and not dry_run:
            await asyncio.to_thread(clear_plan, root)
        return _finish(report, sizes)
    if not dry_run:
        await asyncio.to_thread(save_plan, root, plan)
    if stop_after == "plan":
        return report
    texts = await asyncio.to_thread(_read_notes, root, plan)
    said, earlier = await asyncio.to_thread(_dated_lines, root, plan, texts, evergreen, report.skipped)
    said, frames, readings = await asyncio.to_thread(_framed_apart, said)
    stale = await _stale_of(said, earlier, frames, meant, readings)
    tell = progress or (lambda step, done, total: None)
    periods = await _summaries(
        root,
        plan,
        texts,
        summariser=summariser,
        report=report,
        sizes=sizes,
        tell=tell,
        budget=section_budget,
        threshold=cluster_threshold,
        stale=stale,
        embed=embed,
        dry_run=dry_run,
        frames=frames,
        readings=readings,
    )
    if stop_after == "summaries":
        return report
    retirable = {**earlier, **await asyncio.to_thread(_rests, root)}
    await asyncio.to_thread(functools.partial(_retire_earlier, dry_run=dry_run), root, retirable, stale, report, sizes)
    if stop_after == "supersede":
        return report
    summarised = await asyncio.to_thread(_with_rests, root, earlier, plan)
    candidates = await asyncio.to_thread(
        functools.partial(_candidates, frames=frames, readings=readings), plan, texts, summarised, stale, min_sources
    )
    every_note = await asyncio.to_thread(_every_note, root, texts)
    stated = await asyncio.to_thread(lambda: preferences({s: statement_text(t) for s, t in every_note.items()}))
    await asyncio.to_thread(
        functools.partial(
            _promote, evergreen=evergreen, cap_bytes=evergreen_cap_bytes, dry_run=dry_run, stale=stale, said=said
        ),
        root,
        report,
        sizes,
        candidates,
        stated,
    )
    if not dry_run:  # what this run wrote read as the next run reads it (``_settle``)
        await _settle(root, report, sizes, evergreen=evergreen, cap_bytes=evergreen_cap_bytes, meant=meant)
    if stop_after == "promotions":
        return report
    if operator is not None:
        said_in = {s: texts[s] for sources in plan.values() for s in sources}
        await asyncio.to_thread(_operator_model, operator, said_in, until, report, dry_run=dry_run)
    if stop_after == "operators":
        return report
    notes = [s for sources in plan.values() for s in sources]
    tell("archive", 0, len(notes))
    for done, source in enumerate(notes, start=1):
        await asyncio.to_thread(_archive, root, source, report, sizes, dry_run)
        tell("archive", done, len(notes))
    if stop_after == "archive":
        return report
    if (record := recorder(journal, record, workspace_id=workspace_id, agent_id=agent_id)) is not None:
        await _record(record, periods, report, agent_id=agent_id, dry_run=dry_run)
    if stop_after == "journal":
        return report
    if not dry_run:
        await asyncio.to_thread(clear_plan, root)
    if archive_cap_bytes is not None:  # once the plan is done: its notes are never read again
        await _bound(
            root,
            report,
            sizes,
            archive_cap_bytes,
            packed_cap_bytes,
            dry_run=dry_run,
            settle=functools.partial(
                _settle, root, report, sizes, evergreen=evergreen, cap_bytes=evergreen_cap_bytes, meant=meant
            ),
        )
    log.info("consolidate.done", periods=len(plan), archived=len(report.archived), promoted=len(report.promoted))
    return _finish(report, sizes)


async def _settle(
    root: Path, report: Report, sizes: dict[str, int], *, evergreen: str, cap_bytes: int, meant: _Meant
) -> None:
    """Retire what the tier as this run left it changed, as the next run would, until nothing
    changes (``_SETTLE_PASSES`` at most). The run's own outputs are lines the change search had
    not read: a line promoted from one week's notes is a standing fact once the evergreen file
    holds it, so a later note that changes it is read only against the promoted line, and this
    run's summaries are earlier summaries to the next run. Without this pass the next run, with
    nothing new, would retire them. What a pass finds that the run reported already (a line written
    by hand, a summary named for no week) is not reported twice."""
    for _ in range(_SETTLE_PASSES):
        found = Report(dry_run=False)
        changed = await _retire_only(
            root, found, sizes, evergreen=evergreen, cap_bytes=cap_bytes, dry_run=False, meant=meant
        )
        _add_new(report.superseded, found.superseded)
        _add_new(report.promoted, found.promoted)
        _add_new(report.not_promoted, found.not_promoted)
        _add_new(report.withheld, found.withheld)
        _add_new(report.skipped, found.skipped)
        if not changed:
            return
    log.warning("consolidate.unsettled", passes=_SETTLE_PASSES)  # the next run may change what this one wrote


def _add_new(reported: list[_T], found: list[_T]) -> None:
    reported += [item for item in found if item not in reported]


async def _retire_only(
    root: Path,
    report: Report,
    sizes: dict[str, int],
    *,
    evergreen: str,
    cap_bytes: int,
    dry_run: bool,
    meant: _Meant,
) -> bool:
    """A run with no week to roll up: the lines of earlier summaries and the evergreen file's
    promoted lines that a newer line changed (the notes still in ``daily/`` included) are retired
    as a full run retires them, so a value changed today ranks below its new value from the next
    run on, not from the run that rolls up its week. Whether a file changed (or would have)."""
    said, earlier = await asyncio.to_thread(_dated_lines, root, {}, {}, evergreen, report.skipped)
    said, frames, readings = await asyncio.to_thread(_framed_apart, said)
    found = await _stale_of(said, earlier, frames, meant, readings)
    # Only what a note changed (live or archived, read on its day): a summary's own lines are
    # dated by its week, and read against each other they could order two lines of one week the
    # other way round.
    stale = {key: newer for key, newer in found.items() if note_day(newer.where) is not None}
    if not stale:
        return False
    retire = functools.partial(_retire_earlier, dry_run=dry_run)
    retirable = {**earlier, **await asyncio.to_thread(_rests, root)}
    retired = await asyncio.to_thread(retire, root, retirable, stale, report, sizes)
    promote = functools.partial(
        _promote, evergreen=evergreen, cap_bytes=cap_bytes, dry_run=dry_run, stale=stale, said=said
    )
    return await asyncio.to_thread(promote, root, report, sizes, [], []) or retired


async def _summaries(
    root: Path,
    plan: Plan,
    texts: dict[str, str],
    *,
    summariser: Summariser,
    report: Report,
    sizes: dict[str, int],
    tell: Progress,
    budget: int,
    threshold: float,
    stale: dict[str, Said],
    embed: Embed | None,
    dry_run: bool,
    frames: frozenset[frozenset[str]],
    readings: frozenset[str],
) -> list[Week]:
    """Each planned week's summary, written (``_summarise``) and reported."""
    periods: list[Week] = []
    tell("summaries", 0, len(plan))
    for name, sources in plan.items():
        period = await summarise_week(
            name,
            sources,
            texts,
            summariser,
            budget=budget,
            threshold=threshold,
            stale=stale,
            embed=embed,
            frames=frames,
            readings=readings,
        )
        periods.append(period)
        report.summaries.append(
            SummaryWritten(period.name, period.path, period.sources, period.engine, period.clustered_by)
        )
        report.dropped.extend(period.dropped)
        report.superseded.extend(period.superseded)
        report.withheld.extend(period.withheld)
        report.fallbacks += [Fallback(period.name, reason) for reason in period.fallbacks]
        sizes[period.path] = len(period.text.encode("utf-8"))
        rest = rest_path(period.name)
        if period.rest:
            sizes[rest] = len(period.rest.encode("utf-8"))
        if not dry_run:
            await asyncio.to_thread(_write_if_changed, root, period.path, period.text.encode("utf-8"))
            await asyncio.to_thread(_write_rest, root, rest, period.rest)
        tell("summaries", len(periods), len(plan))
    return periods


def _candidates(
    plan: Plan,
    texts: dict[str, str],
    earlier: dict[str, str],
    stale: dict[str, Said],
    min_sources: int,
    *,
    frames: frozenset[frozenset[str]] = frozenset(),
    readings: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """What may be promoted to ``## Consolidated``: current lines recurring across the plan's notes
    and earlier summaries, the operator's preferences aside (they have their own section), and
    never a week's routine line (``routine.py``), a reading (``readings``: ``reading_keys``) or a
    summary's log: "Disk use on nas-2 is 88 percent" said on three days is a log reading, not a
    standing fact."""
    from sidecar.consolidate.conduct import is_rule, obeys_someone
    from sidecar.consolidate.operator import extract_preferences

    lines = [line for sources in plan.values() for s in sources for line in section_lines(s, texts[s])]
    lines = _lines_apart(lines, frames)
    logged = routine_by([(_week_of(line.source), line.source, line.text) for line in lines], frames)
    lines = [
        line
        for line, log in zip(lines, logged, strict=True)
        if not log and (key := normalised(line.text)) not in stale and key not in readings
    ]
    before = [
        Line(text, path, title)
        for path, summary in earlier.items()
        for title, text in summary_lines(summary)
        if title != SUPERSEDED and not title.endswith(LOG_SUFFIX) and normalised(text) not in stale
    ]
    found = recurring(lines, min_sources, earlier=before)
    return [
        c
        for c in found
        if normalised(c.text) not in stale
        and not extract_preferences(c.text, "")
        and not is_rule(c.text)
        and not obeys_someone(c.text)
    ]


def _framed_apart(said: list[Said]) -> tuple[list[Said], frozenset[frozenset[str]], frozenset[str]]:
    """``said`` read with the run's moulds (``_apart``), the moulds (``_run_frames``) and the keys
    of its readings (``changes.reading_keys``: a value pasted day after day, a routine line)."""
    frames = _run_frames(said)
    apart_said = _apart(said, frames)
    return apart_said, frames, reading_keys(apart_said)


def _apart(said: list[Said], frames: frozenset[frozenset[str]]) -> list[Said]:
    """``said`` with each note's routine line that says a fact beside its mould (``routine.apart``,
    judged in its week as ``routine_said`` judges it) read apart (``apart_parts``: its sentences, or
    its mould and the statement said inside it), on the line's day and place: the fact recurs,
    changes and is superseded as a line of its own, as the week's summary keeps it
    (``weekly._week_lines``)."""
    where = _apart_where([(s.where, s.text) for s in said], frames)
    return [
        part
        for s, at in zip(said, where, strict=True)
        for part in ([s] if at is None else [Said(t, s.where, s.when, claim(t)) for t in apart_parts(s.text, at)])
    ]


def _lines_apart(lines: list[Line], frames: frozenset[frozenset[str]]) -> list[Line]:
    """``lines`` (notes' lines) as ``_apart`` reads them: a fact said beside a mould, apart."""
    where = _apart_where([(line.source, line.text) for line in lines], frames)
    return [
        part
        for line, at in zip(lines, where, strict=True)
        for part in (
            [line]
            if at is None
            else [Line(t, line.source, line.heading, line.context) for t in apart_parts(line.text, at)]
        )
    ]


def _apart_where(items: list[tuple[str, str]], frames: frozenset[frozenset[str]]) -> list[Apart]:
    """For each (source, text), where a note's line is read apart (``routine.apart``; None: whole),
    each note's short lines judged in its ISO week."""
    weeks: dict[str, list[int]] = {}
    for n, (source, text) in enumerate(items):
        if (day := note_day(source)) is not None and len(text) <= MAX_LINE_CHARS and "\n" not in text:
            weeks.setdefault(period_of(day), []).append(n)
    out: list[Apart] = [None] * len(items)
    for members in weeks.values():
        for n, at in zip(members, apart([items[n] for n in members], frames), strict=True):
            out[n] = at
    return out


def _run_frames(said: list[Said]) -> frozenset[frozenset[str]]:
    """The moulds routine across the notes the run knows (``routine.run_frames``), each note's
    lines in its ISO week: a mould written over and over in most weeks is routine in a week where
    it was written fewer times, in that week's summary and promotions as in the change search."""
    weeks: dict[str, list[tuple[str, str]]] = {}
    for s in said:
        if (day := note_day(s.where)) is not None and len(s.text) <= MAX_LINE_CHARS and "\n" not in s.text:
            weeks.setdefault(period_of(day), []).append((s.where, s.text))
    return run_frames(weeks.values())


def _week_of(source: str) -> str:
    """A note's ISO week (its path when it names no day)."""
    day = note_day(source)
    return source if day is None else period_of(day)


def _every_note(root: Path, texts: dict[str, str]) -> dict[str, str]:
    """Every daily note's text the tier holds readable: the plan's, the live ones, the plain archive."""
    notes = dict(texts)
    for source, _ in daily_notes(root):
        if source not in notes and (data := read_file(root, source)) is not None:
            notes[source] = data.decode("utf-8", errors="replace")
    for name in file_names(root / ARCHIVE_DIR):
        source = f"daily/{name}"
        if note_day(source) is not None and source not in notes:
            data = read_file(root, f"{ARCHIVE_DIR}/{name}")
            notes[source] = "" if data is None else data.decode("utf-8", errors="replace")
    return notes


def _merge_plans(a: Plan, b: Plan) -> Plan:
    merged_plan: Plan = {}
    for plan in (a, b):
        for period, sources in plan.items():
            merged_plan[period] = sorted({*merged_plan.get(period, []), *sources})
    return dict(sorted(merged_plan.items()))


def _sizes(root: Path) -> dict[str, int]:
    return {rel: stat.size for rel, stat in scan_tier(root).items()}


def _totals(sizes: dict[str, int]) -> tuple[int, int]:
    whole = sum(sizes.values())
    return whole, whole - sum(size for rel, size in sizes.items() if rel.startswith(_ARCHIVE_ROOT))


def _finish(report: Report, sizes: dict[str, int]) -> Report:
    report.bytes_after, report.live_bytes_after = _totals(sizes)
    return report


def _read_notes(root: Path, plan: Plan) -> dict[str, str]:
    """Each planned note's text, from ``daily/`` or the archive (a note gone from both is empty)."""
    texts: dict[str, str] = {}
    for sources in plan.values():
        for source in sources:
            data = day_text(root, source)
            texts[source] = "" if data is None else data.decode("utf-8", errors="replace")
    return texts


def _dated_lines(
    root: Path, plan: Plan, texts: dict[str, str], evergreen: str, skipped: list[Skipped]
) -> tuple[list[Said], dict[str, str]]:
    """Every dated line the job knows, and the earlier summaries' texts by path: the planned
    notes, the notes still in ``daily/`` (read, never changed), the earlier summaries' weeks and
    the evergreen file's promoted bullets (dated by the newest note they name). A summary whose
    name is no week (``2026-W99.md``) is left alone and listed in ``skipped``.

    An earlier summary's week is read from its archived notes, as the run that rolled it up read
    them, so every run judges the same lines the same way and a second run over an unchanged tier
    finds what the first found (a summary keeps some of its week's lines, under other headings,
    and a week's routine and rarity read on its summary alone differ from its notes'). A summary
    line none of those notes holds (a model's wording, or a week whose notes the archive no longer
    keeps) is read from the summary, dated by its week: ``## Changed`` at its end, the rest at its
    start."""
    said: list[Said] = []
    notes = {source: (day, texts[source]) for source in texts if (day := note_day(source)) is not None}
    for source, day in daily_notes(root):
        if source not in notes:
            data = read_file(root, source)
            notes[source] = (day, "" if data is None else data.decode("utf-8", errors="replace"))
    weeks = _summary_weeks(root, plan, skipped)
    archived: dict[str, set[str]] = {}  # an earlier summary's path -> its archived notes' line keys
    for path, (monday, _) in weeks.items():
        keys = archived.setdefault(path, set())
        for day in (monday + timedelta(days=n) for n in range(7)):
            source = f"{DAILY_DIR}/{day.isoformat()}.md"
            if source not in notes:  # a live note of the week (a run not yet done) is read as it is
                if (data := day_text(root, source)) is None:
                    continue
                notes[source] = (day, data.decode("utf-8", errors="replace"))
            for line in section_lines(source, notes[source][1]):  # its parts: a summary may write them
                keys.update(normalised(text) for text in (line.text, *said_inside(line.text)))
    for source, (day, text) in sorted(notes.items()):
        for order, line in enumerate(section_lines(source, text)):
            said.append(Said(line.text, source, (day, order), claim(line.text)))
    earlier: dict[str, str] = {}
    for path, (monday, sunday) in weeks.items():
        data = read_file(root, path)
        if data is None:
            continue
        earlier[path] = text = data.decode("utf-8", errors="replace")
        for order, (title, said_line) in enumerate(summary_lines(text)):
            if normalised(said_line) in archived[path]:
                continue  # read from its note, on its day
            when = (sunday, 10_000 + order) if title == CHANGED else (monday, order)
            said.append(Said(said_line, path, when, claim(said_line)))
    data = read_file(root, evergreen)
    for bullet, sources in consolidated_bullets("" if data is None else data.decode("utf-8", errors="replace")):
        days = [d for d in (_source_day(s) for s in sources) if d is not None]
        if days:
            said.append(Said(bullet, evergreen, (max(days), _END_OF_DAY), claim(bullet)))  # after its notes
    return said, earlier


def _summary_weeks(root: Path, plan: Plan, skipped: list[Skipped]) -> dict[str, tuple[date, date]]:
    """The earlier summaries this run does not write, by path, with their Monday and Sunday; a
    summary whose name is no week is listed in ``skipped``."""
    weeks: dict[str, tuple[date, date]] = {}
    for name in (m.group(1) for n in file_names(root / SUMMARY_DIR) if (m := _SUMMARY_NAME.match(n))):
        path = f"{SUMMARY_DIR}/{name}.md"
        try:
            bounds = period_bounds(name)
        except ValueError:
            skipped.append(Skipped(path, "not an ISO week"))
            continue
        if name not in plan:
            weeks[path] = bounds
    return weeks


class _Meant:
    """The vectors of the lines a run reads for changes by meaning (``changes.changed_by_meaning``),
    each text embedded once a run, by the embedding model's background path; none without a
    model, or once it failed (the run goes on reading changes by their words)."""

    def __init__(self, embed: Embed | None) -> None:
        self.embed = embed
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}

    async def of(self, texts: list[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors of ``texts`` (those it has, when the model fails)."""
        wanted = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if wanted and self.embed is not None:
            try:
                rows = await self.embed(wanted)
            except Exception as exc:  # an embedder down or broken never stops a consolidation
                log.warning("consolidate.embed_failed", error=str(exc))
                self.embed = None
            else:
                if rows.shape[0] == len(wanted):
                    self.vectors.update(zip(wanted, rows, strict=True))
        return {t: self.vectors[t] for t in texts if t in self.vectors}


async def _stale_of(
    said: list[Said],
    earlier: dict[str, str],
    frames: frozenset[frozenset[str]],
    meant: _Meant,
    readings: frozenset[str] | None = None,
) -> dict[str, Said]:
    """``_stale`` of the lines ``_kept`` reads, with the vectors of those it reads by meaning when
    a model is given."""
    kept = await asyncio.to_thread(_kept, said, earlier, frames, readings)
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    if meant.embed is not None:
        vectors = await meant.of(await asyncio.to_thread(meaning_texts, kept))
    return await asyncio.to_thread(_stale, kept, vectors)


def _kept(
    said: list[Said], earlier: dict[str, str], frames: frozenset[frozenset[str]], readings: frozenset[str] | None = None
) -> list[Said]:
    """The lines ``_stale`` reads. A week's routine lines (``routine.py``: one mould written over
    and over with other numbers) are not read: a log is not a fact that changes. Each line is
    judged where it was said: a reading that is routine in a busy week may be a fact in a quiet
    one, unless its mould is routine across the run (``frames``, ``_run_frames``: the same moulds
    the summaries and promotions read). The lines of the earlier summaries' logs (``<heading>
    (log)``) are routine too: a routine line keeps its standing once its week is rolled up
    (``earlier``: the summaries by path), so a second run reads what the first did. A reading
    (``readings``, by default ``reading_keys`` of ``said``: a value pasted day after day, "queue
    depth: 48") is routine too: the next day's value is no change of a fact, and read as one, a
    week's readings filled its ``## Changed``, which no bound cuts, and pushed facts out of it."""
    readings = reading_keys(said) if readings is None else readings
    logs = {
        (path, text)
        for path, summary in earlier.items()
        for title, text in summary_lines(summary)
        if title.endswith(LOG_SUFFIX)
    }
    flags = routine_said(said, frames)
    return [
        s
        for s, log in zip(said, flags, strict=True)
        if not log and (s.where, s.text) not in logs and normalised(s.text) not in readings
    ]


def _by_words(kept: list[Said]) -> dict[str, Said]:
    """The changes read by their words: a newer claim about a line's subject, a newer line that
    says it changed it, or a standing line restated later with another value (``changes.py``)."""
    return {**changed_by_value(kept, routine_left_out=True), **changed_by_signal(kept), **superseded(kept)}


def _stale(kept: list[Said], vectors: Vectors | None = None) -> dict[str, Said]:
    """The lines of ``kept`` (``_kept``) no longer current: those changed by their words
    (``_by_words``; the claim's reading wins where several have one), and with ``vectors`` (an
    embedding model's, by text) a standing line whose nearest statement came later and gives its
    value anew (``changed_by_meaning``: the change written in none of its words); without them,
    its nearest statement by its rarer words (``word_vectors``)."""
    found = _by_words(kept)
    if vectors:
        found = {**changed_by_meaning(kept, vectors, found.keys()), **found}
    else:  # no model: the lines' words stand for their meaning
        words = word_vectors(meaning_texts(kept))
        found = {**changed_by_meaning(kept, words, found.keys(), cosine=WORDS_COSINE, dropped=False), **found}
    return reverted(kept, found)


def _source_day(source: str) -> date | None:
    """The day a provenance source stands for: a note's day, a summary's Sunday."""
    day = note_day(source)
    if day is not None:
        return day
    match = _SUMMARY_NAME.match(source.rsplit("/", 1)[-1])
    if match is None:
        return None
    try:
        return period_bounds(match.group(1))[1]
    except ValueError:
        return None


def _retire_earlier(
    root: Path, earlier: dict[str, str], stale: dict[str, Said], report: Report, sizes: dict[str, int], *, dry_run: bool
) -> bool:
    """Move the superseded lines of earlier summaries under their ``## Superseded`` heading;
    whether one moved."""
    moved = False
    for path, text in earlier.items():
        new = retire(text, stale)
        if new == text:
            continue
        moved = True
        for title, line in summary_lines(text):
            if title != SUPERSEDED and (newer := stale.get(normalised(line))) is not None:
                report.superseded.append(SupersededLine(line, path, newer.text, newer.where, newer.when[0].isoformat()))
        data = new.encode("utf-8")
        sizes[path] = len(data)
        if not dry_run:
            _write_if_changed(root, path, data)
    return moved


def _write_rest(root: Path, rel: str, text: str) -> None:
    """A week's left-out lines (``Week.rest``) written, or an old copy removed when it has none."""
    if text:
        _write_if_changed(root, rel, text.encode("utf-8"))
    elif read_file(root, rel) is not None:
        unlink_durably(root, rel)


def _rests(root: Path) -> dict[str, str]:
    """The weeks' left-out lines (``weekly.rest_path``) by path: retired as the summaries are."""
    out: dict[str, str] = {}
    for name in file_names(root / REST_DIR):
        if _SUMMARY_NAME.match(name) and (data := read_file(root, f"{REST_DIR}/{name}")) is not None:
            out[f"{REST_DIR}/{name}"] = data.decode("utf-8", errors="replace")
    return out


def _with_rests(root: Path, earlier: dict[str, str], plan: Plan) -> dict[str, str]:
    """The earlier summaries' texts by path, each with the rest of it (``_rests``) after it: what
    the bound left out of a week is that week's summary too, one source a week when recurrences
    are counted. The weeks of ``plan`` are read from their notes, never from a file of this run."""
    rests = {
        f"{SUMMARY_DIR}/{path.rsplit('/', 1)[-1]}": text
        for path, text in _rests(root).items()
        if path.rsplit("/", 1)[-1].removesuffix(".md") not in plan
    }
    return {path: earlier.get(path, "") + "\n" + rests.get(path, "") for path in sorted({*earlier, *rests})}


def _write_if_changed(root: Path, rel: str, data: bytes) -> None:
    old = read_file(root, rel)
    if old != data:
        durable_replace(root, rel, data, old)


def _promote(
    root: Path,
    report: Report,
    sizes: dict[str, int],
    candidates: list[Candidate],
    stated: list[Candidate],
    *,
    evergreen: str,
    cap_bytes: int,
    dry_run: bool,
    stale: dict[str, Said],
    said: list[Said],
) -> bool:
    """Promote the recurring facts to ``## Consolidated`` and the preferences stated on several
    days to ``## Preferences``, each line scanned first; a ``## Consolidated`` line a newer value
    superseded leaves the file and the newer line takes its place (a line outside that section,
    written by hand, is only reported). Whether the file changed (or would have)."""
    old = read_file(root, evergreen)
    current = "" if old is None else old.decode("utf-8", errors="surrogateescape")
    ours = {normalised(line) for line, _ in consolidated_bullets(current)}
    replacing = _replacing(current, ours, evergreen=evergreen, report=report, stale=stale, said=said)
    prefs = [c for c in stated if judged(c.text, evergreen, report.withheld)]
    prefs, dropped_rules = _not_taken_back(prefs, current, said, evergreen=evergreen, report=report)
    # a preference whose value a newer line changed is no longer current either ("The failover drill
    # is always on the second Saturday", then "Grace moved the failover drill to the first Sunday")
    prefs = [c for c in prefs if normalised(c.text) not in stale]
    dropped_rules |= {normalised(line) for line, _ in consolidated_bullets(current, PREFERENCES)} & stale.keys()
    fresh = _not_restated(candidates, said, evergreen=evergreen, report=report)
    facts = [c for c in [*replacing.values(), *fresh] if not _a_rule(c, prefs)]
    facts = [c for c in facts if judged(c.text, evergreen, report.withheld)]
    # The preferences first: few, and what every prompt should carry; the facts take what is left.
    # With none to add or retire (a run retiring values only) their section is left as it is.
    chosen = (
        update_evergreen(current, prefs, cap_bytes, heading=PREFERENCES, retire=dropped_rules)
        if prefs or dropped_rules
        else _UNCHANGED
    )
    text = current if chosen.text is None else chosen.text
    update = update_evergreen(text, facts, cap_bytes, retire=stale.keys() & ours)
    for done in (chosen, update):
        report.promoted += [Promoted(c.text, c.sources) for c in done.added]
        report.not_promoted += [NotPromoted(c.text, c.sources, "present") for c in done.present]
        report.not_promoted += [NotPromoted(c.text, c.sources, "cap") for c in done.over_cap]
    text = text if update.text is None else update.text
    if text == current:
        return False
    data = text.encode("utf-8", errors="surrogateescape")
    sizes[evergreen] = len(data)
    if not dry_run:
        durable_replace(root, evergreen, data, old)
    return True


def _not_taken_back(
    prefs: list[Candidate], current: str, said: list[Said], *, evergreen: str, report: Report
) -> tuple[list[Candidate], set[str]]:
    """The preferences no later note takes back (``reversed.taken_back``: "No need to ring
    customers the evening before any more"), and the keys of the ``## Preferences`` lines of the
    evergreen file a later note took back, to retire; each one reported as superseded by that note."""
    from sidecar.consolidate.reversed import taken_back

    standing = [
        (COMMENT.sub(" ", LIST_MARKER.sub("", line)).strip(), line, sources)
        for line, sources in consolidated_bullets(current, PREFERENCES)
    ]
    back = taken_back([(c.text, c.sources) for c in prefs] + [(text, sources) for text, _, sources in standing], said)
    if not back:
        return prefs, set()
    for text, newer in back.items():
        where = f"{evergreen} ({PREFERENCES})"
        report.superseded.append(SupersededLine(text, where, newer.text, newer.where, newer.when[0].isoformat()))
    retire = {normalised(line) for text, line, _ in standing if text in back}
    return [c for c in prefs if c.text not in back], retire


def _not_restated(candidates: list[Candidate], said: list[Said], *, evergreen: str, report: Report) -> list[Candidate]:
    """The candidates no newer note restates with another value (``reworded.restates``); each
    one left out is reported as superseded by the newest line restating it. A change the change
    search does not read ("Rent is paid to Northgate Estates from March" after "Rent is paid to
    Corrigan Properties") must not put the old value in every prompt."""
    from sidecar.consolidate.reworded import restates, statement
    from sidecar.consolidate.text import unstamped

    if not candidates:
        return []
    dated = [s for s in said if s.where != evergreen and note_day(s.where) is not None]
    read = [statement(unstamped(s.text)) for s in dated]  # a time of day a log opens with is no value
    postings: dict[str, list[int]] = {}
    for n, item in enumerate(read):
        for word in item.words:
            postings.setdefault(word, []).append(n)
    kept = []
    for candidate in candidates:
        days = [d for d in (note_day(s) for s in candidate.sources) if d is not None]
        old = statement(candidate.text)
        subject = old.words - old.numbers - old.names
        if not days or len(subject) < 2:
            kept.append(candidate)
            continue
        rarest = min(subject, key=lambda w: len(postings.get(w, ())))
        newer = [dated[n] for n in postings.get(rarest, ()) if dated[n].when[0] > max(days) and restates(read[n], old)]
        if not newer:
            kept.append(candidate)
            continue
        last = max(newer, key=lambda s: s.when)
        report.superseded.append(
            SupersededLine(
                candidate.text, f"{evergreen} (not promoted)", last.text, last.where, last.when[0].isoformat()
            )
        )
    return kept


def _a_rule(fact: Candidate, rules: list[Candidate]) -> bool:
    """Whether ``fact`` says one of ``rules`` in other words (it goes under ``## Preferences``)."""
    from sidecar.consolidate.conduct import key_text, rule_body
    from sidecar.consolidate.reworded import same, statement

    said = statement(fact.text)
    return any(same(said, statement(key_text(rule_body(rule.text) or rule.text))) for rule in rules)


def _replacing(
    current: str, ours: set[str], *, evergreen: str, report: Report, stale: dict[str, Said], said: list[Said]
) -> dict[str, Candidate]:
    """The current values of the evergreen file's superseded lines, by key; each superseded line
    reported (one written by hand is left as it is)."""
    replacing: dict[str, Candidate] = {}
    for line in current.splitlines():
        newer = stale.get(k := normalised(line))
        if newer is None:
            continue
        seen = {k}
        while (later := stale.get(normalised(newer.text))) is not None and normalised(later.text) not in seen:
            seen.add(normalised(newer.text))
            newer = later  # the value changed again since: the current one replaces it
        where = evergreen if k in ours else f"{evergreen} (written by hand: left as it is)"
        report.superseded.append(
            SupersededLine(line.strip(), where, newer.text, newer.where, newer.when[0].isoformat())
        )
        if k in ours and normalised(newer.text) not in stale:
            notes = sorted(
                {s.where for s in said if normalised(s.text) == normalised(newer.text) and s.where != evergreen}
            )
            was = _was(k, said, evergreen)
            replacing.setdefault(
                normalised(newer.text), Candidate(f"{COMMENT.sub(' ', newer.text).strip()}{was}", tuple(notes))
            )
    return replacing


def _was(key: str, said: list[Said], evergreen: str) -> str:
    """A comment naming the line a promoted line's new value replaced, in its words, and the last
    day it was said: the current line is then found by the words a question about the old one
    uses ("what schedules our pipelines" finds "Orchestration: Dagster" once it says it replaced
    "our pipelines are orchestrated with airflow"), and it says what it replaced, and when."""
    days = [s.when[0] for s in said if s.where != evergreen and normalised(s.text) == key]
    until = f" until {max(days).isoformat()}" if days else ""
    return f" <!-- was{until}: {key} -->"


async def _bound(
    root: Path,
    report: Report,
    sizes: dict[str, int],
    cap: int,
    packed_cap: int | None,
    *,
    dry_run: bool,
    settle: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Bound the archive by its own cap (``archive.py``), into the report. When it removed notes,
    ``settle`` (``_settle``) runs again: a week whose notes are gone is read from its summary by
    every later run (``_dated_lines``), where a line its notes made routine may be a standing line a
    newer note changes; the next run, with nothing new, would retire it."""
    packed = cap // 4 if packed_cap is None else packed_cap
    bound = await asyncio.to_thread(
        functools.partial(bound_archive, root, plain_cap=cap, packed_cap=packed, dry_run=dry_run)
    )
    report.compressed, report.expired = bound.compressed, bound.expired
    report.archive_bytes, report.archive_packed_bytes = bound.plain_bytes, bound.packed_bytes
    for rel in [*bound.compressed, *bound.expired]:
        sizes.pop(rel, None)
    if bound.expired and settle is not None and not dry_run:
        await settle()


def _operator_model(
    operator: OperatorModel, notes: dict[str, str], until: date, report: Report, *, dry_run: bool
) -> None:
    """Merge the preferences the notes state into the operator's model file (byte-identical when
    merged again, so a resumed run changes nothing twice)."""
    from sidecar.consolidate.operator import extract_preferences, merge_operator_model

    found = [pref for source, text in notes.items() for pref in extract_preferences(text, source)]
    found = [pref for pref in found if judged(pref.rule, operator.path, report.withheld)]
    old = read_file(operator.root, operator.path)
    if not found and old is None:
        return
    current = "" if old is None else old.decode("utf-8", errors="replace")
    if not current.strip():
        current = "# Operator model\n\n## Preferences\n"
    text, merge = merge_operator_model(current, found, until.isoformat(), cap_bytes=operator.cap_bytes)
    data = text.encode("utf-8")
    report.operator_model = OperatorUpdate(
        operator.path, merge.added, tuple(rule for rule, _ in merge.merged), merge.replaced, merge.dropped, data != old
    )
    if data != old and not dry_run:
        durable_replace(operator.root, operator.path, data, old)


def _archive(root: Path, source: str, report: Report, sizes: dict[str, int], dry_run: bool) -> None:
    """Take a note out of ``daily/`` in one rename, copy it to the archive (joined to an archived
    copy of the same day), then remove it."""
    target, claimed = archive_rel(source), claimed_rel(source)
    if not dry_run and read_file(root, claimed) is None:
        rename_durably(root, source, claimed)  # a claim left by a killed run is finished first
    daily = read_file(root, source if dry_run else claimed)
    if daily is None:
        return  # archived by an earlier run
    archived = read_file(root, target)
    data = merged(daily, archived)
    assert data is not None  # daily is not None
    report.archived.append(Archived(source, target))
    sizes.pop(source, None)
    sizes[target] = len(data)
    if dry_run:
        return
    if data != archived:
        durable_replace(root, target, data, archived)
    unlink_durably(root, claimed)


def recorder(
    journal: JournalStore | None, record: Record | None, *, workspace_id: str, agent_id: str | None
) -> Record | None:
    """Where the weeks' entries go: ``journal`` when given, else ``record``."""
    if journal is None:
        return record
    return functools.partial(record_week, journal, workspace_id=workspace_id, agent_id=agent_id)


async def _record(record: Record, periods: list[Week], report: Report, *, agent_id: str | None, dry_run: bool) -> None:
    """Each week's ``memory.consolidated`` entry, under an id derived from what it records."""
    for period in periods:
        recorded = "\n".join([agent_id or "", period.path, *period.sources, period.text])
        entry_id = f"consolidated:{period.name}:{hashlib.sha256(recorded.encode()).hexdigest()[:24]}"
        report.journal_entries.append(entry_id)
        if not dry_run:
            await record(period, entry_id)


async def record_week(
    journal: JournalStore, period: Week, entry_id: str, *, workspace_id: str, agent_id: str | None
) -> None:
    """Append week ``period``'s entry ``entry_id`` to ``journal``, linked ``supports`` to the entries
    its notes name; one recorded already (by the run this one finishes) is left as it is."""
    summary = period.text if len(period.text) <= MAX_SUMMARY_CHARS else period.text[: MAX_SUMMARY_CHARS - 1] + "…"
    payload = {
        "period": period.name,
        "path": period.path,
        "sources": list(period.sources),
        "archived_as": [archive_rel(s) for s in period.sources],
        "dropped": len(period.dropped),
        "engine": period.engine,
    }
    entry = JournalEntry(workspace_id, "memory.consolidated", summary, agent_id=agent_id, payload=payload, id=entry_id)
    try:
        await journal.append(entry)
    except Conflict:
        return  # recorded by the run this one finishes
    if period.evidence:
        found = await journal.fetch(workspace_id, list(period.evidence))
        if evidence := [i for i in period.evidence if i in found]:
            await link_supports(journal, entry_id, evidence, workspace_id=workspace_id)
