"""The per-agent settings file in the agent tier dir: ``memory.toml``, or the front matter of
``settings.md`` (``key: value`` lines between ``---`` lines) when there is no ``memory.toml``.

Keys: ``budget`` (the block's default budget), ``threshold`` (relevance threshold of recalled
chunks), ``episodic_ttl_days`` (days before journal events are archived), ``consolidation``
(true/false) and ``memory`` (true/false: false injects nothing and refuses writes). A file that
does not parse is ignored whole, a key with a bad value or an unknown key is ignored alone; every
problem is kept as a readable error (shown by ``GET /memory/agent-settings`` and logged), never
raised: a bad file never stops the sidecar from starting. The file is read once, at start.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.settings import Settings

__all__ = ["FILES", "KEYS", "AgentSettings", "apply", "load_agent_settings"]

FILES = ("memory.toml", "settings.md")
MAX_FILE_BYTES = 64 * 1024
MAX_BUDGET = 200_000


def _budget(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_BUDGET:
        raise ValueError(f"an integer from 1 to {MAX_BUDGET}")
    return v


def _ratio(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
        raise ValueError("a number from 0 to 1")
    return float(v)


def _days(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
        raise ValueError("a number of days, 0 (off) or more")
    return float(v)


def _flag(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("true or false")
    return v


#: key -> (check, the Settings field it sets, how the value becomes that field's value)
KEYS: dict[str, tuple[Callable[[Any], Any], str, Callable[[Any, Settings], Any]]] = {
    "budget": (_budget, "prompt_budget", lambda v, s: v),
    "threshold": (_ratio, "inject_threshold", lambda v, s: v),
    "episodic_ttl_days": (_days, "journal_compact_days", lambda v, s: v),
    "consolidation": (_flag, "consolidate_interval", lambda v, s: s.consolidate_interval if v else 0.0),
    "memory": (_flag, "memory_enabled", lambda v, s: v),
}


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """What the file says: the valid keys, the file it came from and every problem found."""

    path: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "values": dict(self.values), "errors": list(self.errors)}


def apply(settings: Settings, found: AgentSettings) -> Settings:
    """``settings`` with the file's values over them."""
    changes = {KEYS[k][1]: KEYS[k][2](v, settings) for k, v in found.values.items()}
    return settings.with_changes(**changes) if changes else settings


def load_agent_settings(root: Path) -> AgentSettings:
    """Read the agent's settings file under ``root``; never raises."""
    for name in FILES:
        path = root / name
        try:
            if not path.is_file() or path.is_symlink():
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                return AgentSettings(name, errors=[f"{name}: larger than {MAX_FILE_BYTES} bytes; ignored"])
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return AgentSettings(name, errors=[f"{name}: cannot be read ({exc}); ignored"])
        try:
            raw = tomllib.loads(text) if name.endswith(".toml") else _front_matter(text)
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            return AgentSettings(name, errors=[f"{name}: {exc}; the whole file is ignored"])
        return _checked(name, raw)
    return AgentSettings()


def _checked(name: str, raw: dict[str, Any]) -> AgentSettings:
    values: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in raw.items():
        if key not in KEYS:
            errors.append(f"{name}: unknown key {key!r} (known: {', '.join(KEYS)}); ignored")
            continue
        try:
            values[key] = KEYS[key][0](value)
        except ValueError as exc:
            errors.append(f"{name}: {key} must be {exc}, not {value!r}; ignored")
    return AgentSettings(name, values, errors)


def _front_matter(text: str) -> dict[str, Any]:
    """``key: value`` lines between a first line ``---`` and the next ``---``; values read as TOML."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---")
    except StopIteration:
        raise ValueError("front matter opened with --- is never closed") from None
    out: dict[str, Any] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"line {number} is not 'key: value'")
        try:
            out[key.strip()] = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            raise ValueError(f"line {number}: cannot read {value.strip()!r} (quote a string)") from None
    return out
