"""``memory-sidecar search`` as a whole process, beside what the same answer needs at least.

    python -m tests.bench cli

A generated 2k-chunk memory dir (its index built once before the runs, as a sidecar or an earlier
command leaves it). Each command runs ``CLI_RUNS`` times (default 7), alternating with its limits,
and the median is printed: wall time, and CPU (user + system of the child, every thread, from
``wait4``), the CPU being what moves least on a shared host. The package's bytecode is compiled
first, as an installed package's is. The searches:

- BM25 alone (``MEMORY_SIDECAR_EMBEDDER=none``), the first search of the tier (no file remembered
  clean: the injection scanner is loaded to mark the hits) and a repeated one (the hits' files
  remembered clean by the first);
- the default configuration over a tier with no stored vector (nothing has embedded it yet);
- the default configuration over the same tier with every chunk's vector stored (hybrid).

And the restated way to a hybrid answer from the command line: a fresh process that asks a running
sidecar (the default configuration, over the same tier with every vector stored, its model loaded
and warm) for the same search over HTTP (``urllib``, ``POST /memory/search``): the process's own
CPU, and the sidecar's CPU for the answer (from ``/proc``), next to the same limits; and
``memory-sidecar search`` itself beside that sidecar, which it asks (a new query each run for both);
and the Claude Code hook (``memory-sidecar-hook``) as Claude Code runs it on each prompt, a fresh
process given a ``UserPromptSubmit`` event on stdin that asks the same sidecar to recall for the
prompt (a new prompt each run), beside the bare process asking it.
The searches in the command's own process run with ``--local``.

``CLI_BASELINE=DIR`` (a source tree holding ``sidecar/``, e.g. ``git archive REV sidecar | tar -x -C
DIR``) adds the BM25-alone search run from that tree (its ``sidecar`` package imported first) over
its own copy of the dir (each tree's scanner remembers its own verdicts), in the same rounds as this
tree's, and prints the median of the rounds' differences in CPU.

The limits, each a fresh Python process too: ``python -c pass``; the raw BM25 search (``import
sqlite3``, open the index, the FTS5 ``MATCH`` ranked by ``bm25()``, top 10 rows with their text);
and the raw query embedding (import onnxruntime and tokenizers, load the packaged model file into
a session with default options, tokenize the query, truncated and unpadded as the sidecar does,
and run it once). The BM25 limit is the first
two; the hybrid limit all three (the vectors' scan and the fusion are left out of it).
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sidecar
from sidecar.retrieval.embed.onnx import _model_path
from sidecar.retrieval.offline import CLEAN_FILES
from tests.bench.prepared import embed_memory
from tests.bench.util import report
from tests.support.corpus import make_corpus
from tests.support.procs import cpu_s, start_sidecar

RUNS = int(os.environ.get("CLI_RUNS", "7"))
BASELINE = os.environ.get("CLI_BASELINE", "")
QUERY = "deploy rollback"
BASELINE_CASE = "search, BM25 alone, the CLI_BASELINE tree"
TOKENIZER = Path(sidecar.__file__).parent / "data" / "minilm-tokenizer.json"

RAW_FTS = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute(
    "SELECT c.path, c.body FROM chunks_fts f JOIN chunks c ON c.id = f.rowid WHERE chunks_fts MATCH ? "
    "ORDER BY bm25(chunks_fts) LIMIT 10", (" OR ".join(sys.argv[2].split()),)
).fetchall()
assert rows
"""

RAW_EMBED = """
import sys
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
tok.enable_truncation(max_length=256)
tok.no_padding()
session = ort.InferenceSession(sys.argv[2], providers=["CPUExecutionProvider"])
e = tok.encode(sys.argv[3])
ids = np.array([e.ids], dtype=np.int64)
feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
if "token_type_ids" in {i.name for i in session.get_inputs()}:
    feed["token_type_ids"] = np.zeros_like(ids)
session.run(None, feed)
"""


ASK = """
import json, sys, urllib.request
body = json.dumps({"query": sys.argv[2], "limit": 10}).encode()
req = urllib.request.Request(sys.argv[1] + "/memory/search", data=body, headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=30) as answer:
    assert json.load(answer)["results"]
"""


def run(
    argv: list[str], env: dict[str, str], stdin: bytes | None = None, cwd: str | None = None
) -> tuple[float, float]:
    """(wall s, CPU s of the child and every thread it ran) of one process (``stdin``: written to it;
    ``cwd``: where it runs, so ``python -m sidecar`` imports the package there first)."""
    t0 = time.perf_counter()
    feed = subprocess.PIPE if stdin is not None else subprocess.DEVNULL
    proc = subprocess.Popen(argv, env=env, stdin=feed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    if proc.stdin is not None:
        proc.stdin.write(stdin or b"")
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, (argv, proc.stderr.read() if proc.stderr else b"")
    if proc.stderr is not None:
        proc.stderr.close()
    proc.returncode = 0
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    # An installed package has its bytecode compiled (pip does it at install); a checkout run with
    # PYTHONDONTWRITEBYTECODE keeps stale bytecode for every module edited since, and each command
    # would compile their source again (sidecar/cli.py alone: about 22 ms of CPU).
    compileall.compile_dir(str(Path(sidecar.__file__).parent), quiet=1)
    if BASELINE:
        compileall.compile_dir(str(Path(BASELINE) / "sidecar"), quiet=1)
    base = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        bare, vectors = base / "bare", base / "vectors"
        make_corpus(bare, 2_000)
        shutil.copytree(bare, vectors)
        print(f"# {embed_memory(vectors)}", flush=True)
        env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
        py = sys.executable
        cli = [py, "-m", "sidecar", "search", "--local", QUERY, "-p"]
        for root in (bare, vectors):  # the index exists and is level with the files before any run
            run([*cli, str(root)], {**env, "MEMORY_SIDECAR_EMBEDDER": "none"})
        theirs = base / "bare-baseline"  # the other tree's own copy: its scanner remembers its own verdicts
        if BASELINE:
            shutil.copytree(bare, theirs)
            for _ in range(2):  # its index level and opened once; its hits' files remembered clean
                run([*cli, str(theirs)], {**env, "MEMORY_SIDECAR_EMBEDDER": "none"}, cwd=BASELINE)
        cold = "search, BM25 alone, no file remembered clean (the scanner loaded)"
        cases = {
            cold: ([*cli, str(bare)], {**env, "MEMORY_SIDECAR_EMBEDDER": "none"}),
            "search, BM25 alone": ([*cli, str(bare)], {**env, "MEMORY_SIDECAR_EMBEDDER": "none"}),
            **({BASELINE_CASE: ([*cli, str(theirs)], {**env, "MEMORY_SIDECAR_EMBEDDER": "none"})} if BASELINE else {}),
            "search, default, no vector stored": ([*cli, str(bare)], {**env, "MEMORY_SIDECAR_EMBEDDER": "auto"}),
            "search, default, every vector stored (hybrid)": (
                [*cli, str(vectors)],
                {**env, "MEMORY_SIDECAR_EMBEDDER": "auto"},
            ),
            "limit: python -c pass": ([py, "-c", "pass"], env),
            "limit: raw FTS5 search, fresh process": (
                [py, "-c", RAW_FTS, str(bare / "index.sqlite"), QUERY],
                env,
            ),
            "limit: raw onnxruntime query embedding, fresh process": (
                [py, "-c", RAW_EMBED, str(TOKENIZER), str(_model_path()), QUERY],
                env,
            ),
        }
        side = start_sidecar(
            vectors, env={"MEMORY_SIDECAR_EMBEDDER": "auto", "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"}
        )
        asked = "search through a running sidecar (hybrid), fresh process"
        cases[asked] = ([py, "-c", ASK, side.url, QUERY], env)
        forwarded = "memory-sidecar search, a sidecar serving the dir (hybrid there)"
        cases[forwarded] = (
            [py, "-m", "sidecar", "search", "-p", str(vectors), QUERY],
            {**env, "MEMORY_SIDECAR_EMBEDDER": "auto", "MEMORY_SIDECAR_PORT": str(side.port)},
        )
        hook = "memory-sidecar-hook, a prompt's recall from the same sidecar, fresh process"
        cases[hook] = ([py, "-m", "sidecar.mcp.hooks", "--url", side.url, QUERY], env)  # the query: its prompt

        def prompt_event(prompt: str) -> bytes:
            event = {"session_id": "bench", "transcript_path": str(base / "none.jsonl"), "cwd": str(base)}
            return json.dumps(event | {"hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()

        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        served: dict[str, list[float]] = {asked: [], forwarded: [], hook: []}  # the sidecar's CPU per answer
        try:
            run(cases[asked][0], env)  # the model warm, the query's path in the caches once
            for i in range(RUNS):  # interleaved: each case sees the same host load
                for name, (argv, case_env) in cases.items():
                    if name == cold:
                        (bare / CLEAN_FILES).unlink(missing_ok=True)
                    before = cpu_s(side.proc.pid)
                    if name == hook:
                        wall, cpu = run(argv[:-1], case_env, stdin=prompt_event(f"{QUERY} {i}"))
                    elif name == BASELINE_CASE:
                        wall, cpu = run(argv, case_env, cwd=BASELINE)
                    else:
                        wall, cpu = run([*argv[:-1], f"{QUERY} {i}"] if name in served else argv, case_env)
                    if name in served:  # a new query each time: embedded, never from the cache
                        served[name].append(cpu_s(side.proc.pid) - before)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
        finally:
            side.stop()
        med = {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in cases}
        for name in cases:
            wall, cpu = med[name]
            report(name, f"wall {wall * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms (median of {RUNS})")
        for name, spent in served.items():
            report(
                f"  {name}: the running sidecar's CPU for the answer",
                f"{statistics.median(spent) * 1000:.0f} ms (median of {RUNS}; its model already loaded)",
            )
        bm25_limit = [
            sum(med[n][i] for n in ("limit: python -c pass", "limit: raw FTS5 search, fresh process")) for i in (0, 1)
        ]
        hybrid_limit = [bm25_limit[i] + med["limit: raw onnxruntime query embedding, fresh process"][i] for i in (0, 1)]
        for name, limit in (
            (cold, bm25_limit),
            ("search, BM25 alone", bm25_limit),
            ("search, default, no vector stored", bm25_limit),
            ("search, default, every vector stored (hybrid)", hybrid_limit),
            (asked, bm25_limit),
            (forwarded, bm25_limit),
        ):
            wall, cpu = med[name]
            report(
                f"  {name} / its limit",
                f"CPU {cpu / limit[1]:.1f}x ({limit[1] * 1000:.0f} ms), wall {wall / limit[0]:.1f}x",
                "whole process <= 0.3 s",
            )
        if BASELINE:
            diffs = [a - b for a, b in zip(cpus["search, BM25 alone"], cpus[BASELINE_CASE], strict=True)]
            report(
                f"  search, BM25 alone: this tree - {BASELINE}",
                f"CPU {statistics.median(diffs) * 1000:+.0f} ms (median of the {RUNS} rounds' differences)",
            )
        wall, cpu = med[hook]
        report(
            f"  {hook} / the bare process asking the same sidecar",
            f"CPU {cpu / med[asked][1]:.1f}x ({med[asked][1] * 1000:.0f} ms), wall {wall / med[asked][0]:.1f}x",
        )
        report("  load average (1 min) at the end", f"{os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
