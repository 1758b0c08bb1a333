"""Claude Code hooks over a running sidecar: the memory block when a session starts, what memory
recalls for each prompt, and the session's transcript ingested before compaction and at its end.

Claude Code runs a hook command with the event as JSON on stdin; what a ``SessionStart`` or
``UserPromptSubmit`` hook prints goes into the model's context. ``memory-sidecar-hook`` is that
command for all four events (``examples/claude-code/settings.json`` wires them):

- ``SessionStart``: ``POST /memory/block`` (identity, pins, evergreen memory, the journal's
  essentials; the session's nudges once), printed;
- ``UserPromptSubmit``: ``POST /memory/block`` with the prompt as the query, only layer L3 and the
  journal's recall, so just what the prompt recalls (file sections above the relevance threshold,
  typed memories) is printed, and nothing for "ok";
- ``PreCompact`` and ``SessionEnd``: the transcript's user and assistant text (not tool calls,
  tool output or slash-command chatter) to ``POST /memory/ingest``, which keeps decisions,
  preferences, facts and tasks as memories and drops the rest; a turn ingested before is a
  duplicate the second time, so running both hooks keeps nothing twice.

A sidecar started with ``--api-token`` wants it on every request: the hook sends
``--api-token``, or ``MEMORY_SIDECAR_API_TOKEN`` (the variable the server reads), as
``Authorization: Bearer``.

A hook never stands in the session's way: a sidecar that cannot be reached, or that refuses (memory
off), is one line on stderr and exit status 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from sidecar.errors import SidecarError
from sidecar.loopback import Unanswered, call
from sidecar.palace.limits import MAX_TURN_CHARS, MAX_TURNS
from sidecar.settings import load_settings

__all__ = ["main", "transcript_turns"]

SESSION_BUDGET = 8000  # characters of memory at session start
RECALL_BUDGET = 2000  # characters recalled for one prompt
#: The most of a prompt sent as the recall query (the search takes 256 words and 4096 bytes).
QUERY_WORDS, QUERY_BYTES = 200, 4000
#: Text Claude Code puts in the transcript as a user turn that nobody typed.
_CHATTER = ("<command-", "<local-command-", "Caveat: The messages below were generated")


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer one hook event read from stdin; always exit 0 (a hook must not break the session)."""
    args = _parser().parse_args(argv)
    out = stdout or sys.stdout
    try:
        event = json.load(stdin or sys.stdin)
        if not isinstance(event, dict):
            raise ValueError("the hook event is not a JSON object")
        settings = load_settings({"api_token": args.api_token})
        sidecar = _Sidecar(args.url or _default_url(), settings.api_token, args.timeout)
        text = _answer(sidecar, event)
    except (ValueError, OSError, Unanswered, SidecarError, _Refused) as exc:
        print(f"memory-sidecar-hook: {exc}", file=sys.stderr)
        return 0
    if text:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memory-sidecar-hook", description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--url", help="the sidecar (default: http://127.0.0.1 at MEMORY_SIDECAR_PORT, 9119)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds a request may take")
    parser.add_argument(
        "--api-token", default=None, help="the sidecar's --api-token (default: MEMORY_SIDECAR_API_TOKEN)"
    )
    return parser


def _default_url() -> str:
    settings = load_settings({})
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://{host}:{settings.port}"


def _answer(http: _Sidecar, event: dict[str, Any]) -> str:
    """What to print for ``event``."""
    name = event.get("hook_event_name")
    session = event.get("session_id")
    who = {"session_id": session} if isinstance(session, str) and session else {}
    if name == "SessionStart":
        return str(_post(http, "/memory/block", {"budget": SESSION_BUDGET, **who})["text"])
    if name == "UserPromptSubmit":
        prompt = event.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ""
        body = {"query": _query(prompt), "layers": ["L3"], "recall": True, "budget": RECALL_BUDGET}
        return str(_post(http, "/memory/block", body)["text"])
    if name in ("PreCompact", "SessionEnd"):
        path = event.get("transcript_path")
        if not isinstance(path, str) or not path:
            raise ValueError(f"{name} without a transcript_path")
        _ingest(http, Path(path).expanduser())
        return ""
    raise ValueError(f"not a hook this command answers: {name!r}")


def _query(prompt: str) -> str:
    """The prompt as a search query: its first QUERY_WORDS words, within QUERY_BYTES of UTF-8 (a
    longer query is refused, and a long prompt's opening says what it is about)."""
    words = " ".join(prompt.split()[:QUERY_WORDS])
    return words.encode("utf-8")[:QUERY_BYTES].decode("utf-8", errors="ignore")


def _ingest(http: _Sidecar, path: Path) -> None:
    turns = list(transcript_turns(path))
    for start in range(0, len(turns), MAX_TURNS):
        _post(http, "/memory/ingest", {"turns": turns[start : start + MAX_TURNS]})


def transcript_turns(path: Path) -> Iterator[dict[str, str]]:
    """The user and assistant text of a Claude Code transcript (JSON lines), in order: tool calls,
    tool output, thinking, side chains, meta lines and slash-command chatter left out."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash: the rest still counts
            turn = _turn(entry)
            if turn is not None:
                yield turn


def _turn(entry: Any) -> dict[str, str] | None:
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    if entry.get("isMeta") or entry.get("isSidechain"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    content = message.get("content")
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(p for p in parts if isinstance(p, str))
    if not isinstance(content, str) or not content.strip() or content.lstrip().startswith(_CHATTER):
        return None
    return {"role": message["role"], "content": content.replace("\x00", "")[:MAX_TURN_CHARS]}


class _Refused(Exception):
    """The sidecar answered with an error (its code and message say why)."""


class _Sidecar:
    """Where the hook's requests go: the sidecar's address, its API token and each request's timeout."""

    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self.url, self.token, self.timeout = url, token, timeout


def _post(http: _Sidecar, path: str, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(http.url, "POST", path, body, token=http.token, timeout=http.timeout)
    if status >= 400:
        error = answer.get("error", {})
        error = error if isinstance(error, dict) else {}
        raise _Refused(f"{path} answered {status} {error.get('code')}: {error.get('message')}")
    return answer


if __name__ == "__main__":
    sys.exit(main())
