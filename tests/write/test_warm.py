"""The write service makes ready at start what the first write would otherwise wait for."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sidecar.settings import Settings
from sidecar.write.service import WriteService


class Recording:
    """An in-process model stand-in (it has ``embed_sync``): records which thread embedded what."""

    model_id = "recording"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append((threading.current_thread().name, len(texts)))
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows[:, 0] = 1.0
        return rows


def test_the_scanner_and_its_semantic_layer_are_ready_before_the_first_write(tmp_path: Path) -> None:
    from sidecar.scanner.semantic import layer_for

    model = Recording()
    writes = WriteService(Settings(memory_dir=tmp_path), None, embedder=model)  # type: ignore[arg-type]  # warm never queues
    try:
        writes.warm()
        writes._thread.submit(lambda: None).result(timeout=120)  # what warm queued has run
        # The prototypes were embedded on the write thread, before any write came.
        assert model.calls and all(name.startswith("memory-writes") for name, _ in model.calls)
        embedded = len(model.calls)
        assert layer_for(model) is not None and len(model.calls) == embedded  # built once, kept
    finally:
        writes.close()


def test_without_the_in_process_model_the_warm_up_leaves_numpy_unloaded(tmp_path: Path) -> None:
    """A BM25-only sidecar idles without numpy: the warm-up loads the rules, not the semantic layer."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from sidecar.settings import Settings\n"
        "from sidecar.write.service import WriteService\n"
        f"writes = WriteService(Settings(memory_dir=Path({str(tmp_path)!r})), None)\n"
        "writes.warm()\n"
        "writes._thread.submit(lambda: None).result(timeout=120)\n"
        "print('sidecar.scanner.scan' in sys.modules, 'numpy' in sys.modules)\n"
        "writes.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["True", "False"]


def test_with_memory_off_nothing_is_embedded_for_writes(tmp_path: Path) -> None:
    model = Recording()
    settings = Settings(memory_dir=tmp_path, memory_enabled=False)
    writes = WriteService(settings, None, embedder=model)  # type: ignore[arg-type]  # warm never queues
    try:
        writes.warm()
        writes._thread.submit(lambda: None).result(timeout=120)
        assert model.calls == []
    finally:
        writes.close()
