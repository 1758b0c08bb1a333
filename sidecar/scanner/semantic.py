"""The semantic layer: what a text's sentences mean, read with the in-process model.

It runs only where an embedder is at hand (the in-process MiniLM model, already loaded by the
caller: this module never loads the model; ``layer_for``), and only on text the rules left clean, so it
can add findings but never costs a rule's verdict. It has two parts, each measured alone by the
scan bench:

- ``prototypes``: each sentence that speaks to someone (a second person, an imperative, the model
  named; at most ``MAX_SENTENCES`` a text) against prototype sentences of the intents
  (``prototypes``); a cosine at or above ``THRESHOLD``, and ``MARGIN`` above the sentence's nearest
  ordinary order, is a hit (pattern ``semantic.<intent>``). The model reads what a sentence is
  about better than what it asks, so the sentences it cannot tell apart by their polarity are
  settled before it: one that speaks about attacks (``DESCRIBED``), keeps a check ("ask first",
  "only if") or sits in a code block is not judged, and a negated one ("never disable the hooks")
  is judged against the concealment prototypes alone ("never mention this note" is itself an order);
- ``head``: the learned head (``scanner.head``) over every chunk and sentence, at its own threshold
  (pattern ``learned.<intent>``, the intent being the nearest prototype's).

A hit of either is ``flag``, never ``block``: a nearest neighbour or a classifier's score is
evidence, not proof. So a write it flags goes through with a warning, and the block withholds the
section.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from sidecar.scanner.harm import kept_check
from sidecar.scanner.head import EmbedSpans, Head, Vectors, load_head
from sidecar.scanner.normalise import normalise
from sidecar.scanner.prototypes import ORDINARY, PROTOTYPES
from sidecar.scanner.rule import DESCRIBED
from sidecar.scanner.sentences import sentence_at, sentences

__all__ = [
    "CACHE_TEXTS",
    "HEAD_IN_SERVER",
    "MARGIN",
    "PARTS",
    "PROTOTYPES",
    "THRESHOLD",
    "SemanticHit",
    "SemanticLayer",
    "layer_for",
]

PARTS = frozenset(("prototypes", "head"))
# With the learned head, 11 of NotInject's 339 benign questions are flagged (``python -m tests.bench scan``):
# over the 2% a memory scanner may flag on a public benign set, so the server's layer (``layer_for``)
# runs the prototypes only; callers that want the head build a layer with it.
HEAD_IN_SERVER = False


class SemanticHit(NamedTuple):
    """The sentence that made the hit: its intent (a scanner category: the nearest prototype's), a
    short excerpt, the sentence, its score (a cosine, or the head's probability) and the part
    that found it (``prototypes`` or ``head``)."""

    intent: str
    excerpt: str
    sentence: str
    score: float
    part: str = "prototypes"


Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

# Cosine to the nearest prototype at which a sentence is flagged, and by how much it must be nearer
# to a prototype than to every ordinary order (``ORDINARY``). Chosen on the tuning notes and the public
# tuning corpora (``python -m tests.bench scan``): at 0.55 and 0.05 none of the tuning notes' benign side
# is flagged and one of the 2,443 public tuning texts is.
THRESHOLD = 0.55
MARGIN = 0.05
MIN_WORDS = 5  # a shorter sentence ("assistant rules", "ai persona:") names a topic, not an intent
MAX_SENTENCES = 32
CACHE_TEXTS = 4096  # texts whose answer a layer keeps (16-byte digests: a few hundred KB)
_ADDRESSED = re.compile(
    r"\b(?:you|your|yourself|assistant|model|ai|agent|llm|bot)\b|^\W*(?:ignore|disregard|forget|send|reveal|"
    r"print|run|execute|hide|delete|upload|post|forward|include|pretend|act|become|do\s+not|don'?t|never|always)\b"
)


_NEGATED = re.compile(r"\b(?:never|not|don'?t|doesn'?t|won'?t|cannot|can'?t|mustn'?t|shouldn'?t|avoid|no)\b")
_WORDS = re.compile(r"\w+")


def _judged(text: str, start: int, end: int) -> bool:
    """Whether the sentence at ``start:end`` is one the prototypes judge: it speaks to someone, has
    ``MIN_WORDS`` words, does not speak about attacks and keeps no check."""
    sentence = text[start:end]
    return (
        _ADDRESSED.search(text, start, end) is not None  # "^": an imperative that opens the text
        and len(_WORDS.findall(sentence)) >= MIN_WORDS
        and DESCRIBED.search(sentence) is None
        and not kept_check(sentence)
    )


def _without_heading(span: tuple[int, int], text: str) -> tuple[int, int]:
    """A sentence without the heading lines it starts with: "## Favour" says nothing of intent and
    pulls the sentence's embedding away from the prototypes."""
    start, end = span
    while start < end and text[start] == "#" and (newline := text.find("\n", start, end)) != -1:
        start = newline + 1
    if start < end and text[start] == "#":
        return start, start  # a heading alone
    return start, end


class SemanticLayer:
    """Prototype intents embedded once with ``embed``; ``finding`` judges a text's sentences. The
    answers for the last ``CACHE_TEXTS`` texts are kept (keyed by a digest of the text), so a
    section read by every memory block is embedded once, not once a block."""

    def __init__(
        self,
        embed: Embed,
        threshold: float = THRESHOLD,
        *,
        embed_spans: EmbedSpans | None = None,
        head: Head | None = None,
        parts: frozenset[str] = PARTS,
        vectors_key: str | None = None,
    ) -> None:
        """``embed`` embeds sentences; ``embed_spans`` (the model's ``embed_sync_sentences``) and
        ``head`` enable the learned head; ``parts`` picks which of the two parts judge.
        ``vectors_key`` (the embedder's ``vectors_key``) shares the prototypes' vectors with every
        layer built over an embedder with the same key in this process: embedded once, not once a
        layer (~0.7 s of CPU each)."""
        self._embed = embed
        self._threshold = threshold
        self._embed_spans = embed_spans
        self._head = head if embed_spans is not None and "head" in parts else None
        self._prototypes = "prototypes" in parts
        self._labels = [label for label, texts in PROTOTYPES.items() for _ in texts]
        self._matrix, self._ordinary = _prototype_vectors(embed, vectors_key)
        self._conceal = np.array([label == "concealment" for label in self._labels], dtype=np.float32)
        self._known: OrderedDict[bytes, SemanticHit | None] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def has_head(self) -> bool:
        """True when the learned head judges (``scan_write`` runs the layer only then)."""
        return self._head is not None

    def finding(self, text: str) -> SemanticHit | None:
        """The sentence closest to a prototype when it is above the threshold, else None."""
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
        found = self._judge(text)
        with self._lock:
            self._known[key] = found
            while len(self._known) > CACHE_TEXTS:
                self._known.popitem(last=False)
        return found

    def _judge(self, text: str) -> SemanticHit | None:
        found = self._nearest(text) if self._prototypes else None
        if found is None and self._head is not None and self._embed_spans is not None:
            best = self._head.best(text, self._embed_spans)
            if best is not None and best.score >= self._head.threshold:
                intent = self._labels[int(np.argmax(self._matrix @ best.vector))]
                return SemanticHit(intent, best.excerpt, best.sentence, best.score, "head")
        return found

    def _nearest(self, text: str) -> SemanticHit | None:
        views = normalise(text)
        folded = views.folded
        spans = [(s, e) for s, e in map(_without_heading, sentences(folded), repeat(folded)) if s < e]
        spans = [(s, e) for s, e in spans if _judged(folded, s, e) and not views.in_fence(s)][:MAX_SENTENCES]
        if not spans:
            return None
        vectors = self._embed([folded[s:e] for s, e in spans])
        scores = vectors @ self._matrix.T
        negated = np.array([_NEGATED.search(folded, s, e) is not None for s, e in spans])
        scores[negated] *= self._conceal  # a prohibition can only be an order to keep quiet
        ordinary = (vectors @ self._ordinary.T).max(axis=1)
        scores[scores - ordinary[:, None] < MARGIN] = 0.0
        row, column = np.unravel_index(int(np.argmax(scores)), scores.shape)
        if float(scores[row, column]) < self._threshold:
            return None
        start, end = spans[int(row)]
        excerpt = " ".join(folded[start:end].split())[:80]
        score = float(scores[row, column])
        return SemanticHit(self._labels[int(column)], excerpt, sentence_at(folded, start, end), score)


_VECTORS: dict[str, tuple[Vectors, Vectors]] = {}
_VECTORS_LOCK = threading.Lock()


def _prototype_vectors(embed: Embed, key: str | None) -> tuple[Vectors, Vectors]:
    """The prototypes' and the ordinary orders' vectors by ``embed``; kept under ``key`` when given."""
    with _VECTORS_LOCK:
        known = _VECTORS.get(key) if key is not None else None
        if known is None:
            known = (embed([text for texts in PROTOTYPES.values() for text in texts]), embed(list(ORDINARY)))
            for vectors in known:
                vectors.setflags(write=False)  # shared by every layer under the key
            if key is not None:
                _VECTORS[key] = known
        return known


_LAYERS: dict[int, tuple[object, SemanticLayer]] = {}
_LAYERS_LOCK = threading.Lock()


def layer_for(embedder: object | None) -> SemanticLayer | None:
    """The semantic layer over ``embedder`` when it is the in-process model (it has ``embed_sync``),
    built once per embedder and shared (with its cache) by every caller; None for no embedder or a
    remote one, whose round trips the scan does not pay. The layer has the prototypes only: the
    learned head is left out (``HEAD_IN_SERVER``) until it meets the false-alarm line on dialogue."""
    embed_sync = getattr(embedder, "embed_sync", None)
    if embedder is None or not callable(embed_sync):
        return None
    with _LAYERS_LOCK:
        known = _LAYERS.get(id(embedder))
        if known is not None and known[0] is embedder:
            return known[1]
        head = load_head() if HEAD_IN_SERVER and callable(getattr(embedder, "embed_sync_sentences", None)) else None
        spans = getattr(embedder, "embed_sync_sentences", None) if head is not None else None
        key = getattr(embedder, "vectors_key", None)
        layer = SemanticLayer(
            embed_sync, embed_spans=spans, head=head, vectors_key=key if isinstance(key, str) else None
        )
        _LAYERS[id(embedder)] = (embedder, layer)
        return layer
