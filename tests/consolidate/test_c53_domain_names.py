"""A name written as its web domain or with its language's suffix ("fly.io", "checkout.com",
"next.js") is a name of the same kind as a name of letters, so a tool given anew by its domain
changes the tool it replaces (``changes._kind``); a path, a version or a host of several dots is
still another kind of value."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.changes import _kind
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said
from tests.support.said import changed_after, said_on

START = date(2026, 5, 4)
FACTS = [
    "Kiln firings are logged by Pembury Thermal.",
    "Glaze powders come from Tregarn Supplies.",
    "The studio alarm code is held by Ottoline Vance.",
]


def _said(*lines: tuple[int, str]) -> list[Said]:
    return said_on(START, FACTS, *lines)


def _changed(old: str, new: str) -> dict[str, Said]:
    return changed_after(START, FACTS, old, new)


def test_a_name_given_as_its_domain_is_a_name() -> None:
    for word in ("fly.io", "checkout.com", "next.js", "Render.com"):
        assert _kind(word) == _kind("heroku") == "name"
    for word in ("wiki.acme.dev", "v2.1", "3.12", "db/migrations", "tf-state-eu", "a.b"):
        assert _kind(word) != "name"


def test_a_tool_given_anew_by_its_domain_changes_the_tool_it_replaces() -> None:
    old = "The booking portal is hosted on Pagewell."
    new = "Booking portal lives on Launchly.io."
    assert _changed(old, new)[normalised(old)].text == new
