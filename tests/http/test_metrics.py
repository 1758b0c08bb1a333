"""GET /metrics: real traffic on a real sidecar, scraped and parsed as Prometheus text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.http.metrics import METRICS
from sidecar.http.state import SIDECAR
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.metrics import scrape, value


async def _client(aiohttp_client: Any, settings: Settings) -> TestClient[Any, Any]:
    app = create_app(settings)  # wires the metrics middleware and /metrics itself
    client: TestClient[Any, Any] = await aiohttp_client(app)
    return client


async def test_real_traffic_is_counted(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client = await _client(aiohttp_client, make_settings())
    for query in ("postgres", "sqlite", "invoices"):
        assert (await client.post("/memory/search", json={"query": query})).status == 200
    for text in ("first note", "second note, a little longer"):
        resp = await client.post("/memory/write", json={"path": "daily/2026-05-15.md", "content": text})
        assert resp.status == 201
    last = await resp.json()
    assert (await client.post("/memory/search", json={"query": "note", "after_seq": last["seq"]})).status == 200
    assert (await client.post("/memory/search", json={})).status == 400
    assert (await client.get("/healthz/nope")).status == 404
    assert (await client.get("/memory/search")).status == 405

    s = await scrape(client)
    route = "memory_sidecar_http_request_seconds_count"
    assert value(s, route, method="POST", route="/memory/search", status="200") == 4
    assert value(s, route, method="POST", route="/memory/search", status="400") == 1
    assert value(s, route, method="POST", route="/memory/write", status="201") == 2
    assert value(s, route, method="GET", route="unmatched", status="404") == 1
    assert value(s, "memory_sidecar_errors_total", code="missing_query") == 1
    assert value(s, "memory_sidecar_errors_total", code="not_found") == 1
    assert value(s, "memory_sidecar_errors_total", code="method_not_allowed") == 1
    assert value(s, "memory_sidecar_writes_total") == 2
    file_bytes = (memory_dir / "daily/2026-05-15.md").stat().st_size
    assert value(s, "memory_sidecar_write_file_bytes_total") == len(b"first note") + file_bytes
    assert value(s, "memory_sidecar_indexed_seq") == last["seq"]
    assert value(s, "memory_sidecar_queue_pending") == 0
    assert value(s, "memory_sidecar_index_lag_seconds") == 0
    assert value(s, "process_resident_memory_bytes") > 1_000_000


async def test_two_apps_do_not_share_counters(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, tmp_path: Path
) -> None:
    busy = await _client(aiohttp_client, make_settings())
    quiet = await _client(aiohttp_client, make_settings(memory_dir=tmp_path / "other"))
    for _ in range(3):
        await busy.post("/memory/search", json={})
    _observe_search(busy, "agent", 0.002)  # the sidecar reports to its own app's metrics
    busy_s, quiet_s = await scrape(busy), await scrape(quiet)
    assert value(busy_s, "memory_sidecar_errors_total", code="missing_query") == 3
    assert value(quiet_s, "memory_sidecar_errors_total", code="missing_query") == 0
    assert value(busy_s, "memory_sidecar_search_seconds_count", scope="agent") == 1
    assert value(quiet_s, "memory_sidecar_search_seconds_count", scope="agent") == 0


async def test_pushed_observations_land_in_their_buckets(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client = await _client(aiohttp_client, make_settings())
    _observe_search(client, "both", 0.003)
    _observe_search(client, "both", 0.2)
    applied = client.app[SIDECAR].queue.on_applied
    assert applied is not None
    applied("agent", "rebuild", 1.5)
    s = await scrape(client)
    assert value(s, "memory_sidecar_search_seconds_count", scope="both") == 2
    assert value(s, "memory_sidecar_search_seconds_bucket", scope="both", le="0.005") == 1
    assert value(s, "memory_sidecar_search_seconds_bucket", scope="both", le="0.25") == 2
    assert abs(value(s, "memory_sidecar_search_seconds_sum", scope="both") - 0.203) < 1e-9
    assert value(s, "memory_sidecar_reindex_seconds_bucket", tier="agent", kind="rebuild", le="1.0") == 0
    assert value(s, "memory_sidecar_reindex_seconds_bucket", tier="agent", kind="rebuild", le="5.0") == 1


async def test_embedder_state_is_one_hot(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client = await _client(aiohttp_client, make_settings())
    client.app[METRICS].set_embedder("ready", 0)
    client.app[METRICS].set_embedder("degraded", 17)
    s = await scrape(client)
    assert value(s, "memory_sidecar_embedder_state", state="degraded") == 1
    assert value(s, "memory_sidecar_embedder_state", state="ready") == 0
    assert value(s, "memory_sidecar_embedder_backlog") == 17


async def test_hostile_paths_and_methods_do_not_grow_the_label_space(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client = await _client(aiohttp_client, make_settings())
    for i in range(20):
        assert (await client.get(f"/random/{i}")).status == 404
    assert (await client.request("TRACE", "/memory/search")).status == 405
    s = await scrape(client)
    routes = {dict(labels)["route"] for name, labels in s if name == "memory_sidecar_http_request_seconds_count"}
    assert routes == {"unmatched"}  # a 404 or 405 matched no route template: one series, not one per path
    assert value(s, "memory_sidecar_http_request_seconds_count", method="other", route="unmatched", status="405") == 1
    assert value(s, "memory_sidecar_http_request_seconds_count", method="GET", route="unmatched", status="404") == 20


def _observe_search(client: Any, scope: str, seconds: float) -> None:
    """What the search service reports after a search, through the hook the sidecar was opened with."""
    observe = client.app[SIDECAR].search.on_search
    assert observe is not None
    observe(scope, seconds)
