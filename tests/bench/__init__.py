"""Benchmarks (``python -m tests.bench``). numpy runs on one OpenBLAS thread here, as in every
sidecar process (``sidecar/__init__.py``): set before any bench module imports numpy, so the
in-process figures are those of what ships. An explicit setting in the environment wins."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
