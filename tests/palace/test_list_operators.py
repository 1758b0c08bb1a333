"""Operator models are read only by the block that injects them: /memory/list does not name them."""

from __future__ import annotations

from pathlib import Path

from sidecar.prompt.block import user_slug
from tests.support.memory import ClientFactory, write


async def test_the_list_leaves_out_operator_models(
    sidecar_client: ClientFactory, memory_dir: Path, tmp_path: Path
) -> None:
    crew = tmp_path / "crew"
    write(crew, "CREW.md", "# Conventions\nWe always use Tailwind.\n")
    write(crew, f"operators/{user_slug('u-1', 'ws')}.md", "# Style\nTerse answers.\n")
    client = await sidecar_client(role="lead")
    listed = (await (await client.get("/memory/list")).json())["files"]
    crew_paths = [f["path"] for f in listed if f["wing"] == "crew"]
    assert crew_paths == ["CREW.md"]
    assert any(f["wing"] == "agent" for f in listed)
