"""The confusables table: shipped as package data, generated from Unicode's data, read offline."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from sidecar.scanner.confusables import TABLE_NAME, build_table, load_table, render_table


def test_the_shipped_table_folds_common_homoglyphs_to_ascii() -> None:
    table = load_table()
    assert len(table) > 500
    expected = {"\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0456": "i", "\u03bf": "o", "\u03b7": "n"}
    assert {char: table[char] for char in expected} == expected
    assert table["\u0406"] == "I" and table["\u0399"] == "I"  # capital-I look-alikes, not "l"
    assert all(not char.isascii() and len(out) == 1 and out.isascii() and out.isalnum() for char, out in table.items())


def test_the_shipped_file_is_what_render_table_writes() -> None:
    text = resources.files("sidecar").joinpath("data", TABLE_NAME).read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert "UTS #39" in header[0] and "confusable-homoglyphs" in header[1]
    origin = header[1].split(" from ", 1)[1].rstrip(".")
    assert render_table(load_table(), origin) == text


def test_build_table_reads_unicode_confusables_txt(tmp_path: Path) -> None:
    source = tmp_path / "confusables.txt"
    source.write_text(
        "# confusables.txt sample\n"
        "0430 ;\t0061 ;\tMA\t# CYRILLIC SMALL LETTER A -> a\n"
        "0406 ;\t006C ;\tMA\t# CYRILLIC CAPITAL LETTER I -> l\n"
        "03B7 ;\t006E 0329 ;\tMA\t# GREEK SMALL LETTER ETA -> n with a mark\n"
        "FF21 ;\t0041 ;\tMA\t# FULLWIDTH A (NFKD already gives A: left out)\n"
        "2024 ;\t002E ;\tMA\t# ONE DOT LEADER (not a letter: left out)\n"
        "0431 ;\t0036 ;\tMA\t# CYRILLIC SMALL LETTER BE -> 6\n",
        encoding="utf-8",
    )
    assert build_table(source) == {"\u0430": "a", "\u0406": "I", "\u03b7": "n", "\u0431": "6"}


def test_build_table_reads_confusable_homoglyphs_json(tmp_path: Path) -> None:
    source = tmp_path / "confusables.json"
    data = {
        "\u0430": [{"c": "a", "n": "LATIN SMALL LETTER A"}],
        "a": [{"c": "\u0430", "n": "CYRILLIC SMALL LETTER A"}],
        "\u1d00": [{"c": "\uab7a", "n": "CHEROKEE SMALL LETTER A"}],
        "\uab7a": [{"c": "A", "n": "LATIN CAPITAL LETTER A"}],
    }
    source.write_text(json.dumps(data), encoding="utf-8")
    assert build_table(source) == {"\u0430": "a", "\u1d00": "A", "\uab7a": "A"}
