"""Crash campaign: a writer process is SIGKILLed at random points, again and again.

Each trial forks a child that loops over durable writes (the sidecar's own ``durable_replace``)
to a few memory files and updates the tier index after each (as the reindex worker does), and
reports every acknowledged write on a pipe. The parent kills it with SIGKILL at a random point:
a quarter of the trials a random 5-80 ms after the fork, the others a random 0-20 ms after the
child acknowledged a random number (1-8) of writes, read from the pipe, so a busy host still
sees writes in every such trial. Then it checks, as a restarted sidecar would find things:

- every file holds one complete version (header checksum matches), never torn or empty;
- every acknowledged write is there (the file holds that version or a later one);
- orphan temp files are swept;
- after opening and reconciling the index, it equals the files chunk for chunk.

    python -m tests.support.crash_campaign DIR --trials 1000 [--seed 1]   (prints one JSON summary line)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import sys
import time
from pathlib import Path

from sidecar.index.chunker import chunk_markdown
from sidecar.index.tier_index import TierIndex
from sidecar.write.durable import durable_replace, read_file, sweep_temp_files

FILES = ["AGENT.md", "pins.md", "daily/2026-01-01.md", "topics/deploy.md"]
#: Trials killed on the clock, 5-80 ms after the fork (the writer may still be opening the index);
#: the others are killed a moment after a random number of acknowledged writes, up to this many, so
#: every trial writes something however slow the host is.
EARLY_SHARE = 0.25
MAX_ACKS_BEFORE_KILL = 8


def make_version(vid: int, rng: random.Random) -> bytes:
    paras = [f"para {vid}-{i} " + "lorem ipsum dolor " * rng.randint(1, 40) for i in range(rng.randint(1, 60))]
    body = ("\n\n".join(paras) + "\n").encode()
    return f"# v={vid} len={len(body)} sha={hashlib.sha256(body).hexdigest()}\n".encode() + body


def parse_version(data: bytes) -> int | None:
    """The version id if ``data`` is one complete version, else None (torn, empty, garbage)."""
    head, _, body = data.partition(b"\n")
    try:
        fields = dict(kv.split("=", 1) for kv in head.decode()[2:].split())
        ok = int(fields["len"]) == len(body) and hashlib.sha256(body).hexdigest() == fields["sha"]
    except (ValueError, KeyError, UnicodeDecodeError):
        return None
    return int(fields["v"]) if ok else None


def child(root: Path, ack_fd: int, seed: int, base_id: int) -> None:
    rng = random.Random(seed)
    index = TierIndex(root)
    index.open()
    n = 0
    while True:
        n += 1
        rel = rng.choice(FILES)
        durable_replace(root, rel, make_version(base_id + n, rng), read_file(root, rel))
        os.write(ack_fd, f"{rel} {base_id + n}\n".encode())
        index.apply_paths([rel])


def run_trial(root: Path, trial: int, rng: random.Random, acked: dict[str, int]) -> dict[str, int]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer
        os.close(r)
        try:
            child(root, w, rng.randrange(1 << 30), trial * 1_000_000)
        finally:
            os._exit(1)
    os.close(w)
    acks = b""
    if rng.random() < EARLY_SHARE:  # early in its life: opening the index, or its first writes
        time.sleep(rng.uniform(0.005, 0.08))
    else:  # after its k-th acknowledged write (however long a busy host takes to get there), in the next
        wanted = rng.randint(1, MAX_ACKS_BEFORE_KILL)
        while acks.count(b"\n") < wanted and (chunk := os.read(r, 65536)):
            acks += chunk
        time.sleep(rng.uniform(0, 0.02))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    while chunk := os.read(r, 65536):
        acks += chunk
    os.close(r)
    for line in acks.decode().splitlines():
        rel, vid = line.split()
        acked[rel] = max(acked.get(rel, 0), int(vid))
    return verify(root, acked)


def verify(root: Path, acked: dict[str, int]) -> dict[str, int]:
    out = {"torn": 0, "lost": 0, "orphans": 0, "index_mismatch": 0}
    out["orphans"] = len(sweep_temp_files(root))
    for rel in FILES:
        data = read_file(root, rel)
        if data is None:
            out["lost"] += rel in acked
            continue
        vid = parse_version(data)
        if vid is None:
            out["torn"] += 1
        elif vid < acked.get(rel, 0):
            out["lost"] += 1
    index = TierIndex(root)
    index.open()
    for rel in FILES:
        data = read_file(root, rel)
        want = [(c.heading, c.line_start, c.line_end, c.hash) for c in chunk_markdown(data.decode())] if data else []
        got = index.writer.execute(
            "SELECT heading, line_start, line_end, hash FROM chunks WHERE path = ? ORDER BY ord", (rel,)
        ).fetchall()
        if [tuple(g) for g in got] != want:
            out["index_mismatch"] += 1
            # Enough to diagnose a failure from the test's output alone.
            row = index.writer.execute("SELECT hash, size, mtime_ns FROM files WHERE path = ?", (rel,)).fetchone()
            st = (root / rel).stat() if data is not None else None
            first = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if tuple(g) != w), None)
            print(
                f"index mismatch: {rel}: {len(got)} rows indexed, {len(want)} chunks in the file; first differing "
                f"ord {first}; files row {row}; file size/mtime {st and (st.st_size, st.st_mtime_ns)}; "
                f"integrity {index.integrity}",
                file=sys.stderr,
                flush=True,
            )
    index.close()
    return out


def campaign(root: Path, trials: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    acked: dict[str, int] = {}
    totals = {"trials": 0, "acked_writes": 0, "torn": 0, "lost": 0, "orphans": 0, "index_mismatch": 0}
    for trial in range(1, trials + 1):
        before = dict(acked)
        result = run_trial(root, trial, rng, acked)
        totals["trials"] += 1
        totals["acked_writes"] += sum(1 for k in acked if acked[k] != before.get(k))
        for key, value in result.items():
            totals[key] += value
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("dir", type=Path)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    totals = campaign(args.dir, args.trials, args.seed)
    totals["seconds"] = round(time.perf_counter() - started, 1)  # type: ignore[assignment]
    print(json.dumps(totals), flush=True)
    return 0 if totals["torn"] == totals["lost"] == totals["index_mismatch"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
