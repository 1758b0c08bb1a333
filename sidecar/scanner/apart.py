"""Files' flagged sections judged in a child Python process, for a pass over many files (the flag
cache's warm-up over a tier never judged: ``sidecar.retrieval.flags.FlagCache.warm``).

A pass over a whole tier in the server's own process left it megabytes larger for good: the scans'
short-lived objects (every text's words, views, matches) were made between the long-lived ones that
other work makes meanwhile (the graph's first reading, the index's first build), and the memory
pages they shared stayed in use when the scans' objects went. In a child, what a scan makes is
freed with the child. Its CPU is spent beside the event loop's, never under its GIL, at a lower
priority (nice 10), as the graph's extractor's is (``sidecar.kg.ingest``).

The child judges each text as the server would (``flagged_sections`` with the verdicts' store,
``sidecar.prompt.verdicts.VERDICTS``, its own), from the package the server runs: the same
verdicts. If the child cannot start or dies, ``judge`` answers None and the caller judges the text
itself.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sidecar.tasks import Child

if TYPE_CHECKING:
    from sidecar.scanner.scan import SectionFinding

__all__ = ["ApartJudge"]

# The child: reads texts (UTF-8 bytes, framed by a 4-byte length) on stdin, answers each with the
# pickled ("ok", its flagged sections) or ("error", message), and ends at the end of its input (the
# server closed the pipe, or died). It imports the scanner and the verdicts' store alone.
_CHILD = """
import os, pickle, struct, sys
os.nice(10)
sys.path.insert(0, sys.argv[1])
from sidecar.prompt.verdicts import VERDICTS
from sidecar.scanner.scan import flagged_sections
inp, out = sys.stdin.buffer, sys.stdout.buffer
while len(head := inp.read(4)) == 4:
    text = inp.read(struct.unpack(">I", head)[0]).decode("utf-8", errors="replace")
    try:
        answer = pickle.dumps(("ok", flagged_sections(text, VERDICTS.section)))
    except Exception as exc:
        answer = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
    out.write(struct.pack(">I", len(answer)) + answer)
    out.flush()
"""
_PYTHON = sys.executable


class ApartJudge:
    """``flagged_sections(data.decode("utf-8", errors="replace"), VERDICTS.section)`` in a child
    process, started at the first text it is given (see the module's docstring)."""

    def __init__(self) -> None:
        self._child = Child(_CHILD, python=_PYTHON, name="scan.judge")
        self.judged = 0  # texts the child answered, for tests and benches

    async def judge(self, data: bytes) -> list[SectionFinding] | None:
        """The flagged sections of the text ``data`` holds (UTF-8, undecodable bytes replaced), or
        None when the child cannot answer (the caller judges the text itself)."""
        answer = await self._child.ask(data)
        if answer is None or answer[0] != "ok":
            return None  # judged again by the caller, whose error then shows as it would have
        self.judged += 1
        found: list[SectionFinding] = answer[1]
        return found

    async def aclose(self) -> None:
        """End the child (its input closed, it exits) and wait for it."""
        await self._child.aclose()
