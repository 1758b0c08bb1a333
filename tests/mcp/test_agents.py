"""The agent recipes, run as written: ``examples/openai-agents/memory_agent.py`` (the OpenAI Agents
SDK, over stdio and over streamable HTTP) and ``examples/langgraph/memory_agent.py`` (LangGraph
with ``langchain-mcp-adapters``) against a real sidecar, the model a stand-in on loopback speaking
OpenAI's real protocols (``tests/support/chat_model.py``): the framework offers the model the
memory tools, the model calls ``memory_search``, the sidecar answers from the memory files and the
agent's reply carries that answer. Nothing is mocked: the frameworks, the MCP clients and the
sidecar are the real ones, in their own processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sidecar.mcp.catalog import NAME_PATTERN
from tests.support.chat_model import ChatModel, chat_model
from tests.support.procs import SidecarProcess, start_sidecar

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FACT = "- The office cat is called Miso; she sleeps on the build server."
QUESTION = "What is the office cat called?"
TOKEN = "agent-recipe-token"


@pytest.fixture
def memory(memory_dir: Path) -> Path:
    (memory_dir / "topics").mkdir()
    (memory_dir / "topics" / "office.md").write_text(f"# Office\n{FACT}\n")
    return memory_dir


@pytest.fixture
def sidecar(memory: Path) -> Iterator[SidecarProcess]:
    side = start_sidecar(memory, "--api-token", TOKEN)
    yield side
    side.stop()


def agent_env(model: ChatModel) -> dict[str, str]:
    return {
        **os.environ,
        "OPENAI_BASE_URL": model.url,
        "OPENAI_API_KEY": "not-a-real-key",
        "OPENAI_MODEL": "stand-in-1",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        "MEMORY_SIDECAR_EMBEDDER": "none",
        "MEMORY_SIDECAR_WATCH": "false",
        "ORT_DISABLE_TELEMETRY": "1",
    }


async def run(python: str, script: Path, *args: str, env: dict[str, str]) -> str:
    """Run a recipe to its end; its stdout (the agent's reply), or the test fails with its stderr.
    The LangGraph venv's modules are installed uncompiled (``langgraph_python``): its first run
    writes the bytecode of the ~1,500 it imports, the second reads it (some 2.6 s of CPU less),
    even where the environment says PYTHONDONTWRITEBYTECODE."""
    if python != sys.executable:
        env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = await asyncio.create_subprocess_exec(
        python, str(script), *args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, err.decode(errors="replace")[-4000:]
    return out.decode()


def used_memory(model: ChatModel, reply: str) -> None:
    offered = model.offered_tools()
    assert "memory_search" in offered and "memory_write" in offered
    assert all(NAME_PATTERN.fullmatch(name) for name in offered)
    outputs = model.tool_outputs()
    assert len(outputs) == 1 and "Miso" in outputs[0], outputs  # the sidecar's answer, from the file
    assert reply.startswith("From memory:") and "Miso" in reply and "topics/office.md" in reply


OPENAI_AGENTS = EXAMPLES / "openai-agents" / "memory_agent.py"


@pytest.mark.slow  # the SDK and a sidecar in their own processes: ~7 s of CPU
async def test_openai_agents_over_stdio(memory: Path) -> None:
    pytest.importorskip("agents", reason="the [dev] extra installs openai-agents")
    async with chat_model() as model:
        reply = await run(
            sys.executable,
            OPENAI_AGENTS,
            "--memory-dir",
            str(memory),
            "--command",
            f"{sys.executable} -m sidecar",
            QUESTION,
            env=agent_env(model),
        )
    used_memory(model, reply)
    assert all(path == "/v1/responses" for path, _ in model.requests)  # the SDK's default API


@pytest.mark.slow  # the SDK twice and a sidecar in their own processes: ~8 s of CPU
async def test_openai_agents_over_streamable_http_with_the_api_token(sidecar: SidecarProcess) -> None:
    pytest.importorskip("agents", reason="the [dev] extra installs openai-agents")
    async with chat_model() as model:
        args = ("--url", f"{sidecar.url}/mcp", QUESTION)
        reply = await run(
            sys.executable, OPENAI_AGENTS, *args, env=agent_env(model) | {"MEMORY_SIDECAR_API_TOKEN": TOKEN}
        )
        used_memory(model, reply)
        asked = len(model.requests)
        # Without the token the sidecar refuses the MCP session: the recipe fails, the model unasked.
        refused = await asyncio.create_subprocess_exec(
            sys.executable,
            str(OPENAI_AGENTS),
            *args,
            env=agent_env(model),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(refused.communicate(), timeout=120)
    assert refused.returncode != 0 and out == b"" and len(model.requests) == asked
    assert httpx.post(f"{sidecar.url}/mcp", json={}).status_code == 401


# -- LangGraph -------------------------------------------------------------------------------------
LANGGRAPH = EXAMPLES / "langgraph" / "memory_agent.py"
#: What the LangGraph recipe's own venv installs (langchain-mcp-adapters pins the MCP SDK below 2,
#: which the sidecar's venv cannot have).
AGENT_PACKAGES = ("langgraph", "langchain-mcp-adapters", "langchain-openai")


class LangGraphVenv:
    """A fresh venv with the LangGraph recipe's packages from the package index, as its README says,
    built by a pip process that runs while the file's first tests do (it mostly waits on the
    network). This environment's pip installs into it (``pip --python``): a pip of the venv's own
    (``ensurepip``, some 4 s of CPU) is nothing the recipe runs. ``--no-compile``: pip would compile
    all ~3,900 modules it installs (some 9 s of CPU), where the recipe's runs import ~1,500 of them."""

    def __init__(self, home: Path) -> None:
        venv.create(home, with_pip=False)
        self.python = str(home / "bin" / "python")
        argv = [sys.executable, "-m", "pip", "--python", self.python, "install", "-q"]
        argv += ["--disable-pip-version-check", "--no-compile", *AGENT_PACKAGES]
        self.err = home.with_name(home.name + "-pip-stderr.txt")  # a file: a pipe left unread could fill
        with self.err.open("w") as err:
            self.pip = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)

    def ready(self) -> str:
        """The venv's python once pip is done; skipped (saying why) only when the index cannot be
        reached."""
        try:
            self.pip.wait(timeout=900)
        except subprocess.TimeoutExpired:
            self.pip.kill()
            self.pip.wait()
            raise
        err = self.err.read_text(errors="replace")
        if self.pip.returncode != 0:
            unreachable = ("Could not find a version", "No matching distribution", "connection", "Network")
            if any(word in err for word in unreachable):
                pytest.skip(f"the package index cannot be reached: {err.strip().splitlines()[-1]}")
            raise AssertionError(err)
        return self.python


@pytest.fixture(scope="module", autouse=True)
def langgraph_venv(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LangGraphVenv | None]:
    """Starts building the LangGraph venv as the file's first test starts, when a test of the run needs it."""
    wanted = any(
        item.path == request.path and "langgraph_python" in getattr(item, "fixturenames", ())
        for item in request.session.items
    )
    if not wanted:
        yield None
        return
    built = LangGraphVenv(tmp_path_factory.mktemp("langgraph-venv"))
    yield built
    if built.pip.poll() is None:  # a run stopped before the LangGraph tests
        built.pip.kill()
        built.pip.wait()


@pytest.fixture(scope="module")
def langgraph_python(langgraph_venv: LangGraphVenv | None) -> str:
    assert langgraph_venv is not None
    return langgraph_venv.ready()


@pytest.mark.slow
async def test_langgraph_over_streamable_http_with_the_api_token(
    sidecar: SidecarProcess, langgraph_python: str
) -> None:
    async with chat_model() as model:
        env = agent_env(model) | {"MEMORY_SIDECAR_API_TOKEN": TOKEN}
        reply = await run(langgraph_python, LANGGRAPH, "--url", f"{sidecar.url}/mcp", QUESTION, env=env)
    used_memory(model, reply)
    assert all(path == "/v1/chat/completions" for path, _ in model.requests)  # ChatOpenAI's API


@pytest.mark.slow
async def test_langgraph_over_stdio(memory: Path, langgraph_python: str) -> None:
    async with chat_model() as model:
        args = ("--memory-dir", str(memory), "--command", f"{sys.executable} -m sidecar", QUESTION)
        reply = await run(langgraph_python, LANGGRAPH, *args, env=agent_env(model))
    used_memory(model, reply)
