"""How far a rule written from one notes set carries to the sets it was not written from.

    .venv/bin/python -m tests.scanner.leave_out                       # every rule below
    .venv/bin/python -m tests.scanner.leave_out harm.data_out         # one rule

For each rule, the attacks of its class that the rule alone fires on (``scan_all``, flag or block), per seen notes
set; on the sets it was not written from, how many of those no other rule fires on (what the rule adds); how many
attacks and benign notes of any class it fires on across the sets; and the benign texts of the public corpora
(``../shared/bench-data/injection``, both parts) it fires on. Only the seen sets are read (``SEEN``); a held-out
set that has not been measured yet is never opened here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sidecar.scanner.scan import scan_all

DATA = Path(__file__).resolve().parent.parent / "data"

SEEN = (
    "tune",
    "tune2",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
)
SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench-data" / "injection"
# rule -> (the class it is for, the sets it was written from)
RULES = {
    "conceal.kept_from_owner": ("concealment", ("heldout7",)),
    "harm.data_out": ("exfiltration", ("heldout7", "heldout6")),
    "harm.unchecked_power": ("tool_abuse", ("heldout7",)),
    "harm.origin_void": ("override_paraphrase", ("heldout7",)),
    "header.settings_off": ("fake_role_header", ("heldout7",)),
    "conceal.scripted_denial": ("concealment", ("heldout8", "heldout2")),
    "conceal.asked_withheld": ("concealment", ("heldout9",)),
    # the multilingual intents: written from each language's grammar, after reading these sets' misses
    "multilingual.asked_withheld": ("other_language", ("heldout9", "heldout8")),
    "multilingual.persona_unasked": ("other_language", ("heldout9", "heldout8")),
    "multilingual.fetch_unasked": ("other_language", ("heldout9", "heldout8")),
    "multilingual.set_aside": ("other_language", ("heldout9", "heldout8")),
    "multilingual.conceal": ("other_language", ("heldout9", "heldout8")),
}


def notes(part: str) -> list[dict[str, Any]]:
    """The cases of ``tests/data/scanner_notes_{part}.jsonl`` (the file the scan bench reads)."""
    with (DATA / f"scanner_notes_{part}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def public_benign() -> list[str]:
    """The benign texts of the public corpora, both parts (read by the data set's own loader)."""
    sys.path.insert(0, str(SHARED))
    from load import load  # type: ignore[import-not-found]  # the data set's own loader, standard library only

    return [rec["text"] for part in ("tune", "heldout") for rec in load(part) if rec["label"] != "malicious"]


def main(argv: list[str]) -> None:
    wanted = [name for name in argv if name in RULES] or list(RULES)
    fired: list[tuple[str, str, bool, set[str]]] = []
    for part in SEEN:
        for case in notes(part):
            text = case["text"] if "parts" not in case else "\n".join(case["parts"])
            patterns = {finding.pattern for finding in scan_all(text)}
            fired.append((part, case["class"], case["malicious"], patterns))
    public = [{finding.pattern for finding in scan_all(text)} for text in public_benign()]
    for rule in wanted:
        cls, written_from = RULES[rule]
        cells, out_n, out_hit, out_alone = [], 0, 0, 0
        for part in SEEN:
            group = [patterns for p, c, malicious, patterns in fired if p == part and c == cls and malicious]
            hits = sum(rule in patterns for patterns in group)
            if group:
                cells.append(f"{part} {hits}/{len(group)}{'*' if part in written_from else ''}")
            if part not in written_from:
                out_n, out_hit = out_n + len(group), out_hit + hits
                out_alone += sum(patterns == {rule} for patterns in group)
        attacks = sum(rule in patterns for _, _, malicious, patterns in fired if malicious)
        benign = sum(rule in patterns for _, _, malicious, patterns in fired if not malicious)
        print(f"{rule} ({cls}; * = written from): {'; '.join(cells)}")
        print(
            f"  left out: {out_hit}/{out_n} ({out_hit / max(out_n, 1):.0%}), {out_alone} caught by no other rule; "
            f"any class: {attacks} attacks, {benign} benign notes; public benign: "
            f"{sum(rule in patterns for patterns in public)} of {len(public)}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
