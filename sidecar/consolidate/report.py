"""What a consolidation did, or would do on a dry run: one value, as JSON and as readable text."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sidecar.consolidate.memories import MergedMemories

__all__ = [
    "Archived",
    "DroppedLine",
    "Fallback",
    "NotPromoted",
    "OperatorUpdate",
    "Promoted",
    "Report",
    "Skipped",
    "SummaryWritten",
    "SupersededLine",
    "Withheld",
]

DropReason = Literal["duplicate", "budget", "conversation"]


@dataclass(frozen=True, slots=True)
class SummaryWritten:
    """A period's summary file, the daily notes it rolls up, the summariser that wrote it, and
    what clustered its lines."""

    period: str
    path: str
    sources: tuple[str, ...]
    engine: str
    clustered_by: str = "words"  # "words+embeddings" when a model also matched lines


@dataclass(frozen=True, slots=True)
class Promoted:
    """A recurring line added to the evergreen file, and the notes it recurred in."""

    line: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NotPromoted:
    """A recurring line not added: ``present`` already, or over the evergreen ``cap``."""

    line: str
    sources: tuple[str, ...]
    reason: Literal["present", "cap"]


@dataclass(frozen=True, slots=True)
class Archived:
    source: str
    archived_as: str


@dataclass(frozen=True, slots=True)
class DroppedLine:
    """A line left out of a summary: a ``duplicate`` of ``kept_as``, or over the ``budget``; or a
    ``conversation`` (``text`` says how many turns) that ``kept_as``, its digest, stands for. Its
    notes stay readable in the archive."""

    text: str
    sources: tuple[str, ...]
    reason: DropReason
    period: str
    kept_as: str | None = None


@dataclass(frozen=True, slots=True)
class SupersededLine:
    """A line whose value a newer line changed: where it was (a note rolled up now, an earlier
    summary, the evergreen file), and the newer line, where and when it was said."""

    line: str
    where: str
    by: str
    by_where: str
    on: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file the job could not read as what its name says (a summary named for no week), left as it is."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Withheld:
    """A line the job did not write because the injection scanner flagged it, as an API write
    would be refused: where it would have gone, and the finding's category and level."""

    line: str
    target: str
    category: str
    level: str


@dataclass(frozen=True, slots=True)
class Fallback:
    """A summary the model did not write (it failed, hung, ran past the run's budget, or its answer
    tripped the injection scanner): the extractive one stands in."""

    period: str
    reason: str


@dataclass(frozen=True, slots=True)
class OperatorUpdate:
    """What the operator model's file gained: rules added, rules seen again, rules a newer
    contradicting one replaced (old, new), rules dropped for the cap, and whether the file changed."""

    path: str
    added: tuple[str, ...]
    merged: tuple[str, ...]
    replaced: tuple[tuple[str, str], ...]
    dropped: tuple[str, ...]
    changed: bool


@dataclass(slots=True)
class Report:
    """One consolidation run; ``bytes_*`` count the tier's memory files, ``live_bytes_*`` those
    outside ``archive/`` (what the agent's memory carries day to day)."""

    dry_run: bool
    periods: list[str] = field(default_factory=list)
    summaries: list[SummaryWritten] = field(default_factory=list)
    promoted: list[Promoted] = field(default_factory=list)
    not_promoted: list[NotPromoted] = field(default_factory=list)
    archived: list[Archived] = field(default_factory=list)
    dropped: list[DroppedLine] = field(default_factory=list)
    superseded: list[SupersededLine] = field(default_factory=list)
    operator_model: OperatorUpdate | None = None
    memories_merged: list[MergedMemories] = field(default_factory=list)
    journal_entries: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)
    compressed: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    archive_bytes: int = 0
    archive_packed_bytes: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    live_bytes_before: int = 0
    live_bytes_after: int = 0
    resumed: bool = False
    #: Why the run had no journal (typed memories not merged, no ``memory.consolidated`` entries).
    no_journal: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def to_text(self) -> str:
        verb = "would be " if self.dry_run else ""
        lines = [
            f"consolidation{' (dry run)' if self.dry_run else ''}{' (resumed)' if self.resumed else ''}: "
            f"{len(self.periods)} period(s), {len(self.archived)} daily note(s) {verb}archived",
            f"memory counted against the tier cap (outside archive/): {_kb(self.live_bytes_before)} -> "
            f"{_kb(self.live_bytes_after)}; "
            f"whole tier: {_kb(self.bytes_before)} -> {_kb(self.bytes_after)}",
        ]
        if self.no_journal:
            lines.append(f"no journal: {self.no_journal}")
        for summary in self.summaries:
            lines.append(
                f"  {summary.path} ({summary.engine}, clustered by {summary.clustered_by}) "
                f"from {len(summary.sources)} note(s)"
            )
        if self.promoted:
            lines.append(f"promoted to the evergreen file ({len(self.promoted)}):")
            lines += [f"  {p.line}  [{', '.join(p.sources)}]" for p in self.promoted]
        if self.superseded:
            lines.append(f"superseded by a newer value ({len(self.superseded)}; kept under '## Superseded'):")
            lines += [f"  {s.where}: {s.line!r} -> {s.by!r} ({s.by_where}, {s.on})" for s in self.superseded]
        if self.operator_model is not None and self.operator_model.changed:
            model = self.operator_model
            lines.append(
                f"operator model {model.path}: {len(model.added)} rule(s) added, {len(model.merged)} seen again"
            )
            lines += [f"  + {rule}" for rule in model.added]
            lines += [f"  {old!r} replaced by {new!r}" for old, new in model.replaced]
            lines += [f"  dropped for the cap: {rule}" for rule in model.dropped]
        if self.memories_merged:
            lines.append(
                f"near-duplicate memories {'would be ' if self.dry_run else ''}merged ({len(self.memories_merged)}):"
            )
            lines += [f"  {m.kept} {m.summary!r} <- {', '.join(m.merged)}" for m in self.memories_merged]
        if self.withheld:
            lines.append(f"not written, flagged by the injection scanner ({len(self.withheld)}):")
            lines += [f"  {w.target}: {w.line!r} ({w.category}, {w.level})" for w in self.withheld]
        if self.fallbacks:
            lines.append(f"model summaries replaced by extractive ones ({len(self.fallbacks)}):")
            lines += [f"  {f.period}: {f.reason}" for f in self.fallbacks]
        if self.skipped:
            lines.append(f"skipped ({len(self.skipped)}):")
            lines += [f"  {k.path}: {k.reason}" for k in self.skipped]
        if self.compressed or self.expired:
            lines.append(
                f"archive: {len(self.compressed)} note(s) compressed, {len(self.expired)} removed past its cap; "
                f"{_kb(self.archive_bytes)} plain, {_kb(self.archive_packed_bytes)} compressed"
            )
        capped = [n for n in self.not_promoted if n.reason == "cap"]
        if capped:
            lines.append(f"not promoted, over the evergreen cap ({len(capped)}):")
            lines += [f"  {n.line}  [{', '.join(n.sources)}]" for n in capped]
        if self.dropped:
            lines.append(f"left out of the summaries ({len(self.dropped)}; still in archive/):")
            for d in self.dropped:
                why = {"duplicate": f"duplicate of {d.kept_as!r}", "budget": "over the budget"}.get(
                    d.reason, f"a conversation, as the digest {d.kept_as!r}"
                )
                lines.append(f"  {d.period} {d.text!r} ({why}) [{', '.join(d.sources)}]")
        return "\n".join(lines)


def _kb(size: int) -> str:
    return f"{size / 1024:.1f} KB"
