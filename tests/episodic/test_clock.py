"""The journal's timestamps: one fixed text form that sorts as time does, and a clear refusal of a
time no datetime holds."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sidecar.clock import parse_iso, to_iso
from tests.support.memory import ClientFactory


def test_years_before_1000_are_written_with_four_digits_and_sort_before_later_ones() -> None:
    early, late = datetime(999, 5, 1, tzinfo=UTC), datetime(2026, 5, 1, tzinfo=UTC)
    assert to_iso(early) == "0999-05-01T00:00:00.000000Z"
    assert sorted([to_iso(late), to_iso(early)]) == [to_iso(early), to_iso(late)]
    assert parse_iso(to_iso(early)) == early


def test_a_time_past_the_last_utc_instant_is_a_value_error_not_an_overflow() -> None:
    with pytest.raises(ValueError, match="out of range"):
        parse_iso("9999-12-31T23:59:59-14:00")


async def test_the_api_answers_400_for_it(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    late = "9999-12-31T23:59:59-14:00"
    for path, body, code in [
        ("/journal", {"workspace_id": "default", "entry_type": "decision", "summary": "x", "ts": late}, "invalid_ts"),
        ("/memory/remember", {"content": "x", "expires_at": late}, "invalid_expires_at"),
    ]:
        resp = await client.post(path, json=body)
        assert resp.status == 400 and (await resp.json())["error"]["code"] == code
