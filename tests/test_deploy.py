"""Deployment files, checked by parsing (no Docker engine here) and by running their probes for real.

The env example must list exactly the settings with their real defaults; every setting name and
flag the compose file, the Kubernetes manifest and the Dockerfile use must be real and must
validate; every health probe command must pass against a live sidecar and fail against a dead port.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.cli import build_parser
from sidecar.settings import Settings, env_name, load_settings
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile.sidecar"
ENV_EXAMPLE = ROOT / "deploy" / "sidecar.env.example"
COMPOSE = ROOT / "deploy" / "compose.yaml"
K8S = ROOT / "deploy" / "k8s" / "sidecar.yaml"
AGENT_DIR = "/home/agent/.memory"
CREW_DIR = "/crew/shared/.memory"
SETTING_NAMES = {env_name(f.name) for f in dataclasses.fields(Settings)}
TOKEN = "test-crew-token"


# -- parsing helpers ---------------------------------------------------------------------------
def env_example() -> list[tuple[str, str, str]]:
    """(name, value, comment above it) for every assignment in the example file."""
    out: list[tuple[str, str, str]] = []
    comment = ""
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.startswith("#"):
            comment = line.lstrip("# ").strip()
        elif line.strip():
            name, _, value = line.partition("=")
            out.append((name, value, comment))
            comment = ""
    return out


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            rows.append((word.upper(), rest.strip()))
    return rows


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data["services"]


def sidecars() -> dict[str, dict[str, Any]]:
    return {name: svc for name, svc in compose().items() if "network_mode" in svc}


def k8s_docs() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(K8S.read_text()) if d]


def k8s_pod() -> dict[str, Any]:
    (deployment,) = [d for d in k8s_docs() if d["kind"] == "Deployment"]
    pod: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return pod


def interpolate(value: str) -> str:
    """Compose's ${VAR:?message} with the crew token set, as `docker compose` would do it."""
    return re.sub(r"\$\{MEMORY_SIDECAR_CREW_TOKEN(:?\?[^}]*)?\}", TOKEN, value)


def settings_from(env: dict[str, str], args: list[str]) -> Settings:
    """Parse ``args`` the way ``memory-sidecar serve`` does and load them over ``env``."""
    parsed = build_parser().parse_args(["serve", *args])
    return load_settings(parsed, environ=env)


# -- env example -------------------------------------------------------------------------------
def test_env_example_lists_exactly_the_settings_once_each_with_a_comment() -> None:
    rows = env_example()
    names = [name for name, _, _ in rows]
    assert len(names) == len(set(names))
    assert set(names) == SETTING_NAMES
    assert all(comment for _, _, comment in rows)


def test_env_example_values_are_the_real_defaults() -> None:
    env = {name: value for name, value, _ in env_example()}
    assert load_settings({}, environ=env) == load_settings({}, environ={})


def test_env_example_comments_are_the_settings_help() -> None:
    helps = {env_name(f.name): f.metadata["help"] for f in dataclasses.fields(Settings)}
    assert {name: comment for name, _, comment in env_example()} == helps


def test_every_setting_named_in_deploy_files_exists() -> None:
    for path in (DOCKERFILE, COMPOSE, K8S, ENV_EXAMPLE):
        used = set(re.findall(r"MEMORY_SIDECAR_[A-Z_]+", path.read_text()))
        assert used, path
        assert used <= SETTING_NAMES, f"{path.name}: {sorted(used - SETTING_NAMES)}"


# -- Dockerfile --------------------------------------------------------------------------------
def test_dockerfile_shape() -> None:
    rows = dockerfile()
    assert [a for i, a in rows if i == "FROM"] == ["python:3.11-slim AS build", "python:3.11-slim"]
    final = rows[max(i for i, (ins, _) in enumerate(rows) if ins == "FROM") :]
    build = rows[: len(rows) - len(final)]
    assert ("ARG", "WITH_EMBED=0") in build
    install = " ".join(a for i, a in build if i == "RUN")
    assert '"$WITH_EMBED" = "1"' in install and ".[embed]" in install
    env = " ".join(a for i, a in final if i == "ENV")
    assert "ORT_DISABLE_TELEMETRY=1" in env
    (user,) = [a for i, a in final if i == "USER"]
    assert int(user.split(":")[0]) > 0 and int(user.split(":")[1]) > 0
    (volume,) = [a for i, a in final if i == "VOLUME"]
    assert json.loads(volume) == [AGENT_DIR, CREW_DIR]
    assert [a for i, a in final if i == "EXPOSE"] == ["9119"]
    assert [json.loads(a) for i, a in final if i == "ENTRYPOINT"] == [["memory-sidecar", "serve"]]
    assert "curl" not in DOCKERFILE.read_text().split("HEALTHCHECK", 1)[1]


def test_dockerfile_copies_only_what_dockerignore_lets_in() -> None:
    """The context is deny-all with exceptions; each COPY source must be one of them."""
    allowed = {line[1:].rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines() if line[:1] == "!"}
    sources = [a.split()[:-1] for i, a in dockerfile() if i == "COPY" and not a.startswith("--from")]
    flat = {s.rstrip("/") for group in sources for s in group}
    assert flat == allowed
    assert all((ROOT / s).exists() for s in flat)


def dockerfile_healthcheck() -> list[str]:
    (check,) = [a for i, a in dockerfile() if i == "HEALTHCHECK"]
    command: list[str] = json.loads(check.split("CMD", 1)[1])
    return command


# -- compose -----------------------------------------------------------------------------------
def test_compose_crew_shape() -> None:
    services = compose()
    cars = sidecars()
    roles = {name: svc["environment"]["MEMORY_SIDECAR_ROLE"] for name, svc in cars.items()}
    assert sorted(roles.values()) == ["lead", "member", "member"]
    memory_volumes = set()
    for name, svc in cars.items():
        agent = svc["network_mode"].removeprefix("service:")
        assert agent in services and "network_mode" not in services[agent], name
        mine = [v for v in svc["volumes"] if v.split(":")[1] == AGENT_DIR]
        assert mine and mine[0] in services[agent]["volumes"], f"{name} and {agent} must share the agent memory"
        memory_volumes.add(mine[0].split(":")[0])
        crew = [v for v in svc["volumes"] if v.split(":")[1] == CREW_DIR]
        assert len(crew) == 1
        assert crew[0].endswith(":ro") == (roles[name] == "member"), f"{name}: crew mount {crew[0]}"
        assert svc["healthcheck"]["test"][0] == "CMD"
    assert len(memory_volumes) == 3, "each agent has its own memory volume"


def test_compose_members_reach_the_lead_listener() -> None:
    cars = sidecars()
    (lead,) = [s for s in cars.values() if s["environment"]["MEMORY_SIDECAR_ROLE"] == "lead"]
    listen_port = lead["environment"]["MEMORY_SIDECAR_CREW_LISTEN"].rsplit(":", 1)[1]
    lead_host = lead["network_mode"].removeprefix("service:")
    for svc in cars.values():
        env = svc["environment"]
        assert env["MEMORY_SIDECAR_CREW_TOKEN"].startswith("${MEMORY_SIDECAR_CREW_TOKEN:?")
        if env["MEMORY_SIDECAR_ROLE"] == "member":
            assert env["MEMORY_SIDECAR_LEAD_URL"] == f"http://{lead_host}:{listen_port}"


def test_compose_sidecar_settings_validate() -> None:
    for name, svc in sidecars().items():
        env = {k: interpolate(str(v)) for k, v in svc["environment"].items()}
        settings = settings_from(env, [])
        assert settings.role in ("lead", "member"), name
        assert settings.crew_token == TOKEN


# -- Kubernetes --------------------------------------------------------------------------------
def test_k8s_native_sidecar_shape() -> None:
    pod = k8s_pod()
    (sidecar,) = pod["initContainers"]
    assert sidecar["restartPolicy"] == "Always"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert "httpGet" not in sidecar[probe], "the API binds loopback: the kubelet cannot httpGet it"
        assert sidecar[probe]["exec"]["command"][:2] == ["python", "-c"]
    resources = sidecar["resources"]
    assert resources["requests"]["memory"] and resources["limits"]["memory"]
    mounts = {m["mountPath"]: m for m in sidecar["volumeMounts"]}
    assert mounts[CREW_DIR].get("readOnly") is True
    assert AGENT_DIR in mounts
    (agent,) = pod["containers"]
    agent_mounts = {m["mountPath"]: m["name"] for m in agent["volumeMounts"]}
    assert agent_mounts[AGENT_DIR] == mounts[AGENT_DIR]["name"]
    volumes = {v["name"] for v in pod["volumes"]}
    assert {m["name"] for m in sidecar["volumeMounts"]} <= volumes
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_k8s_sidecar_settings_validate() -> None:
    (sidecar,) = k8s_pod()["initContainers"]
    env = {e["name"]: e.get("value", TOKEN) for e in sidecar["env"]}
    settings = settings_from(env, sidecar["args"])
    assert settings.role == "member"
    assert settings.lead_url and settings.crew_token == TOKEN
    assert settings.host == "127.0.0.1", "the exec probes assume the loopback default"


# -- probes against a real sidecar -------------------------------------------------------------
@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SidecarProcess]:
    memory = tmp_path_factory.mktemp("probe") / "memory"
    memory.mkdir()
    proc = start_sidecar(memory)
    yield proc
    proc.stop()


def probe_commands() -> list[tuple[str, list[str], bool]]:
    """(where, argv, honours MEMORY_SIDECAR_PORT) for every health probe shipped."""
    pod = k8s_pod()
    (sidecar,) = pod["initContainers"]
    out = [("Dockerfile HEALTHCHECK", dockerfile_healthcheck(), True)]
    out += [(f"compose {n}", s["healthcheck"]["test"][1:], False) for n, s in sidecars().items()]
    out += [
        (f"k8s {p}", sidecar[p]["exec"]["command"], False) for p in ("startupProbe", "readinessProbe", "livenessProbe")
    ]
    return out


def argv_for(argv: list[str], port: int, honours_env: bool) -> list[str]:
    assert argv[0] == "python"
    return [sys.executable, *[a if honours_env else a.replace(":9119/", f":{port}/") for a in argv[1:]]]


def probe_env(port: int) -> dict[str, str]:
    return {"MEMORY_SIDECAR_PORT": str(port), "PATH": "/usr/bin:/bin"}


def run_probe(argv: list[str], port: int, honours_env: bool) -> int:
    probe = argv_for(argv, port, honours_env)
    return subprocess.run(probe, env=probe_env(port), capture_output=True, timeout=HANG_GUARD_S).returncode


@pytest.mark.parametrize(("where", "argv", "honours_env"), probe_commands(), ids=[p[0] for p in probe_commands()])
def test_probe_passes_live_and_fails_dead(live: SidecarProcess, where: str, argv: list[str], honours_env: bool) -> None:
    # The probe's own answer limit (2 s) is the orchestrator's: on a host kept busy by other work a
    # live sidecar can miss it, as a live pod can, and the probe is asked again. Any other failure fails.
    def passes() -> bool:
        probe = subprocess.run(
            argv_for(argv, live.port, honours_env), env=probe_env(live.port), capture_output=True, timeout=HANG_GUARD_S
        )
        assert probe.returncode == 0 or b"timed out" in probe.stderr, (where, shlex.join(argv), probe.stderr[-2000:])
        return probe.returncode == 0

    wait_until(passes, interval=0.5, message=f"{where}: {shlex.join(argv)} to pass within its own time limit")
    assert run_probe(argv, free_port(), honours_env) != 0, where
