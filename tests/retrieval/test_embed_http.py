"""The Ollama and OpenAI-compatible embedders against a real local aiohttp server, plus Backoff.

The server speaks real HTTP; each test gives it the behaviour under test (good answers, 429 with
Retry-After, 500, a hang, garbage). Connection refused is real too: a port nobody listens on.
"""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import numpy as np
import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from sidecar.errors import ConfigError
from sidecar.retrieval.embed import (
    Backoff,
    EmbedderError,
    EmbedderUnavailable,
    OllamaEmbedder,
    OpenAIEmbedder,
    Vectors,
    make_embedder,
)
from sidecar.retrieval.embed.factory import ollama_url
from sidecar.retrieval.embed.openai import embeddings_url
from sidecar.retrieval.embed.retry import parse_retry_after
from sidecar.settings import Settings
from tests.support.lag import PathStopwatch

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The tests that judge an answer wait for it: a guard against a hang, never a measure (the fake
#: server runs on the test's own loop, which a busy host can hold for longer than a short limit).
ANSWER = httpx.Timeout(60.0)
#: Where a hang is the claim: the read gives up after 0.3 s; the connect to the in-process server is
#: not under test.
HUNG = httpx.Timeout(0.3, connect=60.0)


def fake_vector(text: str) -> list[float]:
    """Deterministic, deliberately not unit-length, so the adapter's normalisation shows."""
    return [float(len(text)), 2.0, float(sum(map(ord, text)) % 7)]


class FakeServer:
    """A real aiohttp server whose single embedding route runs whatever handler the test sets."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.handler: Handler = self.ollama_ok
        self.release = asyncio.Event()
        self.url = ""

    async def route(self, request: web.Request) -> web.StreamResponse:
        self.headers.append(dict(request.headers))
        return await self.handler(request)

    async def body(self, request: web.Request) -> dict[str, Any]:
        payload: dict[str, Any] = await request.json()
        self.requests.append(payload)
        return payload

    async def ollama_ok(self, request: web.Request) -> web.StreamResponse:
        payload = await self.body(request)
        return web.json_response({"model": payload["model"], "embeddings": [fake_vector(t) for t in payload["input"]]})

    async def openai_shuffled(self, request: web.Request) -> web.StreamResponse:
        payload = await self.body(request)
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(payload["input"])
        ]
        return web.json_response({"object": "list", "data": data[::-1], "model": payload["model"]})

    async def hang(self, request: web.Request) -> web.StreamResponse:
        await self.body(request)
        await asyncio.wait_for(self.release.wait(), timeout=10)
        return web.json_response({})


@pytest.fixture
async def server(aiohttp_server: AiohttpServer) -> AsyncIterator[FakeServer]:
    fake = FakeServer()
    app = web.Application()
    app.router.add_post("/api/embed", fake.route)
    app.router.add_post("/v1/embeddings", fake.route)
    test_server = await aiohttp_server(app)
    fake.url = str(test_server.make_url("")).rstrip("/")
    yield fake
    fake.release.set()


def reply(status: int, body: str = "", headers: dict[str, str] | None = None) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, text=body, headers=headers, content_type="application/json")

    return handler


def unit(rows: list[list[float]]) -> Vectors:
    a = np.asarray(rows, dtype=np.float32)
    normalised: Vectors = a / np.linalg.norm(a, axis=1, keepdims=True)
    return normalised


@pytest.fixture
async def ollama(server: FakeServer) -> AsyncIterator[OllamaEmbedder]:
    embedder = OllamaEmbedder(server.url, "nomic-embed-text", timeout=ANSWER)
    yield embedder
    await embedder.aclose()


@pytest.fixture
async def openai(server: FakeServer) -> AsyncIterator[OpenAIEmbedder]:
    server.handler = server.openai_shuffled
    embedder = OpenAIEmbedder(server.url, "sk-test", "text-embedding-3-small", timeout=ANSWER)
    yield embedder
    await embedder.aclose()


# ---- Ollama -------------------------------------------------------------------------------------


async def test_ollama_happy_path(server: FakeServer, ollama: OllamaEmbedder) -> None:
    assert ollama.model_id == "ollama:nomic-embed-text"
    assert ollama.dim == 0
    texts = ["alpha", "beta gamma", ""]
    vectors = await ollama.embed(texts)
    assert vectors.dtype == np.float32
    assert np.allclose(vectors, unit([fake_vector(t) for t in texts]), atol=1e-6)
    assert ollama.dim == 3
    assert server.requests == [{"model": "nomic-embed-text", "input": texts, "truncate": True}]


async def test_ollama_batches_and_keeps_order(server: FakeServer) -> None:
    embedder = OllamaEmbedder(server.url, "m", timeout=ANSWER, batch_size=2)
    try:
        texts = [f"text number {i}" for i in range(5)]
        vectors = await embedder.embed(texts)
    finally:
        await embedder.aclose()
    assert [r["input"] for r in server.requests] == [texts[0:2], texts[2:4], texts[4:5]]
    assert np.allclose(vectors, unit([fake_vector(t) for t in texts]), atol=1e-6)


async def test_ollama_empty_batch_makes_no_request(server: FakeServer, ollama: OllamaEmbedder) -> None:
    assert (await ollama.embed([])).shape == (0, 0)
    assert server.requests == []


async def test_ollama_width_must_match_the_hint(server: FakeServer) -> None:
    embedder = OllamaEmbedder(server.url, "m", timeout=ANSWER, dim=768)
    try:
        assert embedder.dim == 768
        with pytest.raises(EmbedderError, match="expected width 768, got 3"):
            await embedder.embed(["x"])
    finally:
        await embedder.aclose()


async def test_ollama_429_retry_after_seconds(server: FakeServer, ollama: OllamaEmbedder) -> None:
    server.handler = reply(429, '{"error": "busy"}', {"Retry-After": "7"})
    with pytest.raises(EmbedderUnavailable, match="HTTP 429") as caught:
        await ollama.embed(["x"])
    assert caught.value.retry_after == 7.0


async def test_ollama_429_retry_after_http_date(server: FakeServer, ollama: OllamaEmbedder) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    server.handler = reply(429, "", {"Retry-After": format_datetime(when, usegmt=True)})
    with pytest.raises(EmbedderUnavailable) as caught:
        await ollama.embed(["x"])
    assert caught.value.retry_after is not None
    assert 27 <= caught.value.retry_after <= 30


async def test_ollama_500_is_unavailable(server: FakeServer, ollama: OllamaEmbedder) -> None:
    server.handler = reply(500, '{"error": "llama runner process has terminated"}')
    with pytest.raises(EmbedderUnavailable, match="runner process") as caught:
        await ollama.embed(["x"])
    assert caught.value.retry_after is None


async def test_ollama_unknown_model_is_an_error_not_an_outage(server: FakeServer, ollama: OllamaEmbedder) -> None:
    server.handler = reply(404, '{"error": "model \\"nomic-embed-text\\" not found, try pulling it first"}')
    with pytest.raises(EmbedderError, match="not found") as caught:
        await ollama.embed(["x"])
    assert not isinstance(caught.value, EmbedderUnavailable)


async def test_ollama_hang_past_read_timeout_is_unavailable_quickly(server: FakeServer) -> None:
    server.handler = server.hang
    ollama = OllamaEmbedder(server.url, "nomic-embed-text", timeout=HUNG)
    try:
        watch = PathStopwatch()  # the wall clock less this thread's run-queue wait: a busy host's share
        with pytest.raises(EmbedderUnavailable, match="ReadTimeout"):
            await ollama.embed(["x"])
        assert watch.own() < 2.0, (watch.own(), watch.wall())
    finally:
        await ollama.aclose()


async def test_connection_refused_is_unavailable() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    for embedder in (
        OllamaEmbedder(f"http://127.0.0.1:{port}", "m", timeout=ANSWER),
        OpenAIEmbedder(f"http://127.0.0.1:{port}", "", "m", timeout=ANSWER),
    ):
        try:
            with pytest.raises(EmbedderUnavailable, match="cannot reach"):
                await embedder.embed(["x"])
        finally:
            await embedder.aclose()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("this is {not json", "not JSON"),
        ('{"embeddings": [[1.0, 2.0]]}', "asked for 2 embeddings, got 1"),
        ('{"embeddings": [[1.0, 2.0], [1.0]]}', "not a numeric matrix"),
        ('{"embeddings": [["1", "2"], ["3", "4"]]}', "not a numeric matrix"),
        ('{"embeddings": [[0.0, 0.0], [1.0, 2.0]]}', "zero or not finite"),
        ('{"embedding": [1.0]}', "no 'embeddings'"),
        ("[1, 2]", "no 'embeddings'"),
    ],
)
async def test_ollama_malformed_answers_are_errors(
    server: FakeServer, ollama: OllamaEmbedder, body: str, message: str
) -> None:
    server.handler = reply(200, body)
    with pytest.raises(EmbedderError, match=message) as caught:
        await ollama.embed(["a", "b"])
    assert not isinstance(caught.value, EmbedderUnavailable)


async def test_a_shared_client_is_left_open(server: FakeServer) -> None:
    async with httpx.AsyncClient() as client:
        embedder = OllamaEmbedder(server.url, "m", client, timeout=ANSWER)
        await embedder.embed(["x"])
        await embedder.aclose()
        assert not client.is_closed
        await embedder.embed(["y"])


# ---- OpenAI-compatible --------------------------------------------------------------------------


async def test_openai_happy_path_reorders_by_index(server: FakeServer, openai: OpenAIEmbedder) -> None:
    texts = ["first", "second text", "third, longer text"]
    vectors = await openai.embed(texts)
    assert np.allclose(vectors, unit([fake_vector(t) for t in texts]), atol=1e-6)
    assert openai.model_id == "openai:text-embedding-3-small"
    assert openai.dim == 3
    assert server.requests == [{"input": texts, "model": "text-embedding-3-small"}]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


async def test_openai_base_url_with_v1_and_no_key(server: FakeServer) -> None:
    server.handler = server.openai_shuffled
    embedder = OpenAIEmbedder(server.url + "/v1/", "", "local-model", timeout=ANSWER)
    try:
        assert (await embedder.embed(["x", "y"])).shape == (2, 3)
    finally:
        await embedder.aclose()
    assert "Authorization" not in server.headers[0]
    assert embeddings_url("http://h/v1") == embeddings_url("http://h/") == "http://h/v1/embeddings"


async def test_openai_429_with_http_date_and_503(server: FakeServer, openai: OpenAIEmbedder) -> None:
    when = datetime.now(UTC) + timedelta(seconds=120)
    server.handler = reply(429, '{"error": {"message": "Rate limit"}}', {"retry-after": format_datetime(when, True)})
    with pytest.raises(EmbedderUnavailable, match="Rate limit") as caught:
        await openai.embed(["x"])
    assert caught.value.retry_after is not None
    assert 117 <= caught.value.retry_after <= 120
    server.handler = reply(503, "overloaded")
    with pytest.raises(EmbedderUnavailable, match="HTTP 503"):
        await openai.embed(["x"])


async def test_openai_hang_is_unavailable(server: FakeServer) -> None:
    server.handler = server.hang
    openai = OpenAIEmbedder(server.url, "sk-test", "text-embedding-3-small", timeout=HUNG)
    try:
        with pytest.raises(EmbedderUnavailable, match="ReadTimeout"):
            await openai.embed(["x"])
    finally:
        await openai.aclose()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('[{"index": 0, "embedding": [1.0]}]', "asked for 2 embeddings, got 1"),
        ('[{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]', "repeated 'index'"),
        ('[{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [2.0]}]', "bad or repeated"),
        ('[{"index": 0, "embedding": [1.0]}, {"index": true, "embedding": [2.0]}]', "bad or repeated"),
        ('[{"index": 0, "embedding": [1.0]}, {"index": 1}]', "missing 'embedding'"),
        ('[{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]', "numeric matrix"),
        ('{"oops": 1}', "no 'data' list"),
    ],
)
async def test_openai_malformed_answers_are_errors(
    server: FakeServer, openai: OpenAIEmbedder, data: str, message: str
) -> None:
    server.handler = reply(200, '{"data": ' + data + "}")
    with pytest.raises(EmbedderError, match=message) as caught:
        await openai.embed(["a", "b"])
    assert not isinstance(caught.value, EmbedderUnavailable)


async def test_openai_garbage_json_and_unauthorised(server: FakeServer, openai: OpenAIEmbedder) -> None:
    server.handler = reply(200, "<html>proxy error</html>")
    with pytest.raises(EmbedderError, match="not JSON"):
        await openai.embed(["x"])
    server.handler = reply(401, '{"error": {"message": "Incorrect API key"}}')
    with pytest.raises(EmbedderError, match="HTTP 401") as caught:
        await openai.embed(["x"])
    assert not isinstance(caught.value, EmbedderUnavailable)


# ---- factory ------------------------------------------------------------------------------------


async def test_factory_builds_http_embedders_that_talk_to_the_server(server: FakeServer) -> None:
    assert make_embedder(Settings(embedder="none")) is None
    host = server.url.removeprefix("http://")
    ollama = make_embedder(Settings(embedder="ollama", ollama_host=host, ollama_model="nomic-embed-text"))
    assert isinstance(ollama, OllamaEmbedder)
    try:
        assert (await ollama.embed(["x"])).shape == (1, 3)
    finally:
        await ollama.aclose()
    openai = make_embedder(Settings(embedder="openai", openai_base_url=server.url, openai_model="m"))
    assert isinstance(openai, OpenAIEmbedder)
    await openai.aclose()
    with pytest.raises(ConfigError, match="--openai-base-url"):
        make_embedder(Settings(embedder="openai"))


def test_ollama_url_reads_ollama_host_like_ollama() -> None:
    assert ollama_url("") == "http://127.0.0.1:11434"
    assert ollama_url("0.0.0.0") == "http://0.0.0.0:11434"
    assert ollama_url("ollama:8080") == "http://ollama:8080"
    assert ollama_url("[::1]") == "http://[::1]:11434"
    assert ollama_url("https://ollama.example.com/") == "https://ollama.example.com"
    with pytest.raises(ConfigError):
        ollama_url("ollama:notaport")


# ---- Retry-After and Backoff --------------------------------------------------------------------


def test_parse_retry_after() -> None:
    now = datetime(2026, 5, 14, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after("Thu, 14 May 2026 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Thu, 14 May 2026 11:00:00 GMT", now) == 0.0
    assert parse_retry_after("-3", now) == 0.0
    for bad in (None, "", "soon", "nan", "inf"):
        assert parse_retry_after(bad, now) is None


def test_backoff_grows_exponentially_up_to_the_cap() -> None:
    backoff = Backoff(base=1.0, factor=2.0, max_delay=10.0, jitter=0.0)
    assert [backoff.next_delay(now=0.0) for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert backoff.failures == 6


def test_backoff_jitter_stays_within_bounds() -> None:
    backoff = Backoff(base=1.0, factor=2.0, max_delay=1000.0, jitter=0.5, rng=random.Random(7))
    delays = [backoff.next_delay(now=0.0) for _ in range(8)]
    for n, delay in enumerate(delays):
        assert 0.5 * 2**n <= delay <= 2**n
    assert len(set(delays)) == len(delays)


def test_backoff_honours_retry_after_up_to_the_cap() -> None:
    backoff = Backoff(base=1.0, max_delay=60.0, jitter=0.0)
    assert backoff.next_delay(retry_after=12.0, now=0.0) == 12.0
    assert backoff.next_delay(retry_after=0.5, now=0.0) == 2.0, "a short Retry-After never shortens the wait"
    assert backoff.next_delay(retry_after=1e9, now=0.0) == 60.0


def test_backoff_ready_and_reset() -> None:
    clock = [100.0]
    backoff = Backoff(base=2.0, jitter=0.0, clock=lambda: clock[0])
    assert backoff.ready()
    assert backoff.next_delay() == 2.0
    assert backoff.not_before == 102.0
    assert not backoff.ready()
    assert not backoff.ready(now=101.9)
    clock[0] = 102.0
    assert backoff.ready()
    backoff.next_delay()
    backoff.reset()
    assert backoff.failures == 0
    assert backoff.ready()
    assert backoff.next_delay() == 2.0


def test_backoff_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        Backoff(base=0.0)
    with pytest.raises(ValueError):
        Backoff(jitter=1.5)
    with pytest.raises(ValueError):
        Backoff(base=10.0, max_delay=1.0)
