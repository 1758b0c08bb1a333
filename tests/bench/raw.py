"""Raw limits shared by the benchmarks: what a search or a write needs at least, without the sidecar."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RawQueryEmbedder"]


class RawQueryEmbedder:
    """A query's embedding, raw: the packaged tokenizer (truncated, no padding), then ``session.run`` on the sidecar's own
    onnxruntime session (the verified model graph with its session options, one intra-op thread,
    as a query runs: a session with default options over the file as packaged costs several times
    the CPU per query), then mean pooling and normalising. No thread hop, no cache, no batching."""

    def __init__(self) -> None:
        from sidecar.retrieval.embed.onnx import MAX_TOKENS, _load_session, _load_tokenizer, _model_path

        self.tokenizer = _load_tokenizer(None, MAX_TOKENS)  # truncated, unpadded, as the sidecar's
        self.session: Any = _load_session(_model_path(), 1)
        self.typed = "token_type_ids" in {i.name for i in self.session.get_inputs()}
        self("warm up")

    def __call__(self, text: str) -> np.ndarray:
        ids = np.array([self.tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if self.typed:
            feed["token_type_ids"] = np.zeros_like(ids)
        vector = self.session.run(None, feed)[0][0].mean(axis=0)
        return np.asarray(vector / np.linalg.norm(vector), dtype=np.float32)
