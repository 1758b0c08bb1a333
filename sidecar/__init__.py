"""memory-sidecar: a per-container memory daemon for LLM agents."""

__all__ = ["__version__"]

__version__ = "0.1.0"
