"""Searches on three threads while the writer thread rebuilds the index file over and over, which
closes every reader connection each time. Run as a script by tests/index/test_tier_index.py: a connection
closed under a running statement is a use-after-free in SQLite (a segfault), not an exception, so
it must run in its own process. It runs until the writer has rebuilt REBUILDS times while the
readers answered over 100 searches (by count, not by the clock: a busy host only makes it slower),
or 90 s have gone by.  python -m tests.support.race_stress DIR REBUILDS"""

import sqlite3
import sys
import threading
import time
from pathlib import Path

from sidecar.index.tier_index import TierIndex
from tests.support.corpus import make_corpus, make_queries

root = Path(sys.argv[1])
if not (root / "daily").exists():
    make_corpus(root, 600, seed=2)
ix = TierIndex(root)
ix.open(postings=True)
wanted = int(sys.argv[2])
deadline = time.monotonic() + 90.0
done = threading.Event()
queries = make_queries(200, seed=5)
errors = {"db": 0, "ok": 0}


def reader(n: int) -> None:
    i = 0
    while not done.is_set():
        i += 1
        try:
            ix.search(queries[(i * 7 + n) % len(queries)], 10)
            ix.status()
            errors["ok"] += 1
        except sqlite3.DatabaseError:
            errors["db"] += 1  # a closed connection or a file being replaced: the server heals these


threads = [threading.Thread(target=reader, args=(n,)) for n in range(3)]
for t in threads:
    t.start()
rebuilds = 0
while (rebuilds < wanted or errors["ok"] <= 100) and time.monotonic() < deadline:
    ix._rebuild_from_files("stress")  # closes every reader connection while readers run
    rebuilds += 1
done.set()
for t in threads:
    t.join()
ix.close()
print("rebuilds", rebuilds, "searches", errors["ok"], "database errors", errors["db"])
