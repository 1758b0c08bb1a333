"""A run reads each line of a tier many times over, so the readings of one line are kept
(``text.LINE_CACHE``): a kept reading must be the one the line has in the context it is read in."""

from __future__ import annotations

from sidecar.consolidate import changes
from sidecar.consolidate.routine import _words


def test_a_line_s_words_follow_the_words_its_batch_writes_in_lower_case() -> None:
    line = "Morning milking starts at 5:30"
    alone = changes._tokens(line)
    token = changes._PLAIN.set(frozenset({"morning"}))
    try:
        in_a_batch = changes._tokens(line)
    finally:
        changes._PLAIN.reset(token)
    # a capitalised word opening the line is lowercased as it is alone, read as its form where the
    # batch writes it in lower case
    assert alone[0] == ("morning", False)
    assert in_a_batch[0] == (changes.form("morning"), False) != alone[0]
    assert changes._tokens(line) == alone  # read alone again: the batch's reading is not the one kept


def test_a_kept_reading_cannot_be_changed_by_its_reader() -> None:
    said = _words("Stock check: 40 crates of lemons")
    assert isinstance(said, tuple)
    assert _words("Stock check: 40 crates of lemons") == ("stock", "check", "crates", "lemons")
