from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from sidecar.errors import ConfigError
from sidecar.settings import Settings, add_arguments, env_name, flag_name, load_settings


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_defaults_match_the_contract() -> None:
    s = load_settings({}, environ={})
    assert (s.host, s.port, s.role) == ("127.0.0.1", 9119, "solo")
    assert s.memory_dir == Path("~/.memory").expanduser()
    assert s.crew_dir == Path("/crew/shared/.memory")


def test_every_field_has_a_flag_and_an_env_variable() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    flags = {opt for action in parser._actions for opt in action.option_strings}
    for f in dataclasses.fields(Settings):
        assert flag_name(f.name) in flags
        assert env_name(f.name) == "MEMORY_SIDECAR_" + f.name.upper()


def test_flags_override_the_environment(tmp_path: Path) -> None:
    env = {"MEMORY_SIDECAR_PORT": "9200", "MEMORY_SIDECAR_MEMORY_DIR": str(tmp_path / "a")}
    s = load_settings(parse(["--memory-dir", str(tmp_path / "b")]), environ=env)
    assert s.port == 9200 and s.memory_dir == tmp_path / "b"
    s = load_settings(parse(["--port", "9300"]), environ=env)
    assert s.port == 9300 and s.memory_dir == tmp_path / "a"


def test_booleans_and_numbers_are_typed() -> None:
    s = load_settings({}, environ={"MEMORY_SIDECAR_WATCH": "off", "MEMORY_SIDECAR_SOFT_CAP_RATIO": "0.5"})
    assert s.watch is False and s.soft_cap_ratio == 0.5


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MEMORY_SIDECAR_PORT": "abc"}, "--port"),
        ({"MEMORY_SIDECAR_PORT": "70000"}, "--port"),
        ({"MEMORY_SIDECAR_ROLE": "boss"}, "--role"),
        ({"MEMORY_SIDECAR_ROLE": "member"}, "--lead-url"),
        ({"MEMORY_SIDECAR_WATCH": "maybe"}, "--watch"),
        ({"MEMORY_SIDECAR_ROLE": "lead", "MEMORY_SIDECAR_CREW_LISTEN": "127.0.0.1:9120"}, "--crew-token"),
    ],
)
def test_bad_settings_are_clear_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings({}, environ=env)


def test_ollama_host_falls_back_to_the_standard_variable() -> None:
    assert load_settings({}, environ={"OLLAMA_HOST": "http://o:11434"}).ollama_host == "http://o:11434"
