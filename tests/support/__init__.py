"""Helpers shared by the tests and benchmarks: sidecar processes, corpora, memory files."""
