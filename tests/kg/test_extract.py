"""The deterministic extractor on its own: what each pattern reads, and time linear in the text."""

from __future__ import annotations

import random
import string
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.kg import extract as extract_module
from sidecar.kg.extract import extract
from sidecar.kg.names import entity_key

NOTE = """# Stack

PostgreSQL 16 is the baseline.

- We moved from PostgreSQL to CockroachDB on 2026-03-01.
- The api uses Redis for sessions.
- Alice owns the auth module.
- The search service is owned by Dan.
- Bob moved to Berlin last year.
- Kafka replaced RabbitMQ.

## Billing service
Owner: Carol

| service | owner |
|---|---|
| ledger | Erin |

```
The fenced api uses Nothing.
```

### Nate
I just adopted Max!
"""


def test_each_pattern() -> None:
    found = [(f.subject, f.predicate, f.object, f.valid_from) for f in extract(NOTE, "daily/2026-01-10.md")]
    day = "2026-01-10"
    assert found == [
        ("we", "uses", "PostgreSQL 16", day),
        ("we", "uses", "CockroachDB", "2026-03-01"),
        ("CockroachDB", "replaced", "PostgreSQL", "2026-03-01"),
        ("api", "uses", "Redis", day),
        ("auth module", "owner", "Alice", day),
        ("search service", "owner", "Dan", day),
        ("Bob", "located in", "Berlin", day),
        ("Kafka", "replaced", "RabbitMQ", day),
        ("Billing service", "owner", "Carol", day),
        ("ledger", "owner", "Erin", day),
        ("Nate", "adopted", "Max", day),
    ]
    move = next(f for f in extract(NOTE) if f.valid_from == "2026-03-01" and f.predicate == "uses")
    assert move.replaces == "PostgreSQL" and move.functional and move.line == 5


def test_keys_and_aliases() -> None:
    assert entity_key("PostgreSQL 16") == entity_key("Postgres") == entity_key("pg") == "postgresql"
    assert entity_key("Python 3.11") == "python"
    assert entity_key("Sprint 43") != entity_key("Sprint 44")
    assert entity_key("service-1") != entity_key("service-2")


@pytest.mark.parametrize(
    "text",
    [
        "0" * 200_000,
        "a." * 100_000,
        "A uses " * 30_000,
        " ".join("x" * 39 for _ in range(5000)),
        ". ".join("We moved from A to B and the api uses C" for _ in range(5000)),
        "".join(random.Random(7).choices(string.printable, k=200_000)),
    ],
    ids=["digits", "dotted", "uses-chain", "long-words", "many-sentences", "printable"],
)
def test_time_stays_linear_on_hostile_text(text: str) -> None:
    started = time.process_time()
    extract(text)
    assert time.process_time() - started < 3.0  # 200 kB: a quadratic pattern would take minutes


# -- the verb check before each pattern ------------------------------------------------------------
VERBS = [
    "uses", "use", "is using", "runs on", "relies on", "depends on", "owns", "maintains", "is owned by",
    "moved to", "moved from", "migrated from", "switched from", "replaced", "with", "to", "lives in",
    "is based in", "is the baseline", "is our default", "aka", "also known as", "adopted", "joined",
    "went to", "signed up for", "left", "won",
]  # fmt: skip
NAMES = ["We", "I", "The team", "Redis", "the api", "PostgreSQL 16", "Berlin", "Alice", "our ledger service"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VERBS + NAMES + [".", ",", "on 2026-03-01", "yesterday"]), max_size=14))
def test_the_verb_check_leaves_every_fact_the_patterns_read(words: list[str]) -> None:
    """A sentence is run through a pattern only if it holds one of the pattern's verbs: the facts
    are those of every pattern run on every sentence."""
    text = "### Joanna\n" + " ".join(words) + "\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(extract_module, "_says", lambda sentence, words: True)
        everything = extract(text, "daily/2026-05-01.md")
    assert extract(text, "daily/2026-05-01.md") == everything
