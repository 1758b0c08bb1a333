"""Queries for tests and benchmarks that need ones no memory answers."""

from __future__ import annotations

import random
import string

__all__ = ["nonsense"]


def nonsense(count: int = 300, seed: int = 18) -> list[str]:
    """``qwxzyv`` and then, in turn, random letters, made-up pronounceable words, keyboard mashes and
    random letters and digits: queries no memory holds an answer to."""
    rng = random.Random(seed)
    letters, consonants, vowels = string.ascii_lowercase, "bcdfghjklmnpqrstvwxz", "aeiouy"
    rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    out = ["qwxzyv"]
    while len(out) < count:
        kind = len(out) % 4
        if kind == 0:
            out.append("".join(rng.choice(letters) for _ in range(rng.randint(4, 12))))
        elif kind == 1:
            words = rng.randint(1, 3)
            out.append(
                " ".join(
                    "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))
                    for _ in range(words)
                )
            )
        elif kind == 2:
            row = rng.choice(rows)
            start = rng.randint(0, len(row) - 4)
            mash = row[start : start + rng.randint(4, len(row) - start)]
            out.append(mash if rng.random() < 0.5 else f"{mash} {rng.choice(rows)[: rng.randint(3, 6)]}")
        else:
            pool = letters + letters.upper() + string.digits
            out.append("".join(rng.choice(pool) for _ in range(rng.randint(5, 14))))
    return out
