"""``memory-sidecar``: serve, or work on the memory files directly (no server needed).

memory-sidecar serve [--memory-dir DIR] [--role ...]   start the daemon
memory-sidecar search QUERY [-p DIR] [-S agent|crew] [-l N] [--sidecar | --local]
                                                        (default: the sidecar serving the dir, if one
                                                        answers at the configured address; else here)
memory-sidecar reindex [-p DIR] [-S agent|crew] [--embed]   full rebuild of a tier's index
                                                        (--embed: and every chunk's vector, now)
memory-sidecar status  [-p DIR] [-S agent|crew]
memory-sidecar health  --workspace-id W [--recompute]   the journal's health snapshot
memory-sidecar remember CONTENT [--type T] [--priority 1-10] [--tag T]... [--topic-key K] [--ttl S | --expires-at ISO]
memory-sidecar recall QUERY [--k N] [--type T]... [--tag T]... [--scoring S] [--explain]
memory-sidecar forget (--id ID | --topic-key K)
memory-sidecar decay [--limit N]    live memories by retention, weakest first
memory-sidecar store migrate --from sqlite:DIR --to postgres://...   a crew tier into a PostgreSQL store
memory-sidecar palace list|taxonomy|delete|identity|diary|ingest|settings ...   the memory palace
(the journal commands take [--namespace NS] [--memory-dir DIR]; they work on the agent's own memories)

One output convention for every command but ``serve`` and ``mcp`` (which speak protocols): text for
a person by default, the API's JSON answer with ``--json`` (``-F json`` is the same). An error is
one line on stderr, ``memory-sidecar: <message> (<code>)``, with the API's error body on stdout
too under ``--json``; the exit status is 2 for a mistake in the request (the API's 4xx), 1 for a
failure (the API's 5xx, the machine's refusal) or nothing found where the command says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from sidecar import __version__
from sidecar.errors import ConfigError, SidecarError
from sidecar.settings import Settings, add_arguments, load_settings

# Each command imports what it needs when it runs: ``serve`` has its own start-up order (see
# sidecar.server.serve), and ``search`` need not load the journal's modules (numpy among them).

if TYPE_CHECKING:
    from aiohttp import web

    from sidecar.index.snippet import Snippet
    from sidecar.index.tier_index import TierIndex
    from sidecar.retrieval.embed import Embedder, Vectors
    from sidecar.retrieval.embed.progress import Progress
    from sidecar.retrieval.vectors import PendingChunk, VectorIndex

__all__ = ["build_parser", "main"]

SNIPPET_COLUMNS = 90  # a table row's snippet: a window this wide around the matched terms
EMBED_CALL = 16  # chunks per in-process embedding call of ``reindex --embed``: a progress step
BAR_WIDTH = 30
BAR_EVERY_S = 0.25  # a terminal's bar is redrawn at most this often
LINE_EVERY_S = 10.0  # without a terminal: a plain progress line this often


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser. ``command``: the word the arguments start with, when known; only
    that command's arguments are then built (the graph's steps, for ``kg``, are their request
    schemas, and asyncio with them: about 35 ms of a command's start; every setting as an option,
    for ``serve`` and ``mcp``, a third of the parser's build; the other commands together some 10
    ms more); the other commands are bare names, as ``--help`` lists them."""
    parser = argparse.ArgumentParser(prog="memory-sidecar", description="Memory daemon for LLM agents.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def bare(name: str) -> bool:
        """Whether ``name`` is a bare name in this parser (added as one when it is)."""
        if command is None or command == name:
            return False
        sub.add_parser(name, help=COMMAND_HELP[name])
        return True

    sub.add_parser("serve", help=COMMAND_HELP["serve"])
    for name in ("search", "reindex", "status"):
        if bare(name):
            continue
        cmd = sub.add_parser(name, help=COMMAND_HELP[name])
        if name == "search":
            cmd.add_argument("query")
            cmd.add_argument("--limit", "-l", type=int, default=10)
            via = cmd.add_mutually_exclusive_group()
            via.add_argument(
                "--sidecar",
                dest="via",
                action="store_const",
                const="sidecar",
                help="ask the sidecar at the configured address (--host/--port settings), which must serve the dir",
            )
            via.add_argument(
                "--local", dest="via", action="store_const", const="local", help="search the dir in this process"
            )
        if name == "reindex":
            cmd.add_argument(
                "--embed", action="store_true", help="then embed every chunk lacking a vector, using every core"
            )
        cmd.add_argument("--path", "-p", type=Path, help="tier dir (default: the settings' dir for the scope)")
        cmd.add_argument("--scope", "-S", choices=("agent", "crew"), default="agent")
    if not bare("health"):
        health = sub.add_parser("health", help=COMMAND_HELP["health"])
        health.add_argument("--workspace-id", required=True)
        health.add_argument("--crew-id", default=None)
        health.add_argument("--recompute", action="store_true")
        health.add_argument("--memory-dir", type=Path, default=None, help="agent tier dir holding journal.sqlite")
    _add_memory_commands(sub, bare)
    if not bare("kg"):
        from sidecar.kg.cli import add_kg_commands

        add_kg_commands(sub)
    if not bare("consolidate"):
        _add_consolidate_command(sub)
    if not bare("store"):
        _add_store_command(sub)
    mcp = sub.add_parser("mcp", help=COMMAND_HELP["mcp"])
    mcp.add_argument("--url", help="a running sidecar to forward to, e.g. http://127.0.0.1:9119 (default: in process)")
    for name in ("serve", "mcp"):
        if command in (None, name):
            add_arguments(sub.choices[name])
    if not bare("palace"):
        _add_palace_commands(sub)
    for name, cmd in sub.choices.items():
        if name not in ("serve", "mcp") and command in (None, name):
            _add_output_flags(cmd)
    return parser


#: The agent's own settings files in its memory dir (``sidecar.palace.agent_settings.FILES``).
AGENT_SETTINGS_FILES = ("memory.toml", "settings.md")

#: Each command's line in ``memory-sidecar --help``.
COMMAND_HELP = {
    "serve": "run the sidecar",
    "search": "search a tier",
    "reindex": "rebuild a tier's index",
    "status": "index state",
    "health": "episodic memory health (latest snapshot, or --recompute)",
    "remember": "store one of the agent's own typed memories",
    "recall": "recall the agent's own typed memories for a query",
    "forget": "forget one of the agent's own memories",
    "decay": "live typed memories by retention, weakest first",
    "kg": "the knowledge graph: read memory into it, ask it, add to it",
    "consolidate": "roll old daily notes up into weekly summaries",
    "store": "the crew store (where a crew's shared tier lives)",
    "mcp": "MCP over stdio: the memory tools in this process over --memory-dir, or forwarded to a running "
    "sidecar with --url",
    "palace": "the memory palace: wings and rooms, delete, identity, diary, ingest",
}


def _add_consolidate_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    consolidate = sub.add_parser("consolidate", help=COMMAND_HELP["consolidate"])
    steps = consolidate.add_subparsers(dest="step", required=True)
    run = steps.add_parser(
        "run",
        help="consolidate now (not while a sidecar serves the dir: POST /memory/consolidate there)",
        description="Old daily notes become weekly summaries in daily/summaries/, facts seen on three days "
        "are promoted to AGENT.md (CREW.md with --crew), and the notes move to archive/daily/. Prints the "
        "report, which lists everything left out.",
    )
    run.add_argument("--crew", action="store_true", help="the crew tier (its lead's job)")
    run.add_argument("--since", metavar="YYYY-MM-DD", help="leave older notes alone")
    run.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    run.add_argument("--memory-dir", type=Path, default=None, help="agent tier dir")
    run.add_argument("--crew-dir", type=Path, default=None, help="crew tier dir")


def _add_store_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = sub.add_parser("store", help=COMMAND_HELP["store"])
    store_steps = store.add_subparsers(dest="step", required=True)
    migrate = store_steps.add_parser(
        "migrate",
        help="copy a crew tier into a PostgreSQL crew store (resumable)",
        description="Copies the crew dir's index (its chunks and one model's stored vectors) into the store, "
        "a batch of files per transaction, and leaves the store equal to it. Files the store already holds "
        "unchanged are skipped, so a killed run is resumed by running it again. Progress goes to stderr, the "
        "report to stdout (--json: as JSON).",
    )
    migrate.add_argument("--from", dest="source", required=True, metavar="sqlite:DIR", help="the crew tier dir")
    migrate.add_argument("--to", dest="target", required=True, metavar="postgres://...", help="the store's URL")
    migrate.add_argument("--crew-id", default=None, help="the crew's id in the store (default: the crew_id setting)")
    migrate.add_argument("--model", default=None, help="whose vectors to copy (default: the most stored model)")


JSON_HELP = "print the API's answer as JSON (an error's body too, on stdout as well as stderr)"


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    """``--json`` (and its older spelling ``-F/--format json``) on a command and on every step of it."""
    steps = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if steps:
        for step in steps[0].choices.values():
            _add_output_flags(step)
        return
    parser.add_argument("--json", dest="format", action="store_const", const="json", help=JSON_HELP)
    parser.add_argument("--format", "-F", dest="format", choices=("text", "table", "json"), help=argparse.SUPPRESS)


def _add_palace_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``palace ...``: the palace's operations on the files and the journal, with no server (under the
    tier's lock, as a sidecar would take it), each the same operation as its HTTP route."""
    palace = sub.add_parser("palace", help=COMMAND_HELP["palace"])
    steps = palace.add_subparsers(dest="step", required=True)
    listing = steps.add_parser("list", help="memory files with wing, room, bytes, chunks, last change")
    listing.add_argument("--wing")
    listing.add_argument("--room")
    steps.add_parser("taxonomy", help="wings and rooms with their counts")
    delete = steps.add_parser("delete", help="delete a file, or one heading section of it (durable, journaled)")
    delete.add_argument("path")
    delete.add_argument("--heading", help="only this heading section (heading path or its last part)")
    delete.add_argument("--tier", choices=("agent", "crew"), default=None)
    identity = steps.add_parser("identity", help="set the identity (L0), at most 2,000 characters")
    identity.add_argument("identity")
    diary = steps.add_parser("diary", help="write or read the agent's diary")
    diary_steps = diary.add_subparsers(dest="diary_step", required=True)
    diary_write = diary_steps.add_parser("write", help="append an entry to today's daily note")
    diary_write.add_argument("content")
    diary_read = diary_steps.add_parser("read", help="the newest entries, newest first")
    diary_read.add_argument("--limit", type=int, default=None)
    for cmd in (diary_write, diary_read):
        cmd.add_argument("--agent-id", default=None)
    ingest = steps.add_parser("ingest", help="keep what a conversation says worth keeping (JSON lines of turns)")
    ingest.add_argument("file", type=Path, help='one {"role", "content"} object a line; - for stdin')
    ingest.add_argument("--dry-run", action="store_true", help="report what would be kept, keep nothing")
    steps.add_parser("settings", help="the per-agent settings file: its values and problems")
    for cmd in (*(c for c in steps.choices.values() if c is not diary), diary_write, diary_read):
        cmd.add_argument("--memory-dir", type=Path, default=None, help="agent tier dir")


MEMORY_TYPES_HELP = "fact, decision, preference, todo, error, context, workflow or meeting_ledger"
OWN_ONLY = (
    "It works on the agent's own memories in its journal (journal.sqlite in the memory dir) with no"
    " server; the crew's memories are reached through a running sidecar (scope crew). Text by default,"
    " the API's JSON with --json; an error is one line on stderr, exit status 2."
)


def _add_memory_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser], bare: Callable[[str], bool]) -> None:
    """``remember``, ``recall``, ``forget`` and ``decay``: the agent's typed memories, offline
    (those ``bare`` makes bare names are left there)."""
    built: list[argparse.ArgumentParser] = []
    if not bare("remember"):
        built.append(_remember_parser(sub))
    if not bare("recall"):
        built.append(_recall_parser(sub))
    if not bare("forget"):
        built.append(_forget_parser(sub))
    if not bare("decay"):
        built.append(_decay_parser(sub))
    for cmd in built:
        cmd.add_argument("--namespace", metavar="NS", help="(default: the namespace setting)")
        cmd.add_argument("--memory-dir", type=Path, default=None, help="agent tier dir holding journal.sqlite")


def _remember_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    remember = sub.add_parser(
        "remember",
        help=COMMAND_HELP["remember"],
        description="Store a typed memory, as POST /memory/remember does. " + OWN_ONLY,
    )
    remember.add_argument("content")
    remember.add_argument("--type", dest="memory_type", metavar="TYPE", help=f"{MEMORY_TYPES_HELP} (default fact)")
    remember.add_argument("--priority", metavar="1-10", help="how much it matters, 1 to 10 (default 5)")
    remember.add_argument("--tag", dest="tags", action="append", metavar="TAG", help="a tag (repeat for more)")
    remember.add_argument(
        "--topic-key", metavar="KEY", help="one live memory per key: a newer one supersedes it (kept as history)"
    )
    expiry = remember.add_mutually_exclusive_group()
    expiry.add_argument("--ttl", dest="ttl_seconds", metavar="SECONDS", help="forget it after this many seconds")
    expiry.add_argument("--expires-at", metavar="ISO", help="forget it at this time (ISO 8601)")
    remember.add_argument(
        "--embedder",
        choices=_choices("embedder"),
        help="embeds the memory now (none: BM25 alone finds it until a sidecar embeds it); default: the embedder setting",
    )
    return remember


def _recall_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    recall = sub.add_parser(
        "recall",
        help=COMMAND_HELP["recall"],
        description="Recall memories, as POST /memory/recall does: with the configured embedder when there"
        " is one, BM25 alone otherwise (the answer's dense says which). " + OWN_ONLY,
    )
    recall.add_argument("query")
    recall.add_argument("--k", metavar="N", help="how many memories at most (default 5)")
    recall.add_argument("--type", dest="memory_types", action="append", metavar="TYPE", help=MEMORY_TYPES_HELP)
    recall.add_argument("--tag", dest="tags", action="append", metavar="TAG", help="only memories with this tag")
    recall.add_argument("--scoring", choices=_choices("recall_scoring"), help="(default: the recall_scoring setting)")
    recall.add_argument("--explain", action="store_true", help="show what each score is made of")
    recall.add_argument(
        "--embedder",
        choices=_choices("embedder"),
        help="embeds the query (none: BM25 only); default: the embedder setting",
    )
    return recall


def _forget_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    forget = sub.add_parser(
        "forget",
        help=COMMAND_HELP["forget"],
        description="Archive a memory by id, or a topic key's memory with its history, as POST"
        " /memory/forget does; exit 1 when nothing matched. " + OWN_ONLY,
    )
    target = forget.add_mutually_exclusive_group(required=True)
    target.add_argument("--id", dest="id", metavar="ID")
    target.add_argument("--topic-key", metavar="KEY")
    return forget


def _decay_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    decay = sub.add_parser(
        "decay",
        help=COMMAND_HELP["decay"],
        description="How far each live typed memory has faded: retention (exp(-days since last recalled"
        " or written / stability)), frequency of recall, importance, age and expiry, weakest first. " + OWN_ONLY,
    )
    decay.add_argument("--limit", metavar="N", help="how many memories at most (default 20)")
    return decay


def _choices(setting: str) -> tuple[str, ...]:
    """A setting's choices, as the settings declare them."""
    import dataclasses

    found = next(f for f in dataclasses.fields(Settings) if f.name == setting)
    choices: tuple[str, ...] = found.metadata["choices"]
    return choices


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    # structlog imports rich when it is installed (rich brings pygments: 4 MB of the server's
    # memory, and about a tenth of a second of a command's start) for tracebacks no command renders:
    # format_exc_info makes them text first. A None in sys.modules makes that import fail as if
    # rich were absent.
    sys.modules.setdefault("rich", None)  # type: ignore[arg-type]
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(words[0] if words and not words[0].startswith("-") else None).parse_args(words)
    as_json = getattr(args, "format", None) == "json"
    try:
        if args.command == "serve":
            from sidecar.server.serve import serve

            return serve(load_settings(args))
        if args.command not in ("mcp", "store"):  # the server applies the rule to each MCP tool itself
            _refuse_when_memory_off(args)
        if args.command == "health":
            from sidecar.episodic.cli import health_main

            settings = load_settings({"memory_dir": args.memory_dir})
            return _answered(
                lambda to: health_main(settings, args.recompute, args.workspace_id, crew_id=args.crew_id, stream=to),
                as_json,
                out,
                err,
            )
        if args.command in MEMORY_COMMANDS:
            return _memory(args, as_json, out, err)
        if args.command == "consolidate":
            return _consolidate(args, out, err)
        if args.command == "kg":
            from sidecar.kg.cli import kg_main

            step = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "format"})  # not a field
            return _answered(lambda to: kg_main(step, to), as_json, out, err)
        if args.command == "store":
            return _store_migrate(args, as_json, out, err)
        if args.command == "palace":
            return _palace(args, out, err)
        if args.command == "mcp":
            from sidecar.mcp.stdio import main as mcp_main

            return mcp_main(load_settings(args), args.url, _create_app, _tiers_free)
        return _offline(args, load_settings({}), out, err)
    except SidecarError as exc:  # settings that cannot be used are the asker's mistake too
        mistake = exc.status < 500 or isinstance(exc, ConfigError)
        return _refused(exc.body(), 2 if mistake else 1, as_json, out, err)
    except OSError as exc:  # the machine's refusal (a full disk, a read-only mount): said, not a traceback
        where = f": {exc.filename}" if exc.filename else ""
        message = f"{exc.strerror or exc}{where}; nothing more was done"
        return _refused({"error": {"code": "os_error", "message": message}}, 1, as_json, out, err)


def _create_app(settings: Settings) -> web.Application:
    """``sidecar.server.app.create_app``, imported when an MCP server over stdio serves a memory dir
    itself (one that forwards to a running sidecar, or is refused, never loads the application)."""
    from sidecar.server.app import create_app

    return create_app(settings)


def _tiers_free(settings: Settings) -> None:
    """``TierLocked`` if another process holds a tier dir these settings would serve; each lock is
    let go again at once (the application takes them for good when it starts)."""
    from sidecar.server.lock import lock_tiers

    for lock in lock_tiers(settings.held_tiers.values()):
        lock.release()


def _refused(body: dict[str, Any], status: int, as_json: bool, out: TextIO, err: TextIO) -> int:
    """An error: one line on ``err`` (and the API's error body on ``out`` with --json)."""
    error = body["error"]
    print(f"memory-sidecar: {error.get('message')} ({error.get('code')})", file=err)
    if as_json:
        out.write(json.dumps(body, ensure_ascii=False) + "\n")
    return status


def _answered(run: Callable[[TextIO], int], as_json: bool, out: TextIO, err: TextIO) -> int:
    """Run a command that prints the API's JSON answer (or its error body) on the stream it is
    given, and print that answer by the convention: text, or JSON with --json; an error by
    ``_refused`` with the command's own exit status."""
    import io

    captured = io.StringIO()
    status = run(captured)
    printed = captured.getvalue()
    try:
        answer = json.loads(printed)
    except ValueError:  # the command printed its own text
        out.write(printed)
        return status
    if isinstance(answer, dict) and set(answer) == {"error"}:
        return _refused(answer, status or 2, as_json, out, err)
    out.write(json.dumps(answer, indent=2, ensure_ascii=False) + "\n" if as_json else human(answer))
    return status


def human(answer: Any) -> str:
    """An answer as text for a person: one ``key: value`` line per field, nested fields indented,
    a list of records one line each; never a Python repr."""
    lines: list[str] = []
    _lines(answer, 0, lines)
    return "\n".join(lines) + "\n" if lines else "(empty)\n"


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def _record(value: dict[str, Any]) -> str:
    """A record on one line: its scalar fields, ``key=value``."""
    parts = []
    for key, item in value.items():
        if isinstance(item, dict | list):
            shown = ", ".join(_scalar(v) for v in item) if isinstance(item, list) else _record(item)
            parts.append(f"{key}=[{shown}]")
        else:
            parts.append(f"{key}={_scalar(item)}")
    return "  ".join(parts)


def _lines(value: Any, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict) and item:
                lines.append(f"{pad}{key}:")
                _lines(item, depth + 1, lines)
            elif isinstance(item, list) and any(isinstance(v, dict | list) for v in item):
                lines.append(f"{pad}{key}: {len(item)}")
                lines.extend(f"{pad}  - {_record(v) if isinstance(v, dict) else _scalar(v)}" for v in item)
            elif isinstance(item, list):
                lines.append(f"{pad}{key}: {', '.join(_scalar(v) for v in item) or '-'}")
            else:
                lines.append(f"{pad}{key}: {_scalar(item) if item != {} else '-'}")
    elif isinstance(value, list):
        lines.extend(f"{pad}- {_record(v) if isinstance(v, dict) else _scalar(v)}" for v in value)
    else:
        lines.append(f"{pad}{_scalar(value)}")


MEMORY_COMMANDS = ("remember", "recall", "forget", "decay")


#: The registry's operation each command runs (``sidecar.ops.registry``), by command or
#: (command, step): memory off is refused for it by the same rule, in the same words, as over HTTP.
OPERATION_OF: dict[str | tuple[str, str], str] = {
    "search": "search",
    "reindex": "reindex",
    "status": "reindex",  # the server's status reads its live index; here opening it brings it level
    "health": "health",
    "remember": "remember",
    "recall": "recall",
    "forget": "forget",
    "decay": "memories",
    "consolidate": "consolidate",
    ("kg", "read"): "kg_add",
    ("palace", "list"): "list",
    ("palace", "taxonomy"): "taxonomy",
    ("palace", "delete"): "delete",
    ("palace", "identity"): "identity",
    ("palace", "ingest"): "ingest",
    ("palace", "settings"): "agent_settings",
}


def _operation(args: argparse.Namespace) -> str:
    step = getattr(args, "step", None)
    if args.command == "kg" and step != "read":
        return f"kg_{step}"
    if args.command == "palace" and step == "diary":
        return "diary_write" if args.diary_step == "write" else "diary_read"
    command = str(args.command)
    return OPERATION_OF.get((command, step or ""), OPERATION_OF.get(command, command))


def _refuse_when_memory_off(args: argparse.Namespace) -> None:
    """With memory off (the environment, or the agent's own memory.toml / settings.md), a command
    on memory is refused by the registry's rule, as the server refuses the route: 403 memory_disabled.
    The rule admits every operation while memory is on, so the registry (and the request schemas it
    imports, the journal's among them) is loaded only when memory is off; the settings file's
    reader (and tomllib) only when the dir holds one of its names."""
    given = getattr(args, "memory_dir", None) or getattr(args, "path", None)
    settings = load_settings({"memory_dir": given} if given is not None else {})
    enabled = settings.memory_enabled
    if any(os.path.lexists(settings.memory_dir / name) for name in AGENT_SETTINGS_FILES):
        from sidecar.palace.agent_settings import apply, load_agent_settings

        enabled = apply(settings, load_agent_settings(settings.memory_dir)).memory_enabled
    if enabled:
        return
    from sidecar.ops.registry import OPERATIONS, admit

    operation = next(op for op in OPERATIONS if op.name == _operation(args))
    admit(operation, memory_enabled=enabled)


def _memory(args: argparse.Namespace, as_json: bool, out: TextIO, err: TextIO) -> int:
    """A journal command: the flags become the JSON body the HTTP route takes, so the request is
    checked by the same code and a bad value gets the same error."""
    settings = load_settings({"memory_dir": args.memory_dir, "embedder": getattr(args, "embedder", None)})
    from sidecar.episodic import cli as journal

    given = {k: v for k, v in vars(args).items() if v is not None and v is not False}
    fmt = "json" if as_json else "text"
    if args.command == "decay":
        limit = _number(args.limit)
        return _answered(
            lambda to: journal.decay_main(settings, limit=limit, namespace=args.namespace, fmt=fmt, stream=to),
            as_json,
            out,
            err,
        )
    if args.command == "forget":
        target = _body(given, "id", "topic_key", "namespace")
        return _answered(lambda to: journal.forget_main(settings, target, stream=to), as_json, out, err)
    if args.command == "recall":
        body = _body(given, "query", "k", "memory_types", "tags", "scoring", "explain", "namespace")
        if "k" in body:
            body["k"] = _number(body["k"])
        return _answered(lambda to: journal.recall_main(settings, body, fmt=fmt, stream=to, err=err), as_json, out, err)
    body = _body(given, "content", "memory_type", "priority", "tags", "topic_key", "ttl_seconds", "expires_at")
    body.update(_body(given, "namespace"))
    for name in ("priority", "ttl_seconds"):
        if name in body:
            body[name] = _number(body[name], real=name == "ttl_seconds")
    return _answered(lambda to: journal.remember_main(settings, body, stream=to, err=err), as_json, out, err)


def _consolidate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``consolidate run``: under the tier's lock, so never beside a sidecar serving the dir."""
    import asyncio
    from datetime import date

    from sidecar.consolidate.runner import run_with_journal
    from sidecar.errors import TierLocked
    from sidecar.server.lock import TierLock

    settings = load_settings({"memory_dir": args.memory_dir, "crew_dir": args.crew_dir})
    tier = "crew" if args.crew else "agent"
    root = settings.crew_dir if args.crew else settings.memory_dir
    if not root.is_dir():
        raise _mistake(f"no such memory dir: {root}", "tier_missing")
    try:
        since = None if args.since is None else date.fromisoformat(args.since)
    except ValueError:
        raise _mistake(f"--since must be a date, YYYY-MM-DD; got {args.since!r}", "invalid_since") from None
    try:
        lock = TierLock.take(root)
    except TierLocked as exc:
        raise _mistake(f"{exc.message.split(';')[0]}; ask it instead: POST /memory/consolidate", exc.code) from None
    from sidecar.logs import configure_logging

    configure_logging(settings.log_format, "warning")  # on stderr: stdout is the report
    bar = _StepBar(err)

    try:  # the route's job, with the journal when the dir has one (never created here)
        report = asyncio.run(run_with_journal(settings, tier, since=since, dry_run=args.dry_run, progress=bar))
    finally:
        lock.release()
        err.flush()
    out.write((json.dumps(report.to_json(), indent=2) if args.format == "json" else report.to_text()) + "\n")
    return 0


def _mistake(message: str, code: str) -> SidecarError:
    """A mistake in what the command was asked (exit status 2), by the one error path."""
    from sidecar.errors import BadRequest

    return BadRequest(message, code=code)


def _palace(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """A palace command: the sidecar's application started in this process (no port: tiers, queue,
    journal, write service, under the tier's lock), the tool's operation, then a clean shutdown."""
    import asyncio

    settings = load_settings({"memory_dir": args.memory_dir}).with_changes(
        watch=False, embedder="none", reconcile_interval=0.0, crew_reindex_interval=0.0, consolidate_interval=0.0
    )
    if not settings.memory_dir.is_dir():
        raise _mistake(f"no such memory dir: {settings.memory_dir}", "tier_missing")
    name, body = _palace_request(args)
    from sidecar.logs import configure_logging

    configure_logging(settings.log_format, "warning")  # on stderr: stdout is the answer
    answer, text = asyncio.run(_palace_run(settings, name, body))
    out.write((json.dumps(answer, indent=2) if args.format == "json" else text) + "\n")
    return 0


def _palace_request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """(operation, request body) for a palace command: the body its HTTP route would get."""
    step = args.step
    if step == "list":
        return "memory.list", {k: v for k, v in (("wing", args.wing), ("room", args.room)) if v is not None}
    if step == "delete":
        body = {"path": args.path, "heading": args.heading, "tier": args.tier}
        return "memory.delete", {k: v for k, v in body.items() if v is not None}
    if step == "identity":
        return "memory.set_identity", {"identity": args.identity}
    if step == "diary":
        body = {"agent_id": args.agent_id}
        body |= {"content": args.content} if args.diary_step == "write" else {"limit": args.limit}
        name = "memory.diary_write" if args.diary_step == "write" else "memory.diary_read"
        return name, {k: v for k, v in body.items() if v is not None}
    if step == "ingest":
        raw = sys.stdin.read() if str(args.file) == "-" else args.file.read_text(encoding="utf-8")
        try:
            turns = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except ValueError as exc:
            from sidecar.errors import BadRequest

            raise BadRequest(f"{args.file}: not JSON lines ({exc})", code="invalid_turns") from None
        return "memory.ingest", {"turns": turns, "dry_run": args.dry_run}
    return f"memory.{step}", {}


async def _palace_run(settings: Settings, name: str, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    from aiohttp import web

    from sidecar.server.app import create_app

    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()  # runs every cleanup_ctx's start: the app is whole, with no port open
    try:
        if name == "memory.settings":
            from sidecar.http.state import SIDECAR

            found = app[SIDECAR].agent_settings.to_json()
            lines = [f"{found['path'] or '(no settings file)'}: {found['values']}", *found["errors"]]
            return found, "\n".join(lines)
        from sidecar.mcp.palace_tools import palace_tool

        answer, text = await palace_tool(name)(app, body)
        return dict(answer), text
    finally:
        await runner.cleanup()


def _body(given: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: given[name] for name in names if name in given}


def _number(raw: str | None, *, real: bool = False) -> int | float | str | None:
    """A flag's number; what does not read as one is passed on as given, for the request's own
    check to refuse with its message."""
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    if real:
        try:
            return float(raw)
        except ValueError:
            pass
    return raw


def _store_migrate(args: argparse.Namespace, as_json: bool, out: TextIO, err: TextIO) -> int:
    """``store migrate``: the crew dir's index brought up to date first (under the dir's lock; a
    sidecar serving the dir keeps it current itself), then copied into the store."""
    import asyncio

    from sidecar.store.base import StoreUnavailable
    from sidecar.store.migrate import MigrateReport, migrate_crew

    settings = load_settings({"crew_id": args.crew_id, "crew_store": args.target})
    if not args.source.startswith("sqlite:"):
        raise _mistake("--from must be sqlite:DIR (a crew tier dir)", "invalid_from")
    root = Path(args.source.removeprefix("sqlite:")).expanduser().absolute()
    if not root.is_dir():
        raise _mistake(f"no such memory dir: {root}", "tier_missing")
    _index_current(root, err)

    def show(report: MigrateReport) -> None:
        print(
            f"store migrate: {report.copied}/{report.files - report.skipped} files ({report.skipped} already in the "
            f"store), {report.chunks} chunks, {report.vectors} vectors, {report.seconds:.1f} s",
            file=err,
            flush=True,
        )

    try:
        report = asyncio.run(migrate_crew(root, settings.crew_store, settings.crew_id, model=args.model, progress=show))
    except StoreUnavailable as exc:
        body = {"error": {"code": "store_unavailable", "message": f"the store cannot be reached: {exc}"}}
        return _refused(body, 1, as_json, out, err)
    out.write(json.dumps(report.as_json()) + "\n" if as_json else human(report.as_json()))
    return 0


def _index_current(root: Path, err: TextIO) -> None:
    """Bring the tier index at ``root`` level with its files, unless a sidecar serves the dir."""
    from sidecar.errors import TierLocked
    from sidecar.index.tier_index import TierIndex
    from sidecar.server.lock import TierLock

    try:
        lock = TierLock.take(root)
    except TierLocked:
        print("memory-sidecar: a sidecar serves the dir; its index is copied as it stands", file=err)
        return
    try:
        index = TierIndex(root, "crew")
        index.open()
        try:
            index.reconcile(lambda: False)
        finally:
            index.close()
    finally:
        lock.release()


def _offline(args: argparse.Namespace, settings: Settings, out: TextIO, err: TextIO) -> int:
    root: Path = args.path or (settings.memory_dir if args.scope == "agent" else settings.crew_dir)
    root = root.expanduser().absolute()
    if not root.is_dir():
        raise _mistake(f"no such memory dir: {root}", "tier_missing")
    lock = None
    if args.command == "reindex":  # a rebuild writes the whole index: not while a sidecar serves it
        from sidecar.errors import TierLocked
        from sidecar.server.lock import TierLock

        try:
            lock = TierLock.take(root)
        except TierLocked as exc:
            raise _mistake(f"{exc.message.split(';')[0]}; ask it instead: POST /memory/reindex", exc.code) from None
    if args.command == "search":
        return _search(args, root, settings, out, err)
    embedder = None
    try:
        if args.command == "reindex" and args.embed:
            embedder = _embedder(settings)
        return _on_index(args, root, embedder, out, err)
    finally:
        if lock is not None:
            lock.release()


def _on_index(args: argparse.Namespace, root: Path, embedder: Embedder | None, out: TextIO, err: TextIO) -> int:
    from sidecar.index.tier_index import TierIndex

    index = TierIndex(root, args.scope)
    index.open()
    try:
        if args.command == "reindex":
            index.rebuild()
        embedded: dict[str, Any] = {}
        if embedder is not None:
            code, embedded = _embed_all(embedder, index, err)
            if code:
                return code
        _emit_status({**index.status(), **({"embedder": embedded} if embedded else {})}, args.format, out)
        return 0
    finally:
        index.close()


def _embedder(settings: Settings) -> Embedder:
    """The configured embedder (as the server would build it); a mistake saying why there is none."""
    from sidecar.heap import tune_malloc
    from sidecar.retrieval.embed import make_embedder

    tune_malloc()  # as the server does, before any thread: with a malloc arena per thread, 360 MB peak, not 300
    embedder = make_embedder(settings)
    if embedder is None:
        why = (
            "MEMORY_SIDECAR_EMBEDDER is none"
            if settings.embedder == "none"
            else "the in-process model is not installed: pip install 'memory-sidecar[embed]'"
        )
        raise _mistake(f"reindex --embed needs an embedder, and {why}", "no_embedder")
    return embedder


def _embed_all(embedder: Embedder, index: TierIndex, err: TextIO) -> tuple[int, dict[str, Any]]:
    """Embed every chunk of ``index`` lacking a vector, now, with a progress bar on ``err``; return the
    exit status and the embedder's part of the status."""
    import asyncio

    from sidecar.retrieval.embed import EmbedderError
    from sidecar.retrieval.vectors import VectorIndex

    vectors = VectorIndex(index.path, embedder.model_id, embedder.dim)
    try:
        try:
            asyncio.run(_drain(embedder, index, vectors, err))
        except EmbedderError as exc:
            print(f"memory-sidecar: embedding stopped, {vectors.backlog} chunks left: {exc}", file=err)
            return 1, {}
        except KeyboardInterrupt:
            print(f"memory-sidecar: interrupted; the vectors stored are kept, {vectors.backlog} chunks left", file=err)
            return 130, {}
        return 0, {"model": embedder.model_id, "vectors": vectors.size, "backlog": vectors.backlog}
    finally:
        vectors.close()


async def _drain(embedder: Embedder, index: TierIndex, vectors: VectorIndex, err: TextIO) -> None:
    """The whole backlog in the foreground: in process, one call per core at once (each run on one
    core, which scales better than a run split across cores); a remote embedder, one at a time."""
    import asyncio
    import functools
    from concurrent.futures import ThreadPoolExecutor

    from sidecar.retrieval.batcher import REMOTE_BATCH
    from sidecar.retrieval.embed import EmbedderError, OnnxEmbedder
    from sidecar.retrieval.embed.progress import Progress
    from sidecar.retrieval.vectors import VectorIndex

    in_process = isinstance(embedder, OnnxEmbedder)
    calls = (os.cpu_count() or 1) if in_process else 1
    pool = ThreadPoolExecutor(calls, thread_name_prefix="embed")
    slots = asyncio.Semaphore(calls)
    bar = _Bar(err, Progress())

    async def one(part: list[PendingChunk]) -> None:
        texts, sentences = [p.text for p in part], {}
        async with slots:
            if isinstance(embedder, OnnxEmbedder):  # sentence vectors too, as the server stores them
                spans = [p.sentences for p in part]
                run = functools.partial(embedder.embed_sync_sentences, texts, spans)
                matrix, parts = await asyncio.get_running_loop().run_in_executor(pool, run)
                sentences = {p.hash: rows for p, rows in zip(part, parts, strict=True) if len(rows)}
            else:
                matrix = await embedder.embed(texts)
        items = [(p.hash, row) for p, row in zip(part, matrix, strict=True)]
        bar.add(_store(index, vectors, embedder.model_id, items, sentences))

    batch = EMBED_CALL if in_process else REMOTE_BATCH
    try:
        vectors.refresh()
        while pending := vectors.missing(batch * calls * 4):
            bar.remaining, before = vectors.backlog, bar.progress.done
            await asyncio.gather(*(one(pending[i : i + batch]) for i in range(0, len(pending), batch)))
            if bar.progress.done == before:
                raise EmbedderError(f"no progress: {len(pending)} chunks embedded, none stored")
            vectors.refresh()
    finally:
        pool.shutdown(cancel_futures=True)
        await embedder.aclose()
        vectors.refresh()
        bar.finish(vectors.backlog)
    VectorIndex.prune(index.writer)  # vectors of chunks gone since; other models' stay (a server may use one)


def _store(
    index: TierIndex,
    vectors: VectorIndex,
    model: str,
    items: list[tuple[str, Vectors]],
    sentences: dict[str, Vectors],
) -> int:
    """Store ``items`` (and sentence vectors) through the index's writer; the first answer of a
    remote embedder sets the width."""
    from sidecar.retrieval.vectors import VectorIndex

    dim = int(items[0][1].shape[0]) if items else vectors.dim
    if (vectors.model, vectors.dim) != (model, dim):
        vectors.set_model(model, dim)
    return VectorIndex.store(index.writer, model, dim, items, sentences)


class _Bar:
    """Progress on stderr: a bar redrawn in place on a terminal, else a plain line now and then."""

    def __init__(self, err: TextIO, progress: Progress) -> None:
        self.err = err
        self.progress = progress
        self.remaining = 0  # as of the last refresh, less what was stored since
        self.tty = err.isatty()
        self._shown = 0.0

    def add(self, stored: int) -> None:
        self.progress.add(stored)
        self.remaining = max(self.remaining - stored, 0)
        now = time.monotonic()
        if now - self._shown >= (BAR_EVERY_S if self.tty else LINE_EVERY_S):
            self._shown = now
            self._show()

    def finish(self, remaining: int) -> None:
        self.remaining = remaining
        if self.progress.done or remaining:
            self._show()
            if self.tty:
                self.err.write("\n")
        elapsed = self.progress.elapsed_s
        rate = self.progress.done / elapsed if elapsed > 0 else 0.0
        self.err.write(f"embedded {self.progress.done:,} chunks in {elapsed:.1f} s ({rate:.1f} chunks/s)\n")
        self.err.flush()

    def _show(self) -> None:
        done, total = self.progress.done, self.progress.done + self.remaining
        rate, eta = self.progress.rate(), self.progress.eta_s(self.remaining)
        line = (
            f"{done:,}/{total:,} chunks  {f'{rate:.1f}' if rate else '-'} chunks/s  "
            f"ETA {_duration(eta) if eta is not None else '-'}"
        )
        if self.tty:
            self.err.write(_drawn(done, total, line))
        else:
            self.err.write(f"embedding: {line}\n")
        self.err.flush()


class _StepBar:
    """A consolidation's progress on stderr: a bar per step redrawn in place on a terminal, else
    one line when a step starts and one when it ends."""

    NAMES: ClassVar[dict[str, str]] = {"summaries": "weeks summarised", "archive": "notes archived"}

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.tty = err.isatty()
        self.step = ""

    def __call__(self, step: str, done: int, total: int) -> None:
        if not total:
            return
        name = self.NAMES.get(step, step)
        if self.tty:
            self.err.write(_drawn(done, total, f"{done}/{total} {name}") + ("\n" if done == total else ""))
        elif step != self.step or done == total:
            self.err.write(f"consolidate: {done}/{total} {name}\n")
        self.step = step
        self.err.flush()


def _drawn(done: int, total: int, line: str) -> str:
    """A progress bar redrawn in place on a terminal, ``line`` after it."""
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    return f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {line}\x1b[K"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _search(args: argparse.Namespace, root: Path, settings: Settings, out: TextIO, err: TextIO) -> int:
    """The server's search over the tier dir: asked of the sidecar serving the dir when one answers
    at the configured address (its hybrid ranking, its model already loaded), else run in this
    process (sidecar.retrieval.offline), with the same ranks and scores as ``POST /memory/search``.
    Which engine answered, and where, goes in the JSON answer, and to ``err`` beside a table."""
    from sidecar.index.query import check_query, terms
    from sidecar.index.snippet import window

    query = check_query(args.query)
    limit = max(1, min(args.limit, 50))
    answer: dict[str, Any] | None = None
    if args.via != "local":
        body = {"query": query, "limit": limit, "scope": args.scope}
        asked = _ask_sidecar(args, root, settings, body, out=out, err=err)
        if isinstance(asked, int):  # the sidecar refused the search: said by the convention
            return asked
        answer = asked
    if answer is None:
        import asyncio

        from sidecar.retrieval.offline import search_dir

        answer = asyncio.run(search_dir(root, args.scope, query, limit, settings))
    if args.format == "json":
        out.write(json.dumps(answer, ensure_ascii=False, indent=2) + "\n")
        return 0
    print(f"memory-sidecar: answered by {_engine_line(answer['engine'])}", file=err)
    results = answer["results"]
    if not results:
        out.write("no results\n")
        return 0
    bold = out.isatty()
    out.write(f"{'score':>8}  {'where':<32}  snippet\n")
    for hit in results:
        where = f"{hit['path']}:{hit['line_start']}-{hit['line_end']}"
        shown = window(hit["snippet"], terms(query), SNIPPET_COLUMNS)  # the answer's snippet, a row wide
        out.write(f"{hit['score']:>8.3f}  {where:<32}  {_shown(shown, bold)}\n")
    return 0


STATUS_TIMEOUT_S = 5.0  # the sidecar's status, asked to check which dir it serves
SEARCH_TIMEOUT_S = 30.0


def _ask_sidecar(
    args: argparse.Namespace, root: Path, settings: Settings, body: dict[str, Any], *, out: TextIO, err: TextIO
) -> dict[str, Any] | int | None:
    """The answer to the search ``body`` of the sidecar serving ``root`` at the configured address, with ``engine``
    saying so; the exit status when it refused the search (its error said by the convention);
    None to search in this process: no sidecar holds the dir's lock, or (said on ``err``) none at
    the address answers for it. With ``--sidecar``, a missing or other sidecar is an error."""
    forced = args.via == "sidecar"
    if not forced and not _served(root):
        return None  # no HTTP at all: nothing holds the dir
    from sidecar.loopback import Unanswered, call

    url = _sidecar_url(settings)
    try:
        where = f"/memory/status?scope={args.scope}"
        code, status = call(url, "GET", where, None, token=settings.api_token, timeout=STATUS_TIMEOUT_S)
        served = code == 200 and _same_dir(status.get("dir"), root)
        if served:
            code, answer = call(url, "POST", "/memory/search", body, token=settings.api_token, timeout=SEARCH_TIMEOUT_S)
    except Unanswered as exc:
        if forced:
            from sidecar.errors import EngineUnavailable

            raise EngineUnavailable(f"no sidecar answered at {url}: {exc}", code="sidecar_unreachable") from None
        print(f"memory-sidecar: a sidecar holds {root}, but none answered at {url} ({exc}); searching here", file=err)
        return None
    if not served:
        why = (
            f"the sidecar at {url} serves {status.get('dir')}, not {root}"
            if code == 200
            else f"the sidecar at {url} answered its status {code}: {_message(status)}"
        )
        if forced:
            raise _mistake(why, "sidecar_elsewhere" if code == 200 else "sidecar_refused")
        print(f"memory-sidecar: {why}; searching here", file=err)
        return None
    if code != 200:
        if not isinstance(answer.get("error"), dict):
            answer = {"error": {"code": f"http_{code}", "message": _message(answer)}}
        return _refused(answer, 2 if code < 500 else 1, args.format == "json", out, err)
    answer["engine"] = _served_engine(answer, status, url)
    return answer


def _served(root: Path) -> bool:
    """Whether a live process holds ``root``'s lock (by the pid the lock file names; the lock is
    not touched, so a sidecar starting now is never kept out)."""
    from sidecar.server.lock import LOCK_NAME

    try:
        pid = (root / LOCK_NAME).read_text("ascii", errors="replace").strip()
    except OSError:
        return False
    if not pid.isdigit() or not 0 < int(pid) < 2**31:  # 0 would ask after this process's own group
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _sidecar_url(settings: Settings) -> str:
    host = settings.host
    if host in ("", "0.0.0.0"):  # every address: ask the loopback one
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"


def _same_dir(served: Any, root: Path) -> bool:
    if not isinstance(served, str):
        return False
    try:
        return Path(served).samefile(root)
    except OSError:
        return False


def _message(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    return str(error.get("message")) if isinstance(error, dict) else json.dumps(answer)[:200]


def _served_engine(answer: dict[str, Any], status: dict[str, Any], url: str) -> dict[str, Any]:
    """``engine`` for a sidecar's answer, from its status (the same fields as the local search's)."""
    embed = status.get("embedder") or {}
    engine: dict[str, Any] = {"sidecar": url}
    if embed.get("search") != "hybrid":
        return {"search": "bm25", "why": "the sidecar serving the dir has no embedder", **engine}
    engine.update(search="hybrid", fusion=embed.get("fusion"), model=embed.get("model"))
    if "dense" in answer.get("degraded", []):
        engine.update(search="bm25", why="the embedder failed or was too slow")
    engine["vectors"] = {"chunks": embed.get("vectors"), "backlog": embed.get("backlog")}
    return engine


def _engine_line(engine: dict[str, Any]) -> str:
    where = f" from the sidecar at {engine['sidecar']}" if "sidecar" in engine else ""
    if engine["search"] == "bm25":
        return f"bm25 ({engine['why']}){where}"
    vectors = engine["vectors"]
    left = f", {vectors['backlog']} texts without a vector ranked by bm25 alone" if vectors["backlog"] else ""
    return f"hybrid ({engine['fusion']}, {engine['model']}, {vectors['chunks']} chunks with a vector{left}){where}"


def _shown(snippet: Snippet, bold: bool) -> str:
    """The snippet on one line, its matched terms in bold on a terminal."""
    if not bold:
        return snippet.text
    text, at, parts = snippet.text, 0, []
    for start, end in snippet.highlights:
        parts += [text[at:start], "\x1b[1m", text[start:end], "\x1b[0m"]
        at = end
    return "".join([*parts, text[at:]])


def _emit_status(status: dict[str, Any], fmt: str | None, out: TextIO) -> None:
    if fmt == "json":
        out.write(json.dumps(status, indent=2) + "\n")
        return
    out.write(human(status))
