"""The real in-process model, loaded once for every retrieval test that asks for it (modules that
use it skip themselves when the [embed] extra is not installed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sidecar.retrieval.embed import OnnxEmbedder


@pytest.fixture(scope="session")
def model() -> Iterator[OnnxEmbedder]:
    yield OnnxEmbedder()
