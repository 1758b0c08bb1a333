"""A week's summary has a bound of its own: its sections share what one section of standing lines
and its log may hold, however many sections the week's notes have. The bound counts what a part
writes (``shared``'s ``sizes``: its heading, its comment, each line's ``###`` title), not its lines
alone.

Each section (a part: its title, its clusters, the characters it is allowed) takes what it needs
up to its own allowance while the parts together fit the week's bound; when they do not, the bound
is shared in proportion to the allowances, a part needing less than its share leaving the rest to
the others (so a section of two facts keeps both, and a long log gives way). What a part's
allowance leaves out stays in the archived notes, which search reads, and is reported as left out
over the budget. A week written in one section is never cut by it: its allowance is the bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.consolidate.cluster import Cluster

__all__ = ["Part", "needed", "shared"]

Part = tuple[str, list[Cluster], int]


def needed(members: Sequence[Cluster]) -> int:
    """The characters a part's lines take written whole, one a line."""
    return sum(len(c.kept.text) + 1 for c in members)


def shared(parts: Sequence[Part], bound: int, sizes: Sequence[int] | None = None) -> list[Part]:
    """``parts`` with their allowances cut so that together they ask for at most ``bound``
    characters (module docstring); unchanged when they fit. ``sizes`` are the characters each part
    writes whole (its lines with its heading and titles; ``needed`` without them), in the units of
    the allowances and the bound."""
    whole = list(sizes) if sizes is not None else [needed(members) for _, members, _ in parts]
    wants = [min(size, allowed) for size, (_, _, allowed) in zip(whole, parts, strict=True)]
    if sum(wants) <= bound:
        return list(parts)
    given = [0] * len(parts)
    open_ = [n for n, want in enumerate(wants) if want > 0]
    left = bound
    while open_:
        weight = sum(parts[n][2] for n in open_)
        met = [n for n in open_ if wants[n] * weight <= left * parts[n][2]]
        if not met:  # every part wants more than its share: each gets its share
            for n in open_:
                given[n] = left * parts[n][2] // weight
            break
        for n in met:
            given[n] = wants[n]
            left -= wants[n]
        open_ = [n for n in open_ if n not in met]
    return [(title, members, given[n]) for n, (title, members, _) in enumerate(parts)]
