"""The README and docs/ are held to the code: size, the two commands first, every setting with its
real default and meaning, no words about how the product was made, no commit hashes, paths and
commands that exist, and the README's request examples run against a live sidecar."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.settings import Settings, env_name, load_settings
from tests.support.procs import SidecarProcess, start_sidecar

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ENV_EXAMPLE = ROOT / "deploy" / "sidecar.env.example"
CONFIGURATION = DOCS / "configuration.md"
README_MAX_BYTES = 12 * 1024
SETTING_NAMES = [env_name(f.name) for f in dataclasses.fields(Settings)]
SETTING_NAME = re.compile(r"\bMEMORY_SIDECAR_[A-Z0-9_]+\b")
# Words about how the product was made rather than about the product. Word starts are matched,
# case-insensitively, so plurals count too ("sessions", "read workers").
FORBIDDEN = {
    "stop": r"\bstop\b",  # also "stop 14", "this stop"
    # The product has sessions of its own (an agent's session, MCP sessions, POST /memory/session):
    # what is refused is a session of the people who made it.
    "session": r"\b(?:previous|this|last|earlier|later|next|our|a coding|a development) sessions?\b",
    "helper": r"\bhelpers?\b",
    "issue": r"\bissues?\b",
    "#N notes": r"#\d+ notes",  # "see the #8 notes"
    "A/B against": r"\ba/b against\b",
    "read worker": r"\bread[- ]workers?\b",
    "fast path": r"\bfast[- ]paths?\b",
}
HEX = r"[0-9a-f]{7,40}"


def doc_paths() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section of a markdown text."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no '## {title}' section"
    return match.group(1)


def readme_settings() -> list[tuple[str, str, str]]:
    """(env name, default, meaning) for every row of the settings table (docs/configuration.md,
    linked from the README's Configuration section)."""
    rows = []
    for line in section(CONFIGURATION.read_text(), "Settings").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 3 and SETTING_NAME.fullmatch(cells[0].strip("`")):
            name, default, meaning = cells
            rows.append((name.strip("`"), "" if default == "(empty)" else default.strip("`"), meaning))
    return rows


def env_example_names() -> list[str]:
    return [line.partition("=")[0] for line in ENV_EXAMPLE.read_text().splitlines() if line and line[0] != "#"]


def hits(pattern: str, text: str) -> list[str]:
    return [m.group(0) for m in re.finditer(pattern, text, re.I)]


# -- the README --------------------------------------------------------------------------------
def test_readme_is_at_most_12_kb() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes, over {README_MAX_BYTES}"


def test_readme_starts_with_make_run_then_make_test() -> None:
    lines = README.read_text().splitlines()
    while lines and (not lines[0].strip() or lines[0].startswith("# ")):
        lines.pop(0)  # the title
    assert lines and lines[0].startswith("```"), "the first thing after the title is a code block"
    commands = [ln.split("#")[0].strip() for ln in lines[1:3]]
    assert commands == ["make run", "make test"], lines[:3]


def test_readme_configuration_table_is_every_setting_once() -> None:
    names = [name for name, _, _ in readme_settings()]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(names) == set(SETTING_NAMES), (set(SETTING_NAMES) - set(names), set(names) - set(SETTING_NAMES))
    assert names == SETTING_NAMES, "the table follows the order of the Settings fields"


def test_readme_configuration_table_has_the_real_defaults_and_meanings() -> None:
    rows = readme_settings()
    assert rows
    assert load_settings({}, environ={name: default for name, default, _ in rows}) == load_settings({}, environ={})
    helps = {env_name(f.name): f.metadata["help"] for f in dataclasses.fields(Settings)}
    assert {name: meaning for name, _, meaning in rows} == helps


def test_readme_and_env_example_name_the_same_settings_as_the_code() -> None:
    example = env_example_names()
    assert sorted(example) == sorted(SETTING_NAMES) and len(example) == len(set(example))
    for path in (README, CONFIGURATION, ENV_EXAMPLE):
        extra = set(SETTING_NAME.findall(path.read_text())) - set(SETTING_NAMES)
        assert not extra, f"{rel(path)} names settings that do not exist: {sorted(extra)}"


def test_readme_links_the_docs() -> None:
    text = README.read_text()
    for target in ("docs/architecture.md", "docs/reliability.md", "docs/benchmarks.md", "docs/configuration.md"):
        assert f"]({target})" in text, target


def test_readme_has_no_short_commit_hashes() -> None:
    """No hex token of 7+ characters with both digits and letters (what a git hash looks like)."""
    found = [t for t in re.findall(rf"\b{HEX}\b", README.read_text()) if re.search(r"\d", t) and re.search("[a-f]", t)]
    assert not found, found


# -- the README and docs/*.md ------------------------------------------------------------------
@pytest.mark.parametrize("path", doc_paths(), ids=rel)
def test_no_words_about_how_the_product_was_made(path: Path) -> None:
    text = path.read_text()
    found = {word: hits(pattern, text) for word, pattern in FORBIDDEN.items() if hits(pattern, text)}
    assert not found, f"{rel(path)}: {found}"


@pytest.mark.parametrize("path", doc_paths(), ids=rel)
def test_no_commit_hashes(path: Path) -> None:
    text = path.read_text()
    full = hits(r"\b[0-9a-f]{40}\b", text)
    near_commit = hits(rf"\bcommits?\W{{1,20}}{HEX}\b|\b{HEX}\W{{1,20}}commits?\b", text)
    assert not full and not near_commit, f"{rel(path)}: {full + near_commit}"


def test_there_are_docs() -> None:
    assert {p.name for p in DOCS.glob("*.md")} >= {"architecture.md", "reliability.md"}


@pytest.mark.parametrize("path", doc_paths(), ids=rel)
def test_relative_links_resolve(path: Path) -> None:
    text = path.read_text()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        if target.endswith("benchmarks.md") and not (DOCS / "benchmarks.md").exists():
            continue  # written separately; its link is checked once it exists
        assert (path.parent / target).exists(), f"{rel(path)} links {target}, which does not exist"


# -- docs/architecture.md and docs/reliability.md ----------------------------------------------
def test_architecture_names_every_package_and_module_and_points_nowhere_outside() -> None:
    text = (DOCS / "architecture.md").read_text()
    packages = [f"sidecar/{p.parent.name}" for p in (ROOT / "sidecar").glob("*/__init__.py")]
    modules = [f"sidecar/{p.name}" for p in (ROOT / "sidecar").glob("*.py") if not p.name.startswith("__")]
    assert packages and modules
    missing = sorted(name for name in packages + modules if f"`{name}`" not in text)
    assert not missing, f"docs/architecture.md does not say what these hold: {missing}"
    assert not re.search(r"https?://", text), "the architecture is told in our own words, without outside links"


def test_reliability_names_only_tests_and_commands_that_exist() -> None:
    text = (DOCS / "reliability.md").read_text()
    paths = set(re.findall(r"\btests/[\w/]+\.py\b", text))
    assert paths
    assert not [p for p in paths if not (ROOT / p).is_file()], sorted(p for p in paths if not (ROOT / p).is_file())
    benches = set(re.findall(r"python -m tests\.bench ([a-z_]+)", text))  # NAME is a placeholder
    assert benches
    bench_dir = ROOT / "tests" / "bench"
    missing = [
        n for n in benches if not (bench_dir / f"{n}.py").is_file() and not (bench_dir / f"bench_{n}.py").is_file()
    ]
    assert not missing, missing
    for selector in re.findall(r"pytest (tests/[\w/]+\.py) -k (\w+)", text):
        path, word = selector
        assert re.search(rf"def test_\w*{word}", (ROOT / path).read_text()), selector


# -- the README's examples, run against a live sidecar -----------------------------------------
@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SidecarProcess]:
    memory = tmp_path_factory.mktemp("readme") / "memory"
    shutil.copytree(ROOT / "demo" / "memory", memory)
    proc = start_sidecar(memory)
    yield proc
    proc.stop()


#: The documents whose shell and HTTP examples are run as written.
EXAMPLE_DOCS = (README, DOCS / "mcp.md")
#: Example commands that set the product up rather than use it, each with why it is not run here
#: (every other shell line of those documents is run).
SETUP = {
    "make ": "the suite runs under make test; make run starts what the live fixture starts",
    "pip install": "installs into the environment running this test (tests/mcp/test_install.py builds a wheel)",
    "memory-sidecar serve": "long-running: the live fixture is this command",
}


def doc_blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", path.read_text(), re.S | re.M)


def code_blocks(lang: str) -> list[str]:
    return doc_blocks(README, lang)


def on_port(text: str, port: int) -> str:
    return text.replace("127.0.0.1:9119", f"127.0.0.1:{port}")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A HOME whose ``~/.memory`` is another copy of the demo memory (the live sidecar holds its own)."""
    home = tmp_path_factory.mktemp("home")
    shutil.copytree(ROOT / "demo" / "memory", home / ".memory")
    return home


def example_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MEMORY_SIDECAR_EMBEDDER": "none",
        "ORT_DISABLE_TELEMETRY": "1",
    }


def shell_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


async def lists_tools(command: list[str], env: dict[str, str]) -> list[str]:
    """The tool names an MCP server started as ``command`` gives the official client over stdio."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [tool.name for tool in (await session.list_tools()).tools]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
@pytest.mark.parametrize("path", EXAMPLE_DOCS, ids=rel)
@pytest.mark.slow
async def test_every_shell_example_runs_on_the_demo_memory(path: Path, live: SidecarProcess, home: Path) -> None:
    """Each ``sh`` block: the HTTP examples (curl) against a live sidecar on a copy of demo/memory,
    made to fail on any 4xx/5xx; each CLI line on another copy as ``~/.memory``; a ``claude mcp
    add`` line's server command started and asked for its tools by the official client; only the
    set-up commands of SETUP are left out, and they must be the only ones."""
    env = example_env(home)
    blocks = doc_blocks(path, "sh")
    assert blocks, rel(path)
    ran = 0
    for block in blocks:
        if "curl " in block:
            script = on_port(block, live.port).replace("curl -s ", "curl -sSf ")
            assert script.count("curl -sSf ") == block.count("curl -s "), "every curl is made to fail on a 4xx/5xx"
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60, env=env
            )
            assert done.returncode == 0, (block, done.stdout[-2000:], done.stderr[-2000:])
            assert done.stdout.strip() and '"error"' not in done.stdout, block
            ran += 1
            continue
        for line in shell_lines(block):
            command = line.split("  #")[0].strip()
            if command.startswith("claude mcp add "):
                server = command.split(" -- ", 1)[1].replace("~", str(home)).split()
                assert server[:2] == ["memory-sidecar", "mcp"], command
                tools = await lists_tools([str(Path(sys.executable).parent / server[0]), *server[1:]], env)
                assert "memory_search" in tools, command
            elif any(command.startswith(prefix) for prefix in SETUP):
                continue
            else:
                assert command.startswith("memory-sidecar "), f"{rel(path)}: an example this test cannot run: {line}"
                done = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", command], capture_output=True, text=True, timeout=120, env=env
                )
                assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
                assert done.stdout.strip(), command
            ran += 1
    assert ran, f"{rel(path)} has no example that runs"


@pytest.mark.parametrize("path", EXAMPLE_DOCS, ids=rel)
@pytest.mark.slow
async def test_every_mcp_client_config_reaches_the_sidecar(path: Path, live: SidecarProcess, home: Path) -> None:
    """Each JSON client configuration: a streamable HTTP server is the live sidecar's /mcp, a stdio
    server the command it names; the official client lists the tools of each."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    configs = [json.loads(block) for block in doc_blocks(path, "json")]
    servers = [server for config in configs for server in config["mcpServers"].values()]
    assert servers, rel(path)
    for server in servers:
        if "url" in server:
            async with (
                streamable_http_client(on_port(server["url"], live.port)) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
        else:
            args = [arg.replace("/home/me", str(home)) for arg in server["args"]]
            tools = await lists_tools([str(Path(sys.executable).parent / server["command"]), *args], example_env(home))
        assert "memory_search" in tools, server


@pytest.mark.slow
def test_readme_mcp_example_runs(live: SidecarProcess) -> None:
    (example,) = code_blocks("python")
    done = subprocess.run(
        [sys.executable, "-c", on_port(example, live.port)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "topics/deploy.md" in done.stdout and "Staging first." in done.stdout, done.stdout
