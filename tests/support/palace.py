"""The hand-labelled conversation of tests/palace/data/conversation.txt, and the keep/drop scores
of what an ingest kept."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONVERSATION", "HELD_OUT", "LabelledTurn", "Scores", "load_conversation", "score"]

CONVERSATION = Path(__file__).resolve().parents[1] / "palace" / "data" / "conversation.txt"
#: 60 turns written after the ingest rules and never used to change them.
HELD_OUT = CONVERSATION.with_name("heldout.txt")


@dataclass(frozen=True, slots=True)
class LabelledTurn:
    keep: bool
    label: str  # the type when kept (decision, preference, ...), why when dropped (greeting, ack, ...)
    role: str
    content: str


def load_conversation(path: Path = CONVERSATION) -> list[LabelledTurn]:
    turns = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        label, role, content = line.split("|", 2)
        verdict, _, kind = label.partition(":")
        turns.append(LabelledTurn(verdict == "keep", kind, role, content))
    return turns


@dataclass(frozen=True, slots=True)
class Scores:
    precision: float
    recall: float
    type_accuracy: float
    recall_by_type: dict[str, float]

    def line(self) -> str:
        kinds = ", ".join(f"{t} {r:.2f}" for t, r in sorted(self.recall_by_type.items()))
        return (
            f"precision {self.precision:.3f}, recall {self.recall:.3f}, type accuracy {self.type_accuracy:.3f}; "
            f"recall by type: {kinds}"
        )


def score(turns: list[LabelledTurn], kept: Iterable[tuple[int, str]]) -> Scores:
    """Scores of ``kept`` ((turn index, type) pairs) against the labels."""
    got = dict(kept)
    wanted = {i for i, t in enumerate(turns) if t.keep}
    hits = wanted & set(got)
    by_type: dict[str, list[bool]] = {}
    for i in wanted:
        by_type.setdefault(turns[i].label, []).append(i in got)
    return Scores(
        precision=len(hits) / len(got) if got else 0.0,
        recall=len(hits) / len(wanted) if wanted else 0.0,
        type_accuracy=sum(got[i] == turns[i].label for i in hits) / len(hits) if hits else 0.0,
        recall_by_type={t: sum(v) / len(v) for t, v in by_type.items()},
    )
