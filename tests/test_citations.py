"""The code, the tests, docs/ and the README speak of the product and its users: none of them cites a
document a reader of the repository cannot open (a numbered spec, a numbered issue, the specs'
folder beside the repository, a design or style note kept outside it). Each rule or reason is stated
where it applies instead."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS = Path(__file__).resolve()
SCANNED = ("sidecar", "tests", "docs")
SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt"}
# Case-insensitive, after anything but a letter ("_spec" too), also across a line break and a
# comment's "#" or "#:" there: "(spec 004)", "Spec 003's", "spec_004s", "spec000"; "issue 27",
# "issues #35"; "../shared/spec/"; a design or style note that is not a file of the repository.
CITATIONS = {
    "numbered spec": r"(?<![a-z])spec[\s#:_-]*0\d\d",
    "numbered issue": r"(?<![a-z])issues?[\s#:]*\d+",
    "specs' folder": r"shared/spec",
    **{name: rf"\b{re.escape(name)}\b" for name in ("DESIGN.md", "STYLE.md") if not (ROOT / name).exists()},
}
CITATION = re.compile("|".join(f"(?:{pattern})" for pattern in CITATIONS.values()), re.I)


def scanned_files() -> Iterator[Path]:
    yield ROOT / "README.md"
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts and path != THIS:
                yield path


@pytest.mark.parametrize(
    "text",
    [
        "Feedback moves the seed: up 0.15, down 0.2 (spec 004).",
        "recall (the default scope of a lead: spec 000's ScopeForRole)",
        "Spec 003 stores drawers of up to 10,000 characters",
        "async def test_activation_weights_are_spec_004s",
        "see spec003 for the budget",
        "the fix for issue 27",
        "as asked in Issue #35",
        "read ../shared/spec/004.txt",
        "chunked (800/100, as spec\n  003's auto-ingest does)",
        "the budget (spec\n#: 003)",
        "the house style (STYLE.md)",
    ],
)
def test_the_patterns_catch_each_form_of_citation(text: str) -> None:
    if "STYLE.md" in text and "STYLE.md" not in CITATIONS:
        pytest.skip("the repository holds a STYLE.md of its own")
    assert CITATION.search(text), text


@pytest.mark.parametrize(
    "text",
    [
        "what the MCP specification says a request speaks",
        "spec = copy.deepcopy(answers[op.path][method])",
        "importlib.util.find_spec(name)",
        "the shared bearer token between the lead and its members",
        "../shared/bench-data/injection split by source family",
    ],
)
def test_the_patterns_leave_ordinary_words_alone(text: str) -> None:
    assert not CITATION.search(text), text


def test_nothing_cites_a_document_outside_the_repository() -> None:
    files = list(scanned_files())
    assert len(files) > 100, "the scan found too few files to mean anything"
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for hit in CITATION.finditer(text):
            line = text.count("\n", 0, hit.start()) + 1
            found.append(f"{path.relative_to(ROOT).as_posix()}:{line}: {hit.group(0)!r}")
    assert not found, "state the rule or its reason instead of citing:\n" + "\n".join(found)
