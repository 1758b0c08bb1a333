"""The load benchmark's appends: a share of them carry words of the tier, as a user's note does, and
those reach the duplicate check's search of the tier; the others never do.

Not part of ``make test`` (tests/bench is not collected): ``pytest tests/bench/test_p66_appends.py``.
The wrk case runs where wrk is installed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from aiohttp import web

from sidecar.index.tier_index import TierIndex
from sidecar.settings import Settings
from sidecar.write.dedup import judged_lines, tier_query
from sidecar.write.service import DEDUP_RAREST_WORDS
from tests.bench.loadgen import PLAIN_APPEND, TIER_SENTENCES, drive, tier_sentences
from tests.bench.test_load import GENERATORS, FakeSidecar, fake  # noqa: F401 -- the fixture
from tests.support.corpus import VOCAB, make_corpus


@pytest.fixture
def contents(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every append's content the fake sidecar receives (requested before ``fake``, which routes
    its writes to the method patched here)."""
    seen: list[str] = []
    real = FakeSidecar.write

    async def recording(self: FakeSidecar, request: web.Request) -> web.Response:
        seen.append(str((await request.json())["content"]))
        return await real(self, request)

    monkeypatch.setattr(FakeSidecar, "write", recording)
    return seen


def run(url: str, generator: str, tmp_path: Path, share: float) -> None:
    drive(
        url,
        os.getpid(),
        seconds=1.0,
        warmup=0.0,
        connections=1,
        writers=1,
        queries=["alpha beta"],
        work=tmp_path / generator,
        wrk=shutil.which("wrk") if generator == "wrk" else None,
        tier_words=share,
    )


@pytest.mark.parametrize("generator", GENERATORS)
def test_a_share_of_the_appends_carry_tier_words(
    contents: list[str],
    fake: tuple[str, FakeSidecar],  # noqa: F811
    generator: str,
    tmp_path: Path,
) -> None:
    run(fake[0], generator, tmp_path, 0.5)
    plain = [c for c in contents if c.split(" ", 2)[2] == PLAIN_APPEND]
    tiered = [c.split()[2:] for c in contents if c.split(" ", 2)[2] != PLAIN_APPEND]
    assert len(contents) >= 20
    assert 0.2 < len(tiered) / len(contents) < 0.8
    vocab = set(VOCAB)
    assert all(12 <= len(words) <= 20 and set(words) <= vocab for words in tiered)
    assert all(c.split()[1].startswith("loadw") for c in contents)  # each still has its token first
    assert plain


@pytest.mark.parametrize("generator", GENERATORS)
def test_without_tier_words_every_append_is_plain(
    contents: list[str],
    fake: tuple[str, FakeSidecar],  # noqa: F811
    generator: str,
    tmp_path: Path,
) -> None:
    run(fake[0], generator, tmp_path, 0.0)
    assert contents and all(c.split(" ", 2)[2] == PLAIN_APPEND for c in contents)


def test_a_tier_words_append_reaches_the_duplicate_checks_search(tmp_path: Path) -> None:
    """On a generated tier of 3,000 chunks, the duplicate check searches for nearly every append with tier words
    (its words are the tier's commonest, the token one in 13-21), and for no plain one."""
    root = tmp_path / "memory"
    root.mkdir()
    make_corpus(root, 3000)  # the size the load bench is run at
    index = TierIndex(root, "agent")
    index.open(postings=True)
    try:
        threshold = Settings().dedup_threshold or 0.9

        def searched(content: str) -> list[str]:
            lines = judged_lines(content)
            every = list(dict.fromkeys(w for words in lines for w in words))
            counts = index.postings_counts(every)
            assert counts is not None
            return tier_query(lines, dict(zip(every, counts, strict=True)), threshold, DEDUP_RAREST_WORDS)

        lines = tier_sentences(TIER_SENTENCES, 1)[:200]
        reached = [bool(searched(f"- loadw0n{i}x {line}")) for i, line in enumerate(lines)]
        assert sum(reached) >= 0.9 * len(lines)
        assert not any(searched(f"- loadw0n{i}x {PLAIN_APPEND}") for i in range(20))
    finally:
        index.close()
