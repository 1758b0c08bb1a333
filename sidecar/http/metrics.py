"""Prometheus metrics for one sidecar app, served as text at ``GET /metrics``.

Every app gets its own ``CollectorRegistry`` (never the global default), so two apps in one
process never share a counter. Request latency and error codes are recorded by a middleware;
queue depth, index lag and write totals are read from the app's own objects at scrape time, so
nothing has to push them. Search latency by scope and reindex durations are pushed by the code
that knows them, through ``observe_search`` and ``observe_reindex``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from sidecar.http.state import SIDECAR

__all__ = ["HANDLERS", "METRICS", "Metrics", "metrics_middleware", "setup_metrics"]

PREFIX = "memory_sidecar"
# Searches and small reindexes are sub-millisecond to a few ms; full rebuilds can take seconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
REINDEX_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0)
# Anything else a client sends is labelled "other", so a fuzzer cannot blow up the label space.
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
_UNMATCHED = "unmatched"
_CLIENT_GONE = 499  # nginx's convention for "client closed the request"


class Metrics:
    """The sidecar's metrics, all registered in one registry private to this app."""

    def __init__(self, app: web.Application) -> None:
        self.registry = CollectorRegistry()
        reg = self.registry
        self.search_seconds = Histogram(
            f"{PREFIX}_search_seconds", "Search latency by scope", ["scope"], registry=reg, buckets=LATENCY_BUCKETS
        )
        self.request_seconds = Histogram(
            f"{PREFIX}_http_request_seconds",
            "HTTP request latency by method, route template and status",
            ["method", "route", "status"],
            registry=reg,
            buckets=LATENCY_BUCKETS,
        )
        self.errors = Counter(f"{PREFIX}_errors", "Error responses by error code", ["code"], registry=reg)
        self.reindex_seconds = Histogram(
            f"{PREFIX}_reindex_seconds",
            "Index update duration by tier and kind (rebuild, apply, reconcile)",
            ["tier", "kind"],
            registry=reg,
            buckets=REINDEX_BUCKETS,
        )
        self.embedder_state = Gauge(
            f"{PREFIX}_embedder_state",
            "1 for the embedder's current state, 0 for states it left",
            ["state"],
            registry=reg,
        )
        self.embedder_backlog = Gauge(f"{PREFIX}_embedder_backlog", "Chunks waiting for an embedding", registry=reg)
        reg.register(_LiveState(app))
        ProcessCollector(registry=reg)
        self._embedder_states: set[str] = set()
        # labels() validates and locks on every call; the label sets here are few and fixed.
        self._request_children: dict[tuple[str, str, int], Any] = {}
        self._search_children: dict[str, Any] = {}

    def observe_search(self, scope: str, seconds: float) -> None:
        child = self._search_children.get(scope)
        if child is None:
            child = self._search_children[scope] = self.search_seconds.labels(scope=scope)
        child.observe(seconds)

    def observe_reindex(self, tier: str, kind: str, seconds: float) -> None:
        self.reindex_seconds.labels(tier=tier, kind=kind).observe(seconds)

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        method = method if method in _METHODS else "other"
        key = (method, route, status)
        child = self._request_children.get(key)
        if child is None:
            child = self._request_children[key] = self.request_seconds.labels(
                method=method, route=route, status=str(status)
            )
        child.observe(seconds)

    def count_error(self, code: str) -> None:
        self.errors.labels(code=code).inc()

    def set_embedder(self, state: str, backlog: int) -> None:
        """Record the embedder's state (e.g. ready, degraded, off) and how many chunks wait for it."""
        self._embedder_states.add(state)
        for known in self._embedder_states:
            self.embedder_state.labels(state=known).set(1 if known == state else 0)
        self.embedder_backlog.set(backlog)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _LiveState(Collector):
    """Queue and write figures read from the app at scrape time (absent until the app started)."""

    def __init__(self, app: web.Application) -> None:
        self._app = app

    def collect(self) -> Iterable[Metric]:
        sidecar = self._app.get(SIDECAR)
        if sidecar is None:
            return
        queue, writes = sidecar.queue, sidecar.writes
        yield GaugeMetricFamily(f"{PREFIX}_queue_pending", "Reindex queue items not yet applied", queue.pending)
        yield GaugeMetricFamily(
            f"{PREFIX}_index_lag_seconds", "Age of the oldest unapplied reindex item", queue.lag_ms() / 1000
        )
        yield GaugeMetricFamily(f"{PREFIX}_indexed_seq", "Sequence number of the last applied item", queue.indexed_seq)
        yield CounterMetricFamily(f"{PREFIX}_reindex_errors", "Reindex queue items that failed", queue.errors)
        yield CounterMetricFamily(f"{PREFIX}_writes", "Durable memory writes (every entry point)", writes.count)
        yield CounterMetricFamily(
            f"{PREFIX}_write_file_bytes", "Sum of the written files' sizes after each write", writes.bytes
        )


METRICS: web.AppKey[Metrics] = web.AppKey("metrics", Metrics)


def setup_metrics(app: web.Application) -> Metrics:
    """Give ``app`` its own metrics and put the recording middleware outermost (it sees final statuses)."""
    metrics = Metrics(app)
    app[METRICS] = metrics
    app.middlewares.insert(0, metrics_middleware)
    return metrics


@web.middleware
async def metrics_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Time every request by route template; count error responses by their JSON error code."""
    metrics = request.app[METRICS]
    started = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        if status >= 400:
            metrics.count_error(_error_code(response))
        return response
    except web.HTTPException as exc:  # below 400 only: the error middleware answers the rest
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = _CLIENT_GONE
        raise
    finally:
        metrics.observe_request(request.method, _route(request), status, time.perf_counter() - started)


def _route(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else _UNMATCHED


def _error_code(response: web.StreamResponse) -> str:
    fallback = f"http_{response.status}"
    body = response.body if isinstance(response, web.Response) else None
    if not isinstance(body, bytes):
        return fallback
    try:
        payload: Any = json.loads(body)
    except ValueError:
        return fallback
    error = payload.get("error") if isinstance(payload, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) and code else fallback


async def metrics_route(request: web.Request) -> web.Response:
    # On the loop, not a thread: the scrape-time collector reads the queue, which is loop-only state.
    return web.Response(body=request.app[METRICS].render(), headers={"Content-Type": CONTENT_TYPE_LATEST})


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "metrics": metrics_route,
}
