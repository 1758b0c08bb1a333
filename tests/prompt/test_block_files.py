"""The block reads memory files under the tier's path rules, as the index and reads do."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from sidecar.prompt.block import build_memory_block
from tests.support.memory import write


def test_files_the_index_would_not_take_stay_out_of_the_block(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "AGENT.md", "# Identity\nI review code.\n")
    write(root, "daily/2026-05-01.md", "# Day\nThe visible note.\n")
    decomposed = unicodedata.normalize("NFD", "daily/café.md")  # a lookalike of an NFC name
    write(root, decomposed, "# Day\nThe decomposed note.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Out\nThe outside note.\n")
    os.symlink(outside, root / "daily" / "2026-05-02.md")
    os.mkfifo(root / "daily" / "2026-05-03.md")
    text = build_memory_block(agent_dir=root, crew_dir=None, role="solo").text
    assert "The visible note." in text
    assert "decomposed note" not in text and "outside note" not in text
