"""Property tests against a real sidecar process: hostile queries, paths, contents and bodies.

One daemon per test function, reused across Hypothesis examples. For every example: never a
5xx (except the documented 503 for the crew tier of a solo agent), every error in the one JSON
shape. At the end of each test: no file was created outside the tier dir, nothing but memory
files and the index is inside it, the index agrees with the files, and the daemon is alive.

Generated text includes lone surrogates (sent as ``"\\ud800"`` JSON escapes) and control
characters; URL query strings carry them replaced, since a URL cannot hold one.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from sidecar.consolidate.schedule import LAST_RUN_REL
from sidecar.retrieval.flags import CLEAN_FILES
from sidecar.server.app import create_app
from sidecar.server.lock import LOCK_NAME
from sidecar.settings import load_settings
from tests.support.memory import AGENT_MD, DAILY_MD, ClientFactory, write
from tests.support.procs import SidecarProcess, start_sidecar

# Hypothesis keeps caches in ./.hypothesis even without a database; in the repo root that dir
# breaks collection for everyone (pytest's norecursedirs warning is an error here).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "memory-sidecar-hypothesis")
# A fuzz campaign like schemathesis: 150 generated requests per test against a real process.
pytestmark = pytest.mark.slow
PROPERTY = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
DOCUMENTED_5XX: set[tuple[int, str]] = set()
# Besides memory files, the tier dir holds the tier index, the episodic journal, the knowledge graph,
# the dir's lock, the files the injection scanner found clean and, once a consolidation (``POST
# /memory/consolidate`` with a body it takes) has run, that run's record.
DATABASES = re.compile(r"^(index|journal|kg)\.sqlite(-wal|-shm|-journal)?$")


@dataclass
class Daemon:
    proc: SidecarProcess
    http: httpx.Client
    base: Path  # the tier is base/a/b/memory, so "../../x.md" would land in base
    tier: Path
    before: set[str]


def tree(root: Path, skip: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == skip:
            dirnames[:] = []
            continue
        out.update(str((here / n).relative_to(root)) for n in dirnames + filenames)
    return out


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    base = tmp_path / "base"
    tier = base / "a" / "b" / "memory"
    write(tier, "AGENT.md", AGENT_MD)
    write(tier, "daily/2026-05-14.md", DAILY_MD)
    logs = tmp_path / "logs"
    logs.mkdir()
    # no scheduled consolidation: an overdue one starts a minute after start-up, which a loaded
    # host's examples outlast, and would move the daily note and write its own record mid-test
    args = ("--watch", "false", "--reconcile-interval", "0", "--consolidate-interval", "0")
    proc = start_sidecar(tier, *args, log_dir=logs)
    http = httpx.Client(base_url=proc.url, timeout=30)
    d = Daemon(proc, http, base, tier, tree(base, tier))
    try:
        yield d
        check_aftermath(d)
    finally:
        http.close()
        proc.kill()


def check_aftermath(d: Daemon) -> None:
    assert tree(d.base, d.tier) == d.before, "a file was created outside the tier dir"
    for path in d.tier.rglob("*"):
        rel = path.relative_to(d.tier).as_posix()
        assert (
            path.is_dir()
            or rel.endswith(".md")
            or DATABASES.match(rel)
            or rel in (LOCK_NAME, LAST_RUN_REL, CLEAN_FILES)
        ), rel
        assert not path.is_symlink(), rel
    md_files = sorted(p.relative_to(d.tier).as_posix() for p in d.tier.rglob("*.md") if p.is_file())
    # a search that waits for the latest write, then the index must hold exactly the files
    latest = d.http.post("/memory/search", json={"query": "x"}).json()["index"]
    d.http.post("/memory/search", json={"query": "x", "after_seq": latest["indexed_seq"] + latest["pending"]})
    assert d.http.get("/memory/status").json()["files"] == len(md_files)
    assert d.proc.proc.poll() is None, d.proc.log_text()[-2000:]
    assert d.http.get("/healthz").status_code == 200


def send(http: httpx.Client, method: str, route: str, body: Any) -> httpx.Response:
    """JSON with ASCII escapes, so lone surrogates travel as ``\\udXXX`` (httpx would refuse them)."""
    return http.request(method, route, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def check_response(resp: httpx.Response) -> Any:
    """The one shape; never an undocumented 5xx. Returns the parsed body (a success may be another
    type, e.g. the Prometheus text of /metrics; an error never is)."""
    is_json = resp.headers.get("content-type", "").startswith("application/json")
    if resp.status_code < 400 and not is_json:
        return resp.text
    assert is_json, resp.text[:200]
    body = resp.json()
    assert isinstance(body, dict)
    if resp.status_code >= 400:
        assert set(body) == {"error"}, body
        err = body["error"]
        assert isinstance(err["code"], str) and err["code"], body
        assert isinstance(err["message"], str) and err["message"], body
        if resp.status_code >= 500:
            assert (resp.status_code, err["code"]) in DOCUMENTED_5XX, body
    return body


TEXT = st.text(st.characters(exclude_categories=()), max_size=120)  # control chars and lone surrogates


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def url_safe(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


FTS_BITS = st.sampled_from(
    [
        "AND", "OR", "NOT", "NEAR(", "NEAR(a b, 2)", "(", ")", '"', '""', "*", "^", "-", "+", ":",
        "heading:", "body:", "{heading body}:", "col:x", "\\", "'", ";", "--", "/*", "%", "_", "\x1b[2J",
        "\u202e", "\ufeff", "\u0301", "ﬁ", "İ", "postgres", "sqlite3", "0", "-1e9",
    ]
)  # fmt: skip
QUERY = st.lists(st.one_of(TEXT, FTS_BITS), max_size=8).map(" ".join)
# Mostly well-formed FTS5 (words, operators, column filters, phrases, prefixes), so the raw
# syntax is exercised past its parser too.
WELL_FORMED = st.lists(
    st.sampled_from(["postgres", "worker", "memory", "AND", "OR", "NOT", "heading:preferences", '"server side"', "post*",
                     "NEAR(postgres lock)", "disk", "locked", "malformed", "(", ")"]),
    min_size=1, max_size=5,
).map(" ".join)  # fmt: skip


def test_search_never_fails_on_hostile_queries(daemon: Daemon) -> None:
    @PROPERTY
    @given(data=st.data(), raw=st.booleans(), limit=st.integers(1, 80))
    def prop(data: st.DataObject, raw: bool, limit: int) -> None:
        query = data.draw(st.one_of(QUERY, WELL_FORMED) if raw else QUERY)
        payload = {"query": query, "limit": limit, "syntax": "fts5" if raw else "text"}
        resp = send(daemon.http, "POST", "/memory/search", payload)
        body = check_response(resp)
        outcomes[(raw, resp.status_code)] += 1
        if resp.status_code == 200:
            assert len(body["results"]) <= min(limit, 50)
            assert all((daemon.tier / r["path"]).is_file() for r in body["results"])
        elif not raw:  # user text is never FTS5 syntax: only the query's own validity can fail
            assert resp.status_code == 400 and body["error"]["code"] in ("empty_query", "invalid_query"), body
            assert "\x00" in query or has_surrogate(query) or not query.strip()

    outcomes: Counter[tuple[bool, int]] = Counter()
    prop()
    assert outcomes[(False, 200)] >= 20 and outcomes[(True, 200)] >= 5 and outcomes[(True, 400)] >= 5, outcomes


def test_garbage_around_a_word_still_finds_it(daemon: Daemon) -> None:
    @PROPERTY
    @given(garbage=QUERY)
    def prop(garbage: str) -> None:
        query = "postgres " + garbage.replace("\x00", "")
        resp = send(daemon.http, "POST", "/memory/search", {"query": url_safe(query), "limit": 50})
        body = check_response(resp)
        assert resp.status_code == 200
        assert "daily/2026-05-14.md" in {r["path"] for r in body["results"]}, garbage

    prop()


SEGMENT = st.sampled_from(
    [
        "..", ".", "", "AGENT.md", "daily", "x.md", "a", "．．", "／", "＼", "\\", "/", "\x00", ".hidden.md",
        "~", "%2e%2e", "index.sqlite", "x" * 300, "é" * 130, "ｘ.md", "..\\..\\x.md", "/etc/passwd.md", "C:",
        "CON", "\u2024\u2024", "..\u2215x.md", "a\u0338", "\x7f", " ", ".md", "x.md\x00.txt",
    ]
)  # fmt: skip
PATH = st.one_of(
    st.lists(st.one_of(SEGMENT, TEXT.map(lambda t: t[:20])), min_size=1, max_size=6).map("/".join),
    SEGMENT,
    TEXT,
).flatmap(lambda p: st.sampled_from([p, p + ".md"]))


def is_directory(root: Path, rel: str) -> bool:
    try:
        return (root / rel).is_dir()
    except (OSError, ValueError):  # NUL, a name too long: not a directory anyway
        return False


# Names of letters and digits (any script) in their own NFKC form (not a ligature, a fullwidth or
# a superscript letter, which pass for others), nested up to three deep: always acceptable.
NAME = st.text(st.characters(categories=("L", "N")), min_size=1, max_size=16).filter(
    lambda name: unicodedata.is_normalized("NFKC", name)
)
PLAIN_PATH = st.lists(NAME, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md")


def test_writes_stay_inside_the_tier(daemon: Daemon) -> None:
    @PROPERTY
    @given(
        plain=st.booleans(),
        data=st.data(),
        content=TEXT.map(lambda t: t.replace("\x00", "")) | TEXT,
        mode=st.sampled_from(["append", "replace"]),
    )
    def prop(plain: bool, data: st.DataObject, content: str, mode: str) -> None:
        path = data.draw(PLAIN_PATH if plain else PATH)
        is_dir = is_directory(daemon.tier, path)  # an earlier "x.md/y.md" makes a directory x.md
        resp = send(daemon.http, "POST", "/memory/write", {"path": path, "content": content, "mode": mode})
        body = check_response(resp)
        assert resp.status_code in (200, 201, 400, 403, 413, 422), body
        outcomes[resp.status_code] += 1
        if resp.status_code == 200:  # an append memory already held: nothing written, and said where
            assert mode == "append" and "duplicate_of" in body, body
        if (
            plain and not is_dir and "\x00" not in content and not has_surrogate(content)
        ):  # a plain name is refused only for its size or content
            assert resp.status_code in (200, 201, 413, 422), (path, body)
        if resp.status_code == 201:
            target = daemon.tier / path
            assert target.resolve().is_relative_to(daemon.tier.resolve()) and not target.is_symlink()
            data = target.read_bytes()
            assert data == content.encode() if mode == "replace" else data.endswith(content.encode())
            got = daemon.http.get("/memory/read", params={"path": path})
            assert check_response(got)["content"] == data.decode()
        elif "\x00" in content or has_surrogate(content):
            assert body["error"]["code"] in ("invalid_content", "invalid_path"), body

    outcomes: Counter[int] = Counter()
    prop()
    assert outcomes[201] >= 30 and outcomes[400] >= 30, outcomes


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT.map(lambda t: t[:10]), inner, max_size=4),
    max_leaves=12,
)
FIELDS = {
    "/memory/search": {
        "query": st.one_of(JSON, QUERY),
        "limit": st.one_of(JSON, st.integers(-5, 60)),
        "scope": st.one_of(JSON, st.sampled_from(["agent", "crew", "both"])),
        "syntax": st.one_of(JSON, st.sampled_from(["text", "fts5"])),
        "after_seq": st.one_of(JSON, st.integers(-2, 5)),
    },
    "/memory/write": {
        "tier": st.one_of(JSON, st.sampled_from(["agent", "crew"])),
        "path": st.one_of(JSON, PATH),
        "content": st.one_of(JSON, TEXT),
        "mode": st.one_of(JSON, st.sampled_from(["append", "replace"])),
    },
}


def bodies(route: str) -> st.SearchStrategy[bytes]:
    fields = st.fixed_dictionaries({}, optional=FIELDS[route]) if route in FIELDS else JSON
    as_json = st.one_of(JSON, fields).map(lambda v: json.dumps(v).encode())
    return st.one_of(as_json, as_json, st.binary(max_size=64))


def registered_routes() -> list[tuple[str, str]]:
    """(method, path) of every fixed route ``create_app`` registers today (HEAD left out)."""
    app = create_app(load_settings({"memory_dir": "/nonexistent", "embedder": "none"}, environ={}))
    return sorted(
        {
            (r.method, r.resource.canonical)
            for r in app.router.routes()
            if r.resource is not None and r.method != "HEAD" and "{" not in r.resource.canonical
        }
    )


ROUTES = registered_routes()
PARAM_NAMES = ["scope", "path", "tier", "q", "limit", "workspace_id", "crew_id", "recompute", "since", "x"]


def test_any_body_on_any_route(daemon: Daemon) -> None:
    assert ("POST", "/memory/search") in ROUTES and ("POST", "/memory/write") in ROUTES

    @PROPERTY
    @given(data=st.data(), route=st.sampled_from(ROUTES), other_method=st.sampled_from([None, "PUT", "DELETE"]))
    def prop(data: st.DataObject, route: tuple[str, str], other_method: str | None) -> None:
        method, path = route
        if method == "*":
            method = data.draw(st.sampled_from(["GET", "POST", "DELETE"]))
        raw = data.draw(bodies(path))
        params = data.draw(
            st.dictionaries(st.sampled_from(PARAM_NAMES), st.one_of(TEXT, PATH).map(url_safe), max_size=3)
        )
        resp = daemon.http.request(other_method or method, path, content=raw, params=params)
        if path == "/mcp":  # JSON-RPC: errors travel in its own shape, notifications get a bare 202
            assert resp.status_code < 500 and (not resp.content or "jsonrpc" in resp.json()), resp.text
        else:
            check_response(resp)

    prop()


def test_any_query_string_on_get_routes(daemon: Daemon) -> None:
    @PROPERTY
    @given(
        route=st.sampled_from(["/memory/status", "/memory/read"]),
        params=st.dictionaries(
            st.sampled_from(["scope", "path", "tier", "x"]), st.one_of(PATH, TEXT).map(url_safe), max_size=3
        ),
    )
    def prop(route: str, params: dict[str, str]) -> None:
        resp = daemon.http.get(route, params=params)
        body = check_response(resp)
        if route == "/memory/read" and resp.status_code == 200:
            assert (daemon.tier / body["path"]).read_bytes().decode(errors="replace") == body["content"]

    prop()


def test_a_consolidation_leaves_only_its_record(daemon: Daemon) -> None:
    """The fuzzed bodies include ones ``POST /memory/consolidate`` takes ({} among them): a run then
    records its end in the tier, which the aftermath check (at teardown) allows beside the notes."""
    resp = daemon.http.post("/memory/consolidate", json={})
    check_response(resp)
    assert resp.status_code == 200, resp.text
    assert (daemon.tier / LAST_RUN_REL).is_file()


# -- regressions: each was a 500 found by the properties above --------------------------------


async def test_lone_surrogate_in_a_query_is_a_400(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/search", data=b'{"query": "postgres\\ud800"}')
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_query", await resp.text()


async def test_lone_surrogate_in_write_content_is_a_400(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/write", data=b'{"path": "s.md", "content": "hi\\udfff"}')
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_content", await resp.text()
    assert not (memory_dir / "s.md").exists()


async def test_raw_fts_column_named_disk_is_a_400(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": "disk:foo", "syntax": "fts5"})
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_fts_syntax", await resp.text()


@pytest.mark.parametrize("route", ["write", "read"])
async def test_a_directory_named_like_a_memory_file_is_not_a_500(
    sidecar_client: ClientFactory, memory_dir: Path, route: str
) -> None:
    client = await sidecar_client()
    (memory_dir / "x.md").mkdir()  # as a write of "x.md/a.md" (201) or a shell mkdir leaves it
    if route == "write":
        resp = await client.post("/memory/write", json={"path": "x.md", "content": "b"})
    else:
        resp = await client.get("/memory/read", params={"path": "x.md"})
    assert resp.status == 403 and (await resp.json())["error"]["code"] == "unsafe_path", await resp.text()
    assert (memory_dir / "x.md").is_dir()
