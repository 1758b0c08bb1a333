"""Write pytest's rewritten bytecode of every test module before a run (``make unit`` does):

    python -m tests.support.precompile

pytest rewrites the ``assert`` statements of each test module and conftest.py it imports, then
caches the result beside the source (``__pycache__/NAME.cpython-311-pytest-X.pyc``), unless
``PYTHONDONTWRITEBYTECODE`` is set: then every pytest process rewrites every module it imports,
every run. Under pytest-xdist each worker imports and collects the whole suite, so on a fresh clone
(or with that variable set) each worker rewrites the same ~200 modules itself. Written once here,
the workers read them. pytest checks a cached module against the hash of its source before using
it, so a file changed since is rewritten as usual; and if pytest's internals moved, nothing is
written and pytest rewrites as it always does.

pytest rewrites the modules of every installed pytest plugin's distribution too (all of
hypothesis, anyio, xdist ... once imported: some 130 modules a process, about 2 s of its CPU on
collecting the suite), each pytest process again where bytecode is not written. Their rewritten
bytecode is written here as well, beside the compiled bytecode ``make setup-dev`` writes for them.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: Not collected (``norecursedirs`` in pyproject.toml): never imported by pytest's collection.
_SKIP = ("bench", "data")


def modules() -> list[Path]:
    """The files pytest rewrites on collecting the suite: conftest.py and test_*.py."""
    found = [*TESTS.rglob("conftest.py"), *TESTS.rglob("test_*.py")]
    return sorted(p for p in found if not set(p.relative_to(TESTS).parts[:-1]) & set(_SKIP))


def plugin_modules() -> list[Path]:
    """The installed files pytest marks for rewriting: every module of a distribution that has a
    ``pytest11`` entry point (``Config._mark_plugins_for_rewrite``), as pytest names them."""
    import importlib.metadata

    from _pytest.config import _iter_rewritable_modules

    found: set[Path] = set()
    for dist in importlib.metadata.distributions():
        if not any(ep.group == "pytest11" for ep in dist.entry_points):
            continue
        files = [str(f) for f in dist.files or []]
        marked = set(_iter_rewritable_modules(files))
        for name in files:
            if not name.endswith(".py") or name.startswith(".."):
                continue
            module = name[:-3].replace("/", ".").removesuffix(".__init__")
            if any(module == m or module.startswith(m + ".") for m in marked):
                path = Path(str(dist.locate_file(name)))
                if path.is_file():
                    found.add(path)
    return sorted(found)


def main() -> int:
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, get_cache_dir
    except ImportError as exc:  # pytest changed its internals: it rewrites as it always does
        print(f"tests.support.precompile: nothing written ({exc})", file=sys.stderr)
        return 0
    quiet = types.SimpleNamespace(trace=lambda *_: None)
    try:
        plugins = plugin_modules()
    except ImportError:  # pytest changed its internals: it rewrites the plugins as it always does
        plugins = []
    for source in [*modules(), *plugins]:
        cache = get_cache_dir(source)
        pyc = cache / (source.name[:-3] + PYC_TAIL)
        if _read_pyc(source, pyc) is not None:
            continue  # already written for this source
        try:
            cache.mkdir(exist_ok=True)
        except OSError:  # a read-only checkout: pytest rewrites in memory, as it would anyway
            continue
        # The config only says whether pytest_assertion_pass hooks are called; this project has none.
        try:
            source_hash, code = _rewrite_test(source, None)  # type: ignore[arg-type]
        except SyntaxError:  # a plugin's file this Python cannot compile: pytest would not import it
            continue
        _write_pyc(quiet, code, source_hash, pyc)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
