"""The injection scanner's answers, kept by the text they judged: one store for the memory block
(``sidecar.prompt.select``) and the search's flagged sections (``sidecar.retrieval.flags``).

A section's verdict is a pure function of its own text, the text of the section before it (its
seam is judged with it) and the semantic layer, so it is kept under a digest of those: an edited
section, or one after an edited section, is judged anew, and a section judged for a search is not
judged again for a block. The scanner's rules are imported at the first judgement, not with this
module (an idle sidecar does not hold them).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.scanner.scan import Finding
    from sidecar.scanner.sections import Section
    from sidecar.scanner.semantic import SemanticLayer

__all__ = ["VERDICTS", "Verdicts"]


class Verdicts:
    """The scanner's answers on texts it judged, by a digest of the text (and of the section before
    it, and the semantic layer), the ``limit`` most recent kept; safe across the worker threads
    blocks are built and files are scanned in."""

    def __init__(self, limit: int = 8192) -> None:
        self.limit = limit
        self.misses = 0  # texts judged, for tests and benches
        # A section's key is its digest alone when the semantic layer is off (the common case: a
        # tuple per entry costs a third more memory), else with the layer.
        self._known: OrderedDict[bytes | tuple[bytes, object], Finding | None] = OrderedDict()
        self._lock = threading.Lock()

    def section(
        self, text: str, sections: Sequence[Section], si: int, semantic: SemanticLayer | None = None
    ) -> Finding | None:
        """``section_verdict(text, sections, si, semantic=semantic)``."""
        own = sections[si]
        before = sections[si - 1] if si > 0 else None
        seam = text[before.start : before.end].encode("utf-8", "surrogatepass") if before else b""
        digest = hashlib.blake2b(digest_size=16)
        digest.update(len(seam).to_bytes(8, "big") if before else b"first")  # where one text ends
        digest.update(seam)
        digest.update(text[own.start : own.end].encode("utf-8", "surrogatepass"))

        def judge() -> Finding | None:
            from sidecar.scanner.scan import section_verdict

            return section_verdict(text, sections, si, semantic=semantic)

        return self._answer(digest.digest() if semantic is None else (digest.digest(), semantic), judge)

    def text(self, text: str) -> Finding | None:
        """``verdict(text)``."""
        # Its own personalisation: no text's key is a section's.
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16, person=b"text").digest()

        def judge() -> Finding | None:
            from sidecar.scanner.scan import verdict

            return verdict(text)

        return self._answer(digest, judge)

    def _answer(self, key: bytes | tuple[bytes, object], judge: Callable[[], Finding | None]) -> Finding | None:
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return self._known[key]
        found = judge()
        with self._lock:
            self.misses += 1
            self._known[key] = found
            while len(self._known) > self.limit:
                self._known.popitem(last=False)
        return found


#: The answers every block and every search of the process share.
VERDICTS = Verdicts()
