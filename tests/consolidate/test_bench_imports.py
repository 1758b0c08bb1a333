"""The consolidation bench loads a history's generator only when that history is asked for.

Some generators are held out: a run of other histories must not load them. The bench is loaded in a
child process (a test module imports no bench module itself).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_LOADED = """
import json, sys
from datetime import date
from tests.bench import consolidation, consolidation_shapes
before = sorted(m for m in sys.modules if m.startswith("tests.bench.consolidation_gen_"))
consolidation._history("fresh3", 7373, date(2026, 11, 30))
direct = consolidation._direct("fresh3")
after = sorted(m for m in sys.modules if m.startswith("tests.bench.consolidation_gen_"))
print(json.dumps({"before": before, "after": after, "direct": len(direct)}))
"""


def _loaded() -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _LOADED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    answer: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def test_loading_the_bench_loads_only_the_generators_its_shapes_read() -> None:
    loaded = _loaded()
    shapes_reads = {
        f"tests.bench.consolidation_gen_{name}"
        for name in ("lab", "home", "bakery", "farm", "removals", "bikeshop", "dental", "school", "platform")
    } | {f"tests.bench.consolidation_gen_{name}" for name in ("dataeng", "mobile", "mleng", "payments")}
    assert set(loaded["before"]) <= shapes_reads  # type: ignore[arg-type]


def test_a_history_asked_for_loads_its_own_generator_and_no_other() -> None:
    loaded = _loaded()
    assert set(loaded["after"]) - set(loaded["before"]) <= {"tests.bench.consolidation_gen_lab"}  # type: ignore[arg-type]
    assert "tests.bench.consolidation_gen_lab" in loaded["after"]  # type: ignore[operator]
    assert loaded["direct"] == 2  # the injection and the lab's own edited line
