"""``memory-sidecar consolidate run`` in-process on real tier dirs: the report on stdout, progress on
stderr (a bar redrawn in place on a terminal, step lines otherwise), the crew tier with ``--crew``,
and the refusal while a sidecar holds the dir."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

from sidecar.cli import BAR_WIDTH, main
from sidecar.clock import utcnow
from sidecar.server.lock import TierLock


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _old_week(root: Path, fact: str) -> list[str]:
    monday = utcnow().date() - timedelta(days=35 + utcnow().date().weekday())
    names = []
    for n in range(3):
        name = f"daily/{(monday + timedelta(days=n)).isoformat()}.md"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"## Ops\n- {fact}\n- Rotated log shard {n} by hand.\n")
        names.append(name)
    return names


def _run(*argv: str, err: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), err or io.StringIO()
    code = main(["consolidate", "run", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_report_on_stdout_and_step_lines_on_stderr(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    names = _old_week(root, "The staging database is db-stage-3.")
    code, out, err = _run("--memory-dir", str(root), "--crew-dir", str(tmp_path / "crew"))
    assert code == 0, err
    assert out.startswith("consolidation: 1 period(s), 3 daily note(s) archived")
    assert "promoted to the evergreen file (1):" in out and "db-stage-3" in out
    assert err.splitlines() == [
        "consolidate: 0/1 weeks summarised",
        "consolidate: 1/1 weeks summarised",
        "consolidate: 0/3 notes archived",
        "consolidate: 3/3 notes archived",
    ]
    assert not any((root / name).exists() for name in names)


def test_a_terminal_gets_a_bar_redrawn_in_place(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _old_week(root, "The staging database is db-stage-3.")
    code, out, err = _run("--memory-dir", str(root), "--format", "json", err=Terminal())
    assert code == 0, err
    assert json.loads(out)["archived"]
    lines = err.split("\n")
    assert lines[0].startswith("\r[") and lines[0].endswith("1/1 weeks summarised\x1b[K")
    assert lines[1].count("\r") == 4 and lines[1].endswith("3/3 notes archived\x1b[K")
    first, *_, last = lines[1].split("\r")[1:]
    assert first.startswith(f"[{'.' * BAR_WIDTH}] 0/3") and last.startswith(f"[{'#' * BAR_WIDTH}] 3/3")


def test_the_crew_tier_is_consolidated_into_crew_md(tmp_path: Path) -> None:
    crew = tmp_path / "crew"
    _old_week(crew, "Deploys go through make ship on the bastion host.")
    code, out, err = _run("--crew", "--memory-dir", str(tmp_path / "memory"), "--crew-dir", str(crew))
    assert code == 0, err
    assert "promoted to the evergreen file (1):" in out
    assert "Deploys go through make ship" in (crew / "CREW.md").read_text()
    assert not (tmp_path / "memory" / "AGENT.md").exists()
    assert list((crew / "archive" / "daily").glob("*.md"))


def test_a_dir_a_sidecar_serves_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    names = _old_week(root, "The staging database is db-stage-3.")
    lock = TierLock.take(root)
    try:
        code, out, err = _run("--memory-dir", str(root))
    finally:
        lock.release()
    assert code == 2 and out == ""
    assert "POST /memory/consolidate" in err
    assert all((root / name).exists() for name in names)


def test_a_missing_journal_is_not_created_and_the_report_says_so(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _old_week(root, "The staging database is db-stage-3.")
    code, out, err = _run("--memory-dir", str(root), "--crew-dir", str(tmp_path / "crew"), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert not (root / "journal.sqlite").exists()
    assert report["archived"] and "journal.sqlite does not exist (not created)" in report["no_journal"]
    code, out, err = _run("--memory-dir", str(root), "--crew-dir", str(tmp_path / "crew"))
    assert code == 0 and out.splitlines()[2].startswith("no journal: "), out
    assert not (root / "journal.sqlite").exists()


def test_an_existing_journal_has_its_memories_merged(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    ids = []
    for text, priority in (
        ("Deploys go through make ship on the bastion host", "3"),
        ("deploys go through make ship on the bastion host.", "9"),
    ):
        out, err = io.StringIO(), io.StringIO()
        assert (
            main(["remember", text, "--priority", priority, "--memory-dir", str(root), "--json"], out=out, err=err) == 0
        ), err.getvalue()
        ids.append(json.loads(out.getvalue())["id"])
    assert (root / "journal.sqlite").is_file()
    code, out, err = _run("--memory-dir", str(root), "--crew-dir", str(tmp_path / "crew"), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["no_journal"] is None
    assert [(m["kept"], m["merged"]) for m in report["memories_merged"]] == [(ids[1], [ids[0]])]
