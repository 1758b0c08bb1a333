"""Changes read by meaning, with the real in-process embedding model and without it (the lines'
rarer words): a later line that shares too few words with the older one for the change search by
words ("Export scheduling: Rundeck" after "The night export jobs are scheduled by Cronicle")
retires it when it is the older line's nearest statement and gives its value slot a value of the
same kind; a table of facts written in one frame is never read so; and
a run embeds only the lines it reads by meaning or that may merge by meaning (a week's log, a new
number on every line, is never embedded)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from sidecar.consolidate.changes import (
    WORDS_COSINE,
    changed_by_meaning,
    changed_by_signal,
    changed_by_value,
    meaning_texts,
    word_vectors,
)
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import Said, claim, superseded
from sidecar.retrieval.embed import OnnxEmbedder
from tests.support.embedding import needs_model

pytestmark = needs_model

START = date(2026, 1, 5)  # a Monday
CHANGES = [
    (
        "The night export jobs are scheduled by Cronicle on the utility box.",
        "Export scheduling: Rundeck, one job per client.",
    ),
    ("The shop till runs Lightspeed 4.", "Lightspeed 5 needs the tills restarted every evening."),
]
TABLE = [  # one frame, a fact a line: the later one is another fact, not a new value of the first two
    ("Credentials for the billing API are kept in Vault under secret/billing.", (0, 9, 16)),
    ("Credentials for the search index are kept in Vault under secret/search.", (2, 11)),
    ("Credentials for the mail relay are kept in Vault under secret/mail.", (60,)),
]


@pytest.fixture(scope="module")
def model() -> OnnxEmbedder:
    return OnnxEmbedder()


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _lines() -> list[Said]:
    lines = []
    for n, (old, new) in enumerate(CHANGES):
        lines += [_said(old, day, n) for day in (0, 8, 15)] + [_said(new, 60 + n, n)]
    lines += [_said(text, day, 9) for text, days in TABLE for day in days]
    return lines + [_said(f"Loaded {n * 37} rows into the orders table.", n, 20) for n in range(70)]


def test_a_change_in_other_words_is_read_by_meaning_and_a_table_is_not(model: OnnxEmbedder) -> None:
    lines = _lines()
    by_words = {**changed_by_value(lines), **changed_by_signal(lines), **superseded(lines)}
    # no word of the first change links its two lines; the till's next version of the name only
    # the till's line names is read by its words too (changes._versioned)
    assert {old: newer.text for old, newer in by_words.items()} == {
        "the shop till runs lightspeed 4": f"- {CHANGES[1][1]}"
    }
    texts = meaning_texts(lines)
    assert not any(text.startswith("- Loaded") for text in texts)  # said once each, no standing line
    found = changed_by_meaning(lines, dict(zip(texts, model.embed_sync(texts), strict=True)))
    assert {old: newer.text for old, newer in found.items()} == {
        "the night export jobs are scheduled by cronicle on the utility box": f"- {CHANGES[0][1]}",
        "the shop till runs lightspeed 4": f"- {CHANGES[1][1]}",
    }


def test_without_a_model_the_words_stand_for_the_meaning() -> None:
    lines = _lines()
    assert changed_by_meaning(lines, {}) == {}  # no vector, nothing read
    texts = meaning_texts(lines)
    found = changed_by_meaning(lines, word_vectors(texts), cosine=WORDS_COSINE, dropped=False)
    assert {old: newer.text for old, newer in found.items()} == {
        "the night export jobs are scheduled by cronicle on the utility box": f"- {CHANGES[0][1]}",
        "the shop till runs lightspeed 4": f"- {CHANGES[1][1]}",
    }


def _tier(root: Path) -> None:
    days: dict[int, list[str]] = {}
    for n, (old, new) in enumerate(CHANGES):
        for day in (0, 8, 15):
            days.setdefault(day, []).append(old)
        days.setdefault(60 + n, []).append(new)
    for text, at in TABLE:
        for day in at:
            days.setdefault(day, []).append(text)
    for day in range(70):  # the log: a new number every line
        days.setdefault(day, []).append(f"Loaded {day * 37 + 11} rows into the orders table in {day % 9 + 2} minutes.")
    (root / "daily").mkdir(parents=True)
    for day, lines in days.items():
        when = START + timedelta(days=day)
        (root / "daily" / f"{when}.md").write_text(f"# {when}\n\n## Log\n" + "".join(f"- {ln}\n" for ln in lines))


@pytest.fixture
async def counted(model: OnnxEmbedder) -> AsyncIterator[tuple[list[str], object]]:
    embedded: list[str] = []

    async def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        embedded.extend(texts)
        return await model.embed(texts)

    yield embedded, embed


async def test_a_run_retires_the_old_line_with_the_model_and_without_and_embeds_no_log(
    tmp_path: Path, counted: tuple[list[str], object]
) -> None:
    embedded, embed = counted
    with_model, without = tmp_path / "model", tmp_path / "words"
    _tier(with_model)
    _tier(without)
    until = START + timedelta(days=80)
    await consolidate(without, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False, embed=None)
    report = await consolidate(
        with_model,
        since=None,
        until=until,
        summariser=ExtractiveSummariser(),
        dry_run=False,
        embed=embed,  # type: ignore[arg-type]
    )
    old = CHANGES[0][0]
    assert any(s.line.endswith(old) and s.by == f"- {CHANGES[0][1]}" for s in report.superseded)
    for root in (with_model, without):
        agent = (root / "AGENT.md").read_text()
        assert old not in agent and TABLE[0][0] in agent  # the table's facts stay current
        first_week = (root / "daily" / "summaries" / "2026-W02.md").read_text()
        assert f"- {old} <!-- superseded {START + timedelta(days=60)}" in first_week.partition("## Superseded\n")[2]
    assert embedded and not any("Loaded" in text for text in embedded)  # the log is never embedded


@pytest.mark.slow  # behaviour at scale: the memory of 3,000 lines' reading within a bound (~5.6 s of CPU)
def test_the_words_reading_holds_weights_not_their_square() -> None:
    """Three thousand standing lines of words of their own: as dense rows, their tf-idf vectors
    and their cosines would take over 140 MB; read sparsely and a row at a time, a few."""
    import tracemalloc

    lines = [_said(f"Crate{n} of sprocket{n} parts sits in bay-{n}.", day, n) for n in range(3000) for day in (0, 8)]
    tracemalloc.start()
    try:
        texts = meaning_texts(lines)
        found = changed_by_meaning(lines, word_vectors(texts), cosine=WORDS_COSINE, dropped=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(texts) == 3000 and found == {}
    assert peak < 40 * 1024 * 1024, peak
