"""Static import graph of a tree of Python files, read with ``ast`` (nothing is imported).

Every import statement counts: at module level, inside functions and classes, under
``try``/``if``, and under ``if TYPE_CHECKING:`` (marked ``type_checking`` so callers can leave those
out). Relative imports are resolved against the importing module. ``from pkg import name`` also
imports ``pkg.name`` when that is a module of the tree, and importing ``a.b.c`` also imports the
packages ``a.b`` and ``a`` (their ``__init__`` runs first) -- except the importer's own enclosing
packages, which are already being imported by the time its body runs.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Edge", "ImportGraph", "find_cycle", "module_name", "parsed", "read_graph"]


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of the file at ``path``, parsed once per process: the layout checks walk
    the same files several times. Only for files that do not change while the tests run."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@dataclass(frozen=True)
class Edge:
    source: str  # importing module
    target: str  # imported module (a module or package of the tree)
    path: Path  # file of ``source``
    line: int
    type_checking: bool  # under ``if TYPE_CHECKING:``

    def where(self, root: Path) -> str:
        try:
            shown = self.path.relative_to(root)
        except ValueError:
            shown = self.path
        return f"{shown}:{self.line}"


@dataclass
class ImportGraph:
    modules: dict[str, Path]  # dotted name -> file
    edges: list[Edge]

    def targets(self, *, runtime_only: bool = False) -> dict[str, set[str]]:
        graph: dict[str, set[str]] = {name: set() for name in self.modules}
        for edge in self.edges:
            if runtime_only and edge.type_checking:
                continue
            graph[edge.source].add(edge.target)
        return graph


def module_name(path: Path, base: Path) -> str:
    """``base/pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``base/pkg/__init__.py`` -> ``pkg``."""
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _parents(name: str) -> Iterator[str]:
    parts = name.split(".")
    for end in range(len(parts) - 1, 0, -1):
        yield ".".join(parts[:end])


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement in ``tree``, with whether it sits under ``if TYPE_CHECKING:``."""

    def visit(node: ast.AST, guarded: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, guarded
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from visit(child, True)
            for child in node.orelse:  # the ``else`` of ``if TYPE_CHECKING`` runs at runtime
                yield from visit(child, guarded)
            return
        for inner in ast.iter_child_nodes(node):
            yield from visit(inner, guarded)

    yield from visit(tree, False)


def _resolve_from(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    package = importer if is_package else importer.rpartition(".")[0]
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        raise ImportError(f"{importer}: relative import beyond the top-level package")
    base = parts[: len(parts) - (node.level - 1)]
    if node.module:
        base.append(node.module)
    return ".".join(base)


def read_graph(base: Path, files: Iterable[Path], prefix: str) -> ImportGraph:
    """The import graph of ``files`` (under ``base``), keeping only imports of modules named
    ``prefix`` or ``prefix.*`` that are among ``files``."""
    modules = {module_name(path, base): path for path in sorted(files)}
    edges: list[Edge] = []

    def ours(name: str) -> bool:
        return (name == prefix or name.startswith(prefix + ".")) and name in modules

    for importer, path in modules.items():
        is_package = path.name == "__init__.py"
        own_parents = set(_parents(importer)) | {importer}
        tree = parsed(path)
        for node, guarded in _imports(tree):
            named: list[str] = []
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            else:
                origin = _resolve_from(node, importer, is_package)
                named = [origin]
                named += [f"{origin}.{alias.name}" for alias in node.names if f"{origin}.{alias.name}" in modules]
            targets: list[str] = []
            for name in named:
                for candidate in [name, *_parents(name)]:
                    if candidate not in own_parents and ours(candidate) and candidate not in targets:
                        targets.append(candidate)
            edges += [Edge(importer, target, path, node.lineno, guarded) for target in targets]
    return ImportGraph(modules, edges)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None when the graph has none."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    stack: list[str] = []

    for start in sorted(graph):
        if colour[start] != white:
            continue
        # Iterative DFS: (node, iterator over its sorted targets).
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        colour[start] = grey
        stack.append(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if colour.get(target, black) == grey:
                    return [*stack[stack.index(target) :], target]
                if colour.get(target, black) == white:
                    colour[target] = grey
                    stack.append(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
            if not advanced:
                colour[node] = black
                stack.pop()
                work.pop()
    return None
