"""The package layout holds: no import cycles in sidecar/, packages import only downwards, and no
test module imports another test module.

The import graph is read with ``ast`` (tests/support/imports.py): nothing is imported, so an import
inside a function or under ``if TYPE_CHECKING:`` counts as much as one at the top. Each check also
runs against a small synthetic tree in tmp_path, so a check that cannot fail would show here.
"""

from __future__ import annotations

import ast
import functools
import gc
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.imports import Edge, ImportGraph, find_cycle, module_name, parsed, read_graph

ROOT = Path(__file__).resolve().parent.parent

# Low to high: a module may import (at runtime) only from its own level or a lower one.
LEVELS: dict[str, int] = {
    "sidecar": 0,  # the package's __init__ only
    "sidecar.settings": 0,
    "sidecar.errors": 0,
    "sidecar.logs": 0,
    "sidecar.heap": 0,
    "sidecar.tasks": 0,  # stopping background tasks (a cancel lost on the way is cancelled again)
    # One request to a running sidecar on a socket: the CLI and the Claude Code hook ask with it.
    "sidecar.loopback": 0,
    "sidecar.clock": 0,  # the one text form of timestamps, which the journal, ingest and the graph share
    # The one SQLite database class (writer thread, readers, PRAGMAs, migrations): the index, the
    # journal and the graph each hold one.
    "sidecar.db": 0,
    "sidecar.index": 1,
    "sidecar.write": 2,
    "sidecar.prompt": 2,
    # The prompt-injection scanner: write, retrieval, prompt and consolidate run it.
    "sidecar.scanner": 2,
    "sidecar.retrieval": 2,
    # What a crew shares (its chunks in the lead's index or a PostgreSQL store): it ranks with
    # retrieval's fusions, and the crew and server packages above use it.
    "sidecar.store": 2,
    # The agent API's requests and answers: it checks queries and paths with index.query and
    # write.paths, and write, retrieval, prompt, http and mcp take their types from it, so it sits
    # with write on level 2.
    "sidecar.contract": 2,
    # The memory palace: taxonomy, layers, relevance, ingest rules, diary, the per-agent settings
    # file; plain functions the block (prompt) and the routes call.
    "sidecar.palace": 2,
    # The knowledge graph: its store, extraction and questions; http, mcp and server use it, and
    # search gets its lift through a protocol (retrieval.lift.SearchBoost), not an import.
    "sidecar.kg": 2,
    "sidecar.episodic": 3,
    # It reads and writes memory files and the journal: it sits with episodic.
    "sidecar.consolidate": 3,
    # The operations (one module per resource) on the typed ``Sidecar``, the registry of operations
    # and the rules every way in applies to them: above every part they use, below the ways in.
    "sidecar.ops": 4,
    "sidecar.http": 5,
    "sidecar.mcp": 5,
    "sidecar.crew": 5,
    # The memory browser: a way in, like http (its pages call the operations).
    "sidecar.ui": 5,
    "sidecar.server": 6,
    "sidecar.cli": 7,
    "sidecar.__main__": 7,
}

# Today's runtime imports that go up a level, as (importing module, imported component). This list
# may only shrink: an entry that no longer matches an import fails the test, so remove it then.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def component(module: str, levels: dict[str, int]) -> str:
    """The entry of ``levels`` that ``module`` belongs to: itself, or its nearest enclosing
    package (never the bare top-level package, which stands for its ``__init__`` alone)."""
    if module in levels:
        return module
    parts = module.split(".")
    for end in range(len(parts) - 1, 1, -1):
        prefix = ".".join(parts[:end])
        if prefix in levels:
            return prefix
    raise KeyError(f"{module} is on no level: add its package to LEVELS")


def upward_imports(graph: ImportGraph, levels: dict[str, int]) -> list[Edge]:
    """Runtime imports (not under TYPE_CHECKING) of a higher level than the importer's."""
    return [
        edge
        for edge in graph.edges
        if not edge.type_checking and levels[component(edge.target, levels)] > levels[component(edge.source, levels)]
    ]


def layering_problems(
    graph: ImportGraph, levels: dict[str, int], allowed: dict[tuple[str, str], str], root: Path
) -> list[str]:
    problems = [f"{module}: on no level" for module in graph.modules if not _placed(module, levels)]
    if problems:
        return problems
    seen: set[tuple[str, str]] = set()
    for edge in upward_imports(graph, levels):
        key = (edge.source, component(edge.target, levels))
        seen.add(key)
        if key not in allowed:
            src, dst = component(edge.source, levels), key[1]
            problems.append(
                f"{edge.where(root)}: {edge.source} (level {levels[src]}) imports {edge.target} (level {levels[dst]})"
            )
    problems += [f"allow-list entry {key} no longer matches an import: remove it" for key in allowed if key not in seen]
    return problems


def _placed(module: str, levels: dict[str, int]) -> bool:
    try:
        component(module, levels)
    except KeyError:
        return False
    return True


@pytest.fixture(autouse=True, scope="module")
def _trees_kept_only_while_the_checks_run() -> Iterator[None]:
    """The checks read the syntax tree of every file of sidecar/ and tests/, several million
    objects, kept while this module runs and let go after it: kept for the rest of a worker's run,
    every full collection of the cyclic collector in the tests after would walk them again. The
    collector is paused while they are built: its collections would walk the trees already read,
    over and over, and nothing in them is garbage."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        parsed.cache_clear()
        sidecar_graph.cache_clear()
        if was_enabled:
            gc.enable()


@functools.cache
def sidecar_graph(root: Path = ROOT, package: str = "sidecar") -> ImportGraph:
    """The package's import graph, read once per test run (the checks only read it)."""
    return read_graph(root, (root / package).rglob("*.py"), package)


def describe_cycle(graph: ImportGraph, cycle: list[str], root: Path) -> str:
    lines = []
    for source, target in itertools.pairwise(cycle):
        where = next(e.where(root) for e in graph.edges if e.source == source and e.target == target)
        lines.append(f"  {source} -> {target}  ({where})")
    return "import cycle:\n" + "\n".join(lines)


# -- sidecar/ -------------------------------------------------------------------------------------


def test_sidecar_has_no_import_cycles() -> None:
    graph = sidecar_graph()
    assert len(graph.modules) > 50, "the walk found the package's modules"
    cycle = find_cycle(graph.targets())  # TYPE_CHECKING imports included
    assert cycle is None, describe_cycle(graph, cycle or [], ROOT)


def test_packages_import_only_downwards() -> None:
    problems = layering_problems(sidecar_graph(), LEVELS, ALLOWED_UPWARD, ROOT)
    assert problems == [], "\n".join(problems)


#: The ways in (and what wires them together): the only packages that may import aiohttp. Below
#: them, operations take the typed ``Sidecar``, never the web application.
WAYS_IN = (
    "sidecar.http",
    "sidecar.mcp",
    "sidecar.crew",
    "sidecar.ui",
    "sidecar.server",
    "sidecar.cli",
    "sidecar.__main__",
)


def aiohttp_importers(base: Path, files: list[Path]) -> set[str]:
    """Modules among ``files`` that import aiohttp anywhere (in a function, under TYPE_CHECKING too)."""
    found = set()
    for path in files:
        for node in ast.walk(parsed(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(name == "aiohttp" or name.startswith("aiohttp.") for name in names):
                found.add(module_name(path, base))
    return found


def test_aiohttp_is_imported_only_by_the_ways_in() -> None:
    files = sorted((ROOT / "sidecar").rglob("*.py"))
    below = {
        name
        for name in aiohttp_importers(ROOT, files)
        if not any(name == way or name.startswith(way + ".") for way in WAYS_IN)
    }
    assert below == set(), f"below the ways in, nothing imports aiohttp: {sorted(below)}"


def test_a_synthetic_aiohttp_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from aiohttp import web\n")
    (tmp_path / "pkg" / "b.py").write_text("import json\n")
    assert aiohttp_importers(tmp_path, sorted((tmp_path / "pkg").glob("*.py"))) == {"pkg.a"}


#: Where the sidecar's crew role is read: the settings (their checks, ``has_crew``, ``held_tiers``)
#: and the crew backend's choice (``sidecar.ops.crew.crew_kind``). Every other module asks those.
ROLE_READERS = {"sidecar/settings.py", "sidecar/ops/crew.py"}


def role_branches(root: Path, files: list[Path]) -> list[str]:
    """Comparisons on a settings object's ``role`` (``settings.role == "lead"``, ``s.role in ...``),
    as ``path:line``."""
    found = []
    for path in files:
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.Compare):
                continue
            for operand in (node.left, *node.comparators):
                if isinstance(operand, ast.Attribute) and operand.attr == "role" and _names_settings(operand.value):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def _names_settings(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name in ("settings", "s")


def test_the_crew_role_is_read_in_one_place() -> None:
    files = [p for p in sorted((ROOT / "sidecar").rglob("*.py")) if str(p.relative_to(ROOT)) not in ROLE_READERS]
    assert role_branches(ROOT, files) == [], "ask settings.has_crew / held_tiers or ops.crew.crew_kind instead"


def test_a_synthetic_role_branch_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "def f(settings, self, turn):\n"
        "    if turn.role == 'user':\n        pass\n"
        "    if self.settings.role != 'lead':\n        pass\n"
        "    return 'crew' if settings.role in ('lead',) else 'agent'\n"
    )
    assert role_branches(tmp_path, [tmp_path / "a.py"]) == ["a.py:4", "a.py:6"]


def test_the_operations_stand_between_the_parts_and_the_ways_in() -> None:
    """Every ways-in package sits above ``sidecar.ops`` and every package the operations use sits
    below it; the operations import no way in (not even for types) and the ways in reach the
    sidecar's parts through the ``Sidecar`` the operations take."""
    ops_level = LEVELS["sidecar.ops"]
    ways = [way for way in WAYS_IN if way != "sidecar.__main__"]
    assert all(LEVELS[way] > ops_level for way in ways)
    graph = sidecar_graph()
    assert any(m.startswith("sidecar.ops.") for m in graph.modules)
    into_ways = [
        e.where(ROOT)
        for e in graph.edges
        if e.source.startswith("sidecar.ops") and any(e.target == w or e.target.startswith(w + ".") for w in ways)
    ]
    assert into_ways == [], into_ways
    below = [e.target for e in graph.edges if e.source.startswith("sidecar.ops") and not e.type_checking]
    assert all(LEVELS[component(t, LEVELS)] <= ops_level for t in below)


# -- tests/ ---------------------------------------------------------------------------------------


def cross_test_imports(root: Path) -> list[str]:
    """Imports of one test module by another: tests share code through tests.support (and the
    benches through tests.bench) and fixtures through conftest.py, which pytest loads itself."""
    graph = read_graph(root, (root / "tests").rglob("*.py"), "tests")
    problems = []
    for edge in graph.edges:
        target = edge.target
        if target in {"tests", "tests.support"} or target.startswith("tests.support."):
            continue
        if edge.source.startswith("tests.bench") and (target == "tests.bench" or target.startswith("tests.bench.")):
            continue
        problems.append(f"{edge.where(root)}: {edge.source} imports {target}")
    return problems


@pytest.mark.slow
def test_no_test_module_imports_another() -> None:
    problems = cross_test_imports(ROOT)
    assert problems == [], "\n".join(problems)


# -- the checks fail when they should --------------------------------------------------------------


def make_tree(base: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return base


SYNTHETIC = {
    "pkg/__init__.py": "",
    "pkg/low.py": "",
    "pkg/sub/__init__.py": "from .deep import THING\n",
    "pkg/sub/deep.py": "THING = 1\n",
    "pkg/high.py": "from pkg import low\n",
}


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        # A function-level import closing a loop through a package's __init__.
        (
            {"pkg/low.py": "def f():\n    from pkg.sub import deep\n", "pkg/sub/deep.py": "import pkg.low\n"},
            ["pkg.low", "pkg.sub", "pkg.sub.deep", "pkg.low"],
        ),
        # A relative import and `from pkg import module` (a submodule, not a name).
        ({"pkg/low.py": "from . import high\n"}, ["pkg.high", "pkg.low", "pkg.high"]),
        # Under TYPE_CHECKING counts for cycles too.
        (
            {"pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import X\n"},
            ["pkg.high", "pkg.low", "pkg.high"],
        ),
    ],
    ids=["function-level-via-init", "relative-submodule", "type-checking"],
)
def test_a_synthetic_cycle_is_found(tmp_path: Path, extra: dict[str, str], expected: list[str]) -> None:
    base = make_tree(tmp_path, {**SYNTHETIC, **extra})
    graph = sidecar_graph(base, "pkg")
    cycle = find_cycle(graph.targets())
    assert cycle == expected
    assert describe_cycle(graph, cycle, base).startswith(f"import cycle:\n  {expected[0]} -> {expected[1]}  (")


def test_the_synthetic_tree_without_a_loop_has_no_cycle(tmp_path: Path) -> None:
    base = make_tree(tmp_path, SYNTHETIC)
    assert find_cycle(sidecar_graph(base, "pkg").targets()) is None  # a package importing its own module is fine


def test_a_synthetic_upward_import_is_reported(tmp_path: Path) -> None:
    base = make_tree(
        tmp_path,
        {
            **SYNTHETIC,
            "pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high import X\n",
            "pkg/sub/deep.py": "def late():\n    from pkg import high\n",
        },
    )
    levels = {"pkg": 0, "pkg.low": 0, "pkg.sub": 1, "pkg.high": 2}
    graph = sidecar_graph(base, "pkg")
    # low's import is for type checking only; deep's, inside a function, is a runtime import.
    assert layering_problems(graph, levels, {}, base) == [
        "pkg/sub/deep.py:2: pkg.sub.deep (level 1) imports pkg.high (level 2)"
    ]
    assert layering_problems(graph, levels, {("pkg.sub.deep", "pkg.high"): "known"}, base) == []
    stale = {("pkg.sub.deep", "pkg.high"): "known", ("pkg.low", "pkg.high"): "gone"}
    assert layering_problems(graph, levels, stale, base) == [
        "allow-list entry ('pkg.low', 'pkg.high') no longer matches an import: remove it"
    ]
    assert layering_problems(graph, {"pkg": 0, "pkg.low": 0}, {}, base) == [
        "pkg.high: on no level",
        "pkg.sub: on no level",
        "pkg.sub.deep: on no level",
    ]


def test_a_synthetic_test_importing_another_is_reported(tmp_path: Path) -> None:
    base = make_tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/conftest.py": "from tests.support.memory import write\n",
            "tests/support/__init__.py": "",
            "tests/support/memory.py": "",
            "tests/bench/__init__.py": "",
            "tests/bench/util.py": "",
            "tests/bench/bench_x.py": "from tests.bench.util import report\n",
            "tests/http/__init__.py": "",
            "tests/http/test_a.py": "from tests.support import memory\n",
            "tests/http/test_b.py": "from .test_a import helper\n",
            "tests/http/test_c.py": "def f():\n    from ..conftest import fixture\n",
            "tests/test_d.py": "from tests.bench.util import report\n",
        },
    )
    assert cross_test_imports(base) == [
        "tests/http/test_b.py:1: tests.http.test_b imports tests.http.test_a",
        "tests/http/test_c.py:2: tests.http.test_c imports tests.conftest",
        "tests/test_d.py:1: tests.test_d imports tests.bench.util",
        "tests/test_d.py:1: tests.test_d imports tests.bench",
    ]
