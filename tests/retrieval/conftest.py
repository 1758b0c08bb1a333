"""The real in-process model for the retrieval tests, the one loaded once per worker (modules that
use it skip themselves when the [embed] extra is not installed)."""

from __future__ import annotations

import pytest

from sidecar.retrieval.embed import OnnxEmbedder


@pytest.fixture(scope="session")
def model(onnx_model: OnnxEmbedder) -> OnnxEmbedder:
    return onnx_model
