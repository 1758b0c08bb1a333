"""Settings: read once from the environment, then CLI flags, into one frozen object.

Every field ``some_name`` has the flag ``--some-name`` and the environment variable
``MEMORY_SIDECAR_SOME_NAME``. Nothing else in the package reads ``os.environ``.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.errors import ConfigError

__all__ = [
    "ENV_PREFIX",
    "ID_PATTERN",
    "ID_RE",
    "ROLES",
    "Settings",
    "add_arguments",
    "env_name",
    "flag_name",
    "load_settings",
]

ENV_PREFIX = "MEMORY_SIDECAR_"
#: An id (workspace, agent, crew, namespace, entry, session): 1-128 letters, digits or _.:@/-.
ID_PATTERN = r"^[A-Za-z0-9_.:@/-]{1,128}$"
ID_RE = re.compile(ID_PATTERN)
ROLES = ("solo", "member", "lead")
MB = 1024 * 1024


def _opt(default: Any, help: str, choices: tuple[str, ...] | None = None) -> Any:
    return field(default=default, metadata={"help": help, "choices": choices})


@dataclass(frozen=True)
class Settings:
    """Every knob of the sidecar. Paths are absolute once loaded."""

    memory_dir: Path = _opt(Path("~/.memory"), "agent tier directory")
    crew_dir: Path = _opt(Path("/crew/shared/.memory"), "crew tier directory")
    role: str = _opt("solo", "solo (no crew tier), member (crew via lead), lead (owns crew tier)", ROLES)
    lead_url: str = _opt("", "member: base URL of the lead's crew listener, e.g. http://lead:9120")
    host: str = _opt("127.0.0.1", "address of the agent API")
    port: int = _opt(9119, "port of the agent API")
    allow_remote: bool = _opt(False, "serve the agent API on a non-loopback --host (needs --api-token)")
    api_token: str = _opt("", "bearer token every agent API request must carry (required with --allow-remote)")
    crew_listen: str = _opt("", "lead: host:port of the read-only crew listener for members")
    crew_token: str = _opt("", "shared bearer token between the lead's crew listener and members")
    log_format: str = _opt("auto", "auto (json unless a terminal), json or console", ("auto", "json", "console"))
    log_level: str = _opt("info", "debug, info, warning or error", ("debug", "info", "warning", "error"))
    reconcile_interval: float = _opt(60.0, "seconds between safety-net reconciles of each tier (0 = off)")
    crew_reindex_interval: float = _opt(60.0, "lead: seconds between crew-tier reindex ticks (0 = off)")
    watch: bool = _opt(True, "watch the tier dirs for changes made outside the sidecar")
    watch_debounce_ms: int = _opt(200, "watcher debounce window in milliseconds")
    watch_step_ms: int = _opt(15, "watcher polling step in milliseconds")
    after_seq_timeout: float = _opt(1.0, "longest a search waits for after_seq, in seconds")
    tier_cap_bytes: int = _opt(10 * MB, "hard cap on the .md bytes of one tier dir")
    tier_max_files: int = _opt(1000, "hard cap on the number of .md files in one tier dir")
    daily_cap_bytes: int = _opt(100 * 1024, "hard cap on one daily/*.md file")
    evergreen_cap_bytes: int = _opt(16 * 1024, "hard cap on AGENT.md, CREW.md and pins.md")
    topic_cap_bytes: int = _opt(32 * 1024, "hard cap on any other .md file (topics/, operators/ ...)")
    soft_cap_ratio: float = _opt(0.8, "fraction of a cap past which a write succeeds with a warning")
    max_body_bytes: int = _opt(2 * MB, "largest request body accepted")
    max_connections: int = _opt(
        512, "most connections the agent API keeps open; past it a new one is answered 503 too_many_connections"
    )
    proxy_connect_timeout: float = _opt(1.0, "member: connect timeout to the lead, seconds")
    proxy_read_timeout: float = _opt(5.0, "member: read timeout to the lead, seconds")
    proxy_max_bytes: int = _opt(4 * MB, "member: largest response accepted from the lead")
    embedder: str = _opt(
        "auto",
        "auto (onnx if installed), none, onnx, ollama or openai",
        ("auto", "none", "onnx", "ollama", "openai"),
    )
    ollama_host: str = _opt("", "Ollama base URL (falls back to OLLAMA_HOST, then http://127.0.0.1:11434)")
    ollama_model: str = _opt("nomic-embed-text", "Ollama embedding model")
    openai_base_url: str = _opt("", "OpenAI-compatible base URL serving /v1/embeddings")
    openai_api_key: str = _opt("", "API key for the OpenAI-compatible endpoint")
    openai_model: str = _opt("text-embedding-3-small", "model for the OpenAI-compatible endpoint")
    fusion: str = _opt("weighted", "how BM25 and dense rankings are fused: rrf or weighted", ("rrf", "weighted"))
    prompt_budget: int = _opt(15000, "default character budget of the memory block")
    dedup_threshold: float = _opt(0.9, "an append whose every line is this similar to memory is not written (0 = off)")
    workspace_id: str = _opt("default", "workspace of memories a request does not name")
    agent_id: str = _opt("agent", "the agent this sidecar serves")
    crew_id: str = _opt("crew", "member, lead: the crew's id")
    namespace: str = _opt("default", "namespace of memories a request does not name")
    recall_scoring: str = _opt(
        "importance", "recall scores: importance (cosine x importance) or activation", ("importance", "activation")
    )
    journal_compact_days: float = _opt(90.0, "days after which journal events are archived (0 = off)")
    consolidate_interval: float = _opt(24.0, "hours between consolidations of old daily notes (0 = off)")
    summariser: str = _opt(
        "none", "consolidation summaries: none (extractive), openai or ollama", ("none", "openai", "ollama")
    )
    summariser_model: str = _opt("", "the summariser's model (URL and key: the openai/ollama settings)")
    operator_id: str = _opt(
        "", "lead: the user whose stated preferences consolidation merges into the crew's operators/<slug>.md"
    )
    kg_extractor: str = _opt(
        "rules", "knowledge-graph facts: rules, or llm (the rules and the summariser's chat model)", ("rules", "llm")
    )
    agent_refuse_injection: bool = _opt(
        True, "refuse (422) an agent-tier write the injection scanner blocks; false: write it with a warning"
    )
    crew_refuse_injection: bool = _opt(
        True, "lead: refuse (422) a crew-tier write the injection scanner blocks; false: write it with a warning"
    )
    crew_store: str = _opt(
        "sqlite", "where the crew tier is shared: sqlite (the lead's files, via the lead) or a postgres:// URL"
    )
    crew_store_timeout: float = _opt(2.0, "member, lead: seconds a crew-store connection or query may take")
    crew_fallback: bool = _opt(
        True, "member: a search of the agent's own tier that finds nothing answers from the crew tier (fell_back)"
    )
    inject_threshold: float = _opt(
        0.35, "least relevance (0-1, the share of the query's words a chunk holds) for the block to recall a chunk"
    )
    memory_enabled: bool = _opt(
        True,
        "false: memory is off for this agent: every read and write of memory is refused (403 memory_disabled), "
        "the block injects nothing, nothing is indexed",
    )
    mcp_tools: str = _opt(
        "", "the MCP tools offered: names or groups (core, memories, kg, palace), comma-separated; empty: all"
    )
    ui: bool = _opt(True, "serve the read-only memory browser at GET /ui (--no-ui: off)")

    @property
    def has_crew(self) -> bool:
        return self.role in ("member", "lead")

    @property
    def held_tiers(self) -> dict[str, Path]:
        """The tiers this sidecar holds, by name: it indexes and writes them and keeps their graph.
        Its agent tier, and the crew tier on the lead alone (a member reaches the crew through its
        lead or the crew store and never writes it)."""
        return {"agent": self.memory_dir, **({"crew": self.crew_dir} if self.role == "lead" else {})}

    def with_changes(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def as_environ(self) -> dict[str, str]:
        """Every setting as the environment variable that gives it (for a child process)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[env_name(f.name)] = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return out


def flag_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def _convert(name: str, kind: Any, raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        if kind in (bool, "bool"):
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if kind in (int, "int"):
            return int(raw)
        if kind in (float, "float"):
            return float(raw)
        if kind in (Path, "Path"):
            return Path(raw)
    except ValueError:
        raise ConfigError(f"{flag_name(name)} / {env_name(name)}: cannot read {raw!r} as {kind}") from None
    return raw


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one ``--flag`` per setting; defaults stay None so the environment shows through."""
    for f in dataclasses.fields(Settings):
        help_text = f"{f.metadata['help']} (env {env_name(f.name)}, default {f.default})"
        parser.add_argument(flag_name(f.name), dest=f.name, default=None, help=help_text, metavar=f.name.upper())
    parser.add_argument("--no-ui", dest="ui", action="store_const", const="false", help="the same as --ui false")


def load_settings(
    args: argparse.Namespace | Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    argv_extra: Sequence[str] = (),
) -> Settings:
    """Environment first, then flags over it; validate and make paths absolute."""
    environ = os.environ if environ is None else environ
    given = vars(args) if isinstance(args, argparse.Namespace) else dict(args or {})
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        raw: Any = environ.get(env_name(f.name))
        if given.get(f.name) is not None:
            raw = given[f.name]
        if raw is None:
            continue
        value = _convert(f.name, f.type, raw)
        choices = f.metadata.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"{flag_name(f.name)} must be one of {', '.join(choices)}; got {value!r}")
        values[f.name] = value
    if not values.get("ollama_host") and environ.get("OLLAMA_HOST"):
        values["ollama_host"] = environ["OLLAMA_HOST"]
    settings = Settings(**values)
    return _validated(settings)


def _validated(s: Settings) -> Settings:
    if not 0 < s.port < 65536:
        raise ConfigError(f"--port must be 1..65535; got {s.port}")
    if not _loopback(s.host) and not s.allow_remote:
        raise ConfigError(
            f"--host {s.host} is not a loopback address and the agent API has no other guard: "
            "pass --allow-remote with --api-token to serve it there"
        )
    if s.allow_remote and not s.api_token:
        raise ConfigError("--allow-remote needs --api-token: the agent API never runs unauthenticated off loopback")
    if s.role == "member" and not s.lead_url and s.crew_store == "sqlite":
        # On a server store a member reads the crew from the store; only what needs the lead waits for one.
        raise ConfigError("--role member needs --lead-url (the lead's crew listener) or a --crew-store")
    if s.crew_listen and ":" not in s.crew_listen:
        raise ConfigError("--crew-listen must be host:port")
    if s.role == "lead" and s.crew_listen and not s.crew_token:
        raise ConfigError("--crew-listen needs --crew-token: the crew listener never runs unauthenticated")
    if s.tier_max_files < 1:
        raise ConfigError("--tier-max-files must be at least 1")
    if s.max_connections < 1:
        raise ConfigError("--max-connections must be at least 1")
    for name in ("workspace_id", "agent_id", "crew_id", "namespace"):
        if not ID_RE.match(getattr(s, name)):
            raise ConfigError(f"{flag_name(name)} must be 1-128 letters, digits or _.:@/-")
    if s.consolidate_interval < 0:
        raise ConfigError("--consolidate-interval must be 0 (off) or positive")
    if s.operator_id and not ID_RE.match(s.operator_id):
        raise ConfigError("--operator-id must be 1-128 letters, digits or _.:@/-")
    if s.operator_id and s.role != "lead":
        raise ConfigError(
            "--operator-id needs --role lead: the operator model lives in the crew dir, which the lead writes"
        )
    if s.kg_extractor == "llm" and s.summariser == "none":
        raise ConfigError("--kg-extractor llm needs a chat model: --summariser openai or ollama")
    if s.summariser != "none" and not s.summariser_model:
        raise ConfigError(f"--summariser {s.summariser} needs --summariser-model")
    if s.journal_compact_days < 0:
        raise ConfigError("--journal-compact-days must be 0 (off) or positive")
    if not 0 <= s.inject_threshold <= 1:
        raise ConfigError("--inject-threshold must be in [0, 1]")
    if not 0 < s.soft_cap_ratio <= 1:
        raise ConfigError("--soft-cap-ratio must be in (0, 1]")
    if s.crew_store != "sqlite" and not s.crew_store.startswith(("postgres://", "postgresql://")):
        raise ConfigError("--crew-store must be sqlite or a postgres://... URL")
    if s.crew_store_timeout <= 0:
        raise ConfigError("--crew-store-timeout must be positive")
    return s.with_changes(
        memory_dir=s.memory_dir.expanduser().absolute(),
        crew_dir=s.crew_dir.expanduser().absolute(),
    )


def _loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is only reachable from this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
