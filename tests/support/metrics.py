"""Scraping ``GET /metrics`` in tests: Prometheus text parsed into samples."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "scrape", "value"]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(client: TestClient[Any, Any]) -> Samples:
    resp = await client.get("/metrics")
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("text/plain")
    out: Samples = {}
    for family in text_string_to_metric_families(await resp.text()):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)
