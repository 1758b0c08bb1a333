"""An independent check of the install: a wheel built from the source (``pip wheel --no-deps``),
installed alone in a fresh venv (``--no-deps --no-index``: nothing but the wheel comes from
anywhere), whose own ``memory-sidecar`` is then driven over stdio by the official MCP client: every
tool name matches the pattern OpenAI and Anthropic hold function names to, and an argument outside
a tool's input schema is refused.

The fresh venv takes the dependencies already installed in the test's environment by a ``.pth``
line naming its site-packages (a plain path: the editable install's finder there is not run), so
the check needs no network past the wheel's build backend, and the package it runs is the wheel's
(the test asserts where it was imported from)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from sidecar.mcp.catalog import NAME_PATTERN, TOOLS

ROOT = Path(__file__).resolve().parents[2]
#: What the wheel is built from: the project file, the README it names, the package.
SOURCES = ("pyproject.toml", "README.md", "sidecar")
#: The fresh venv's processes see no PYTHONPATH and run outside the source tree: nothing but the
#: venv decides what they import.
CLEAN = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

#: A wheel built in an isolated build environment (its backend from the index) and a venv: some
#: 10 s of CPU and a minute on a busy host.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` dir of a fresh venv holding the wheel."""
    src = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(dist),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and "build dependencies" in built.stderr and "index" in built.stderr.lower():
        pytest.skip(f"the build backend could not be fetched: {built.stderr.strip().splitlines()[-1]}")
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("memory_sidecar-*.whl")

    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=False)
    python = home / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
            env=CLEAN,
            cwd=home,
        ).stdout.strip()
    )
    (site / "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index"]
    # pip runs itself under the venv's python (``--python``): with a PYTHONPATH naming the checkout,
    # that python would find the checkout's editable-install metadata and take the wheel as installed.
    subprocess.run([*pip, str(wheel)], capture_output=True, text=True, check=True, timeout=300, env=CLEAN)
    where = subprocess.run(
        [str(python), "-c", "import sidecar; print(sidecar.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=CLEAN,
        cwd=home,
    )
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout  # the wheel's, not the source tree's
    return home / "bin"


def test_the_wheel_installs_and_names_its_version(installed: Path) -> None:
    from importlib.metadata import version

    done = subprocess.run(
        [str(installed / "memory-sidecar"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=CLEAN,
        cwd=installed,
    )
    assert done.returncode == 0 and done.stdout.strip() == f"memory-sidecar {version('memory-sidecar')}"


async def test_the_installed_stdio_server_offers_valid_names_and_holds_arguments_to_the_schema(
    installed: Path, memory_dir: Path
) -> None:
    params = StdioServerParameters(
        command=str(installed / "memory-sidecar"),
        args=["mcp", "--memory-dir", str(memory_dir)],
        env={"MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_WATCH": "false", "ORT_DISABLE_TELEMETRY": "1"},
        cwd=str(memory_dir),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [tool.name for tool in (await session.list_tools()).tools]
        refused = await session.call_tool("memory_search", {"query": "postgres", "limt": 2})
        found = await session.call_tool("memory_search", {"query": "dark mode screenshot", "limit": 2})
    assert names == [t.name for t in TOOLS]
    assert all(NAME_PATTERN.fullmatch(name) for name in names)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in names)  # OpenAI's pattern, written out
    assert refused.is_error is True and refused.structured_content is not None
    assert refused.structured_content["error"]["code"] == "unknown_field" and "limt" in refused.content[0].text  # type: ignore[union-attr]
    assert found.is_error is False and found.structured_content is not None
    assert [hit["path"] for hit in found.structured_content["results"]] == ["AGENT.md"]
