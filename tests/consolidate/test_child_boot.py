"""The consolidation's own process starts without rich: structlog imports it when it is installed,
for tracebacks that process never renders, and it was a third of the process's imports."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from sidecar.consolidate.child import _BOOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("rich") is None, reason="rich is not installed")


def _rich_loaded(boot: str) -> list[str]:
    """The rich modules a process started as the runner starts its child holds once ``boot`` has run
    up to the child's ``main`` (its module and structlog imported)."""
    probe = boot.replace(
        "sys.exit(main(sys.argv[1:]))",
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'rich' and sys.modules[m] is not None)))",
    )
    assert probe != boot
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-P", "-c", probe], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_child_process_imports_no_rich() -> None:
    assert _rich_loaded(_BOOT) == []


def test_without_the_guard_structlog_brings_rich_in() -> None:
    unguarded = _BOOT.replace("sys.modules.setdefault('rich', None); ", "")
    assert unguarded != _BOOT and _rich_loaded(unguarded)
