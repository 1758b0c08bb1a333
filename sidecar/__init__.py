"""memory-sidecar: a per-container memory daemon for LLM agents."""

import os

# numpy's OpenBLAS starts a thread per core that spins after every matrix product. A search's
# products are small (one query vector against a tier's vectors), so the spinning threads cost
# several times the CPU they save and take it from the other searches: one thread, unless the
# user's environment says otherwise. Set here, before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__all__ = ["__version__"]

__version__ = "0.1.0"
