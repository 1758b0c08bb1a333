"""``memory-sidecar``: serve, or work on the memory files directly (no server needed).

memory-sidecar serve [--memory-dir DIR] [--role ...]   start the daemon
memory-sidecar search QUERY [-p DIR] [-S agent|crew] [-l N] [-F table|json]
memory-sidecar reindex [-p DIR] [-S agent|crew]       full rebuild of a tier's index
memory-sidecar status  [-p DIR] [-S agent|crew] [-F table|json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sidecar.errors import SidecarError
from sidecar.settings import Settings, add_arguments, load_settings

# Each command imports what it needs when it runs: ``serve`` has its own start-up order (see
# sidecar.server.serve), and ``search`` need not load the journal's modules (numpy among them).

if TYPE_CHECKING:
    from sidecar.index.snippet import Snippet
    from sidecar.index.tier_index import Hit

__all__ = ["build_parser", "main"]

SNIPPET_COLUMNS = 90  # a table row's snippet: a window this wide around the matched terms


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memory-sidecar", description="Memory daemon for LLM agents.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the sidecar")
    add_arguments(serve)
    for name, text in (
        ("search", "search a tier"),
        ("reindex", "rebuild a tier's index"),
        ("status", "index state"),
    ):
        cmd = sub.add_parser(name, help=text)
        if name == "search":
            cmd.add_argument("query")
            cmd.add_argument("--limit", "-l", type=int, default=10)
        cmd.add_argument("--path", "-p", type=Path, help="tier dir (default: the settings' dir for the scope)")
        cmd.add_argument("--scope", "-S", choices=("agent", "crew"), default="agent")
        cmd.add_argument("--format", "-F", choices=("table", "json"), default="table")
    health = sub.add_parser("health", help="episodic memory health (latest snapshot, or --recompute)")
    health.add_argument("--workspace-id", required=True)
    health.add_argument("--crew-id", default=None)
    health.add_argument("--recompute", action="store_true")
    health.add_argument("--memory-dir", type=Path, default=None, help="agent tier dir holding journal.sqlite")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    try:
        if args.command == "serve":
            from sidecar.server.serve import serve

            return serve(load_settings(args))
        if args.command == "health":
            from sidecar.episodic.cli import health_main

            settings = load_settings({"memory_dir": args.memory_dir})
            return health_main(settings, args.recompute, args.workspace_id, crew_id=args.crew_id, stream=out)
        return _offline(args, load_settings({}), out)
    except SidecarError as exc:
        print(f"memory-sidecar: {exc.message}", file=sys.stderr)
        return 2


def _offline(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    from sidecar.index.query import check_query
    from sidecar.index.tier_index import TierIndex

    root: Path = args.path or (settings.memory_dir if args.scope == "agent" else settings.crew_dir)
    root = root.expanduser().absolute()
    if not root.is_dir():
        print(f"memory-sidecar: no such memory dir: {root}", file=sys.stderr)
        return 2
    lock = None
    if args.command == "reindex":  # a rebuild writes the whole index: not while a sidecar serves it
        from sidecar.errors import TierLocked
        from sidecar.server.lock import TierLock

        try:
            lock = TierLock.take(root)
        except TierLocked as exc:
            print(f"memory-sidecar: {exc.message.split(';')[0]}; ask it instead: POST /memory/reindex", file=sys.stderr)
            return 2
    index = TierIndex(root, args.scope)
    index.open()
    try:
        if args.command == "search":
            _emit_hits(index.search(check_query(args.query), max(1, min(args.limit, 50))), args.scope, args.format, out)
        elif args.command == "reindex":
            index.rebuild()
            _emit_status(index.status(), args.format, out)
        else:
            _emit_status(index.status(), args.format, out)
    finally:
        index.close()
        if lock is not None:
            lock.release()
    return 0


def _emit_hits(hits: list[Hit], scope: str, fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(json.dumps({"results": [h.as_json(scope) for h in hits]}, ensure_ascii=False, indent=2) + "\n")
        return
    if not hits:
        out.write("no results\n")
        return
    bold = out.isatty()
    out.write(f"{'score':>8}  {'where':<32}  snippet\n")
    for hit in hits:
        where = f"{hit.path}:{hit.line_start}-{hit.line_end}"
        out.write(f"{hit.score:>8.3f}  {where:<32}  {_shown(hit.window(SNIPPET_COLUMNS), bold)}\n")


def _shown(snippet: Snippet, bold: bool) -> str:
    """The snippet on one line, its matched terms in bold on a terminal."""
    if not bold:
        return snippet.text
    text, at, parts = snippet.text, 0, []
    for start, end in snippet.highlights:
        parts += [text[at:start], "\x1b[1m", text[start:end], "\x1b[0m"]
        at = end
    return "".join([*parts, text[at:]])


def _emit_status(status: dict[str, Any], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(json.dumps(status, indent=2) + "\n")
        return
    for key, value in status.items():
        out.write(f"{key:<14} {value}\n")
