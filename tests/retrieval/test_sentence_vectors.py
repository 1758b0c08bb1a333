"""Sentence vectors pooled from a chunk's own model run, stored beside its vector (a dense-only
hit's snippet is then its sentence closest to the query with no model call at search time; that
end is tested in test_hybrid.py)."""

from __future__ import annotations

import numpy as np
import pytest

from sidecar.index.snippet import sentence_spans
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.hybrid import sentences
from tests.support.embedding import needs_model

pytestmark = needs_model


def test_sentence_spans_are_the_sentences_offsets() -> None:
    text = "  One. Two?  Three!\nFour\n\n five  "
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["One.", "Two?", "Three!", "Four", "five"] == sentences(text)
    assert sentence_spans("x" * 500) == [(0, 240)]
    assert sentence_spans("") == [] and sentence_spans(" \n ") == []


def test_a_span_vector_is_its_sentence_read_in_context(model: OnnxEmbedder) -> None:
    text = "Notes\nThe cat sleeps on the warm windowsill. Shares of the bank fell sharply on Monday."
    body = text.split("\n", 1)[1]
    spans = [(6 + a, 6 + b) for a, b in sentence_spans(body)]
    vectors, (parts,) = model.embed_sync_sentences([text], [spans])
    assert parts.shape == (2, model.dim)
    np.testing.assert_allclose(np.linalg.norm(parts, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(vectors, model.embed_sync([text]), atol=1e-6)  # the chunk's vector is unchanged
    pet, money = model.embed_sync(["a sleeping kitten", "stock market losses"])
    assert parts[0] @ pet > parts[1] @ pet
    assert parts[1] @ money > parts[0] @ money


def test_a_span_past_the_token_limit_gets_a_zero_row(model: OnnxEmbedder) -> None:
    text = "word " * 400 + "The last sentence is never read."
    start = text.index("The last")
    _, (parts,) = model.embed_sync_sentences([text], [[(0, 4), (start, len(text))]])
    assert np.linalg.norm(parts[0]) == pytest.approx(1.0, rel=1e-5)
    assert not parts[1].any()
    with pytest.raises(ValueError, match="one list of spans per text"):
        model.embed_sync_sentences([text], [])
