"""Typed crew memories across real sidecar processes: one lead, two members, each with its own
memory dir. A member's crew memories live in the lead's journal and are reached through the
lead's crew listener; a member's own memories never leave its sidecar."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from sidecar.http.errors import error_middleware
from tests.support.embedding import needs_model
from tests.support.lag import PathStopwatch
from tests.support.memory import write
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

TOKEN = "crew-memory-token"
QUICK = ("--watch", "false", "--reconcile-interval", "0", "--crew-reindex-interval", "0")


@dataclass
class Crew:
    root: Path
    listen_port: int
    lead: SidecarProcess
    alice: SidecarProcess
    bob: SidecarProcess
    embedder: str = "none"
    store: tuple[str, ...] = ()  # the crew store flags: none for the embedded store

    @property
    def everyone(self) -> list[SidecarProcess]:
        return [self.lead, self.alice, self.bob]

    def restart_lead(self) -> None:
        self.lead.kill()
        self.lead = start_lead(self.root, self.listen_port, self.embedder, *self.store)


def start_lead(root: Path, listen_port: int, embedder: str = "none", *store: str, ready: bool = True) -> SidecarProcess:
    return start_sidecar(
        root / "lead", "--role", "lead", "--agent-id", "lead", "--crew-dir", str(root / "crew"),
        "--crew-listen", f"127.0.0.1:{listen_port}", "--crew-token", TOKEN, *QUICK, *store,
        env={"MEMORY_SIDECAR_EMBEDDER": embedder}, log_dir=root, ready=ready,
    )  # fmt: skip


def start_member(
    root: Path, name: str, listen_port: int, embedder: str = "none", *store: str, ready: bool = True
) -> SidecarProcess:
    # With a server crew store a member has a crew dir of its own (empty): nothing shared on disk.
    crew_dir = root / f"{name}-crew" if store else root / "crew"
    crew_dir.mkdir(parents=True, exist_ok=True)
    # A lead that is down refuses the connection at once (connect timeout 0.5 s); a lead that is up
    # gets 5 s to answer: on a loaded host a lead just restarted took over a second.
    return start_sidecar(
        root / name, "--role", "member", "--agent-id", name, "--crew-dir", str(crew_dir),
        "--lead-url", f"http://127.0.0.1:{listen_port}", "--crew-token", TOKEN,
        "--proxy-read-timeout", "5", "--proxy-connect-timeout", "0.5", *QUICK, *store,
        env={"MEMORY_SIDECAR_EMBEDDER": embedder}, log_dir=root, ready=ready,
    )  # fmt: skip


def start_crew(root: Path, embedder: str = "none", crew_store: str = "sqlite") -> Crew:
    write(root / "crew", "CREW.md", "# Conventions\nWe always use Tailwind.\n")
    for name in ("lead", "alice", "bob"):
        write(root / name, "AGENT.md", f"# {name}\n")
    port = free_port()
    store = () if crew_store == "sqlite" else ("--crew-store", crew_store)
    # The three start side by side: a member reaches for the lead only on its first crew call.
    procs = [start_lead(root, port, embedder, *store, ready=False)]
    procs += [start_member(root, name, port, embedder, *store, ready=False) for name in ("alice", "bob")]
    try:
        for proc in procs:
            proc.wait_ready(60)
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    return Crew(root, port, *procs, embedder=embedder, store=store)


@pytest.fixture(scope="module")
def crew(tmp_path_factory: pytest.TempPathFactory, crew_store: str) -> Iterator[Crew]:
    """One crew for the module and crew store (three processes take a second or two to start);
    every test works in workspaces of its own, so none sees another's memories."""
    c = start_crew(tmp_path_factory.mktemp("crew-memories"), crew_store=crew_store)
    try:
        yield c
    finally:
        for proc in c.everyone:
            proc.kill()


# -- HTTP helpers ----------------------------------------------------------------------------------
def post(side: SidecarProcess, route: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{side.url}/memory/{route}", json=body, timeout=HANG_GUARD_S)


def answer(resp: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert isinstance(body, dict) and "error" not in body
    return body


def error(resp: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The one error shape: ``{"error": {"code", "message", ...}}`` with this status and code."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert isinstance(err, dict) and err["code"] == code, body
    assert isinstance(err["message"], str) and err["message"]
    assert "Traceback" not in resp.text
    return err


def remember(side: SidecarProcess, content: str, status: int = 201, **extra: Any) -> dict[str, Any]:
    return answer(post(side, "remember", {"content": content, **extra}), status)


def recall(side: SidecarProcess, query: str, **extra: Any) -> dict[str, Any]:
    return answer(post(side, "recall", {"query": query, **extra}))


def contents(ans: dict[str, Any]) -> list[str]:
    return [h["content"] for h in ans["hits"]]


def listed(side: SidecarProcess, **params: str) -> list[dict[str, Any]]:
    resp = httpx.get(f"{side.url}/memory/memories", params=params, timeout=HANG_GUARD_S)
    memories: list[dict[str, Any]] = answer(resp)["memories"]
    return memories


def no_tracebacks(*sides: SidecarProcess) -> None:
    for side in sides:
        log = side.log_text()
        assert "Traceback" not in log and "http.unhandled" not in log, log[-4000:]


# -- 1. a crew memory reaches the crew through the lead ----------------------------------------------
@pytest.mark.slow
def test_a_members_crew_memory_reaches_the_other_member_and_the_lead(crew: Crew) -> None:
    made = remember(crew.alice, "The staging database is db-stage-3", scope="crew")
    assert made["crew"] is True and made["namespace"] == "default"

    shared = recall(crew.bob, "staging database", scope="crew_shared")
    assert shared["scope"] == "crew_shared" and "degraded" not in shared
    [hit] = shared["hits"]
    assert hit["id"] == made["id"] and hit["content"] == "The staging database is db-stage-3"
    assert hit["source"] == "crew" and hit["agent_id"] == "alice"

    assert recall(crew.bob, "staging database", scope="own")["hits"] == []
    assert recall(crew.bob, "staging database")["scope"] == "own"  # a member recalls its own by default
    assert recall(crew.bob, "staging database")["hits"] == []

    lead = recall(crew.lead, "staging database")  # a lead recalls crew_shared by default
    assert lead["scope"] == "crew_shared"
    assert [(h["id"], h["source"], h["agent_id"]) for h in lead["hits"]] == [(made["id"], "crew", "alice")]
    # The entry lives in the lead's journal, not in the journal of the member that wrote it.
    assert [m["id"] for m in listed(crew.lead)] == [made["id"]]
    assert listed(crew.alice) == [] and listed(crew.bob) == []


# -- 2. own memories stay home ---------------------------------------------------------------------
@pytest.mark.slow
def test_own_memories_never_reach_another_member_or_the_lead(crew: Crew) -> None:
    ws = {"workspace_id": "w-own"}
    mine = remember(crew.alice, "My scratch note: the wombat migration is half done", **ws)
    assert mine["crew"] is False
    lead_own = remember(crew.lead, "Lead private: the wombat budget is frozen", **ws)

    [hit] = recall(crew.alice, "wombat", **ws)["hits"]
    assert (hit["id"], hit["source"], hit["agent_id"]) == (mine["id"], "own", "alice")
    # alice's crew_shared recall has her own note and the crew's (none): not the lead's own.
    assert contents(recall(crew.alice, "wombat", scope="crew_shared", **ws)) == [
        "My scratch note: the wombat migration is half done"
    ]
    for scope in ("own", "crew_shared"):
        assert recall(crew.bob, "wombat", scope=scope, **ws)["hits"] == []
    assert contents(recall(crew.lead, "wombat", **ws)) == ["Lead private: the wombat budget is frozen"]
    assert [m["id"] for m in listed(crew.lead, **ws)] == [lead_own["id"]]
    assert listed(crew.bob, **ws) == []

    # Nobody else can rate or forget alice's note, not even naming its id.
    for side in (crew.bob, crew.lead):
        for scope in ("own", "crew"):
            error(post(side, "feedback", {"id": mine["id"], "signal": "-", "scope": scope, **ws}), 404, "not_found")
            error(post(side, "forget", {"id": mine["id"], "scope": scope, **ws}), 404, "not_found")
    # Nor the lead's own entry through the crew listener.
    for route, extra in (("feedback", {"signal": "-"}), ("forget", {})):
        body = {"id": lead_own["id"], "scope": "crew", **ws, **extra}
        error(post(crew.bob, route, body), 404, "not_found")
    assert recall(crew.alice, "wombat", **ws)["hits"][0]["id"] == mine["id"]
    assert [m["id"] for m in listed(crew.lead, **ws)] == [lead_own["id"]]


# -- 3. workspaces and namespaces ------------------------------------------------------------------
@pytest.mark.slow
def test_workspaces_and_namespaces_are_isolated_on_every_route(crew: Crew) -> None:
    w1, w2 = {"workspace_id": "w1"}, {"workspace_id": "w2"}
    train = remember(crew.alice, "The release train leaves on Thursday", scope="crew", **w1)
    canary = remember(
        crew.alice, "The canary region is eu-west", scope="crew", namespace="ns1", topic_key="canary", **w1
    )
    assert canary["namespace"] == "ns1"

    # recall: the workspace and the namespace asked, nothing else.
    for side in crew.everyone:
        assert recall(side, "release train", scope="crew_shared", **w2)["hits"] == []
        assert [h["id"] for h in recall(side, "release train", scope="crew_shared", **w1)["hits"]] == [train["id"]]
        assert recall(side, "canary region", scope="crew_shared", namespace="ns2", **w1)["hits"] == []
        assert recall(side, "canary region", scope="crew_shared", **w1)["hits"] == []  # namespace default
        ns1 = recall(side, "canary region", scope="crew_shared", namespace="ns1", **w1)
        assert [h["id"] for h in ns1["hits"]] == [canary["id"]]
        assert ns1["hits"][0]["namespace"] == "ns1"

    # the listing and the topic-key history: only the workspace and namespace named.
    assert [m["id"] for m in listed(crew.lead, **w1)] == [train["id"]]
    assert [m["id"] for m in listed(crew.lead, namespace="ns1", **w1)] == [canary["id"]]
    assert listed(crew.lead, **w2) == [] and listed(crew.lead, namespace="ns1", **w2) == []
    assert listed(crew.lead, topic_key="canary", namespace="ns2", **w1) == []
    assert [m["id"] for m in listed(crew.lead, topic_key="canary", namespace="ns1", **w1)] == [canary["id"]]

    # feedback and forget naming an entry of another workspace or namespace: 404, nothing changes.
    wrong = [
        {"id": train["id"], **w2},
        {"id": canary["id"], "namespace": "ns2", **w1},
        {"id": canary["id"], **w1},  # the default namespace
        {"id": canary["id"], "namespace": "ns1", **w2},
        {"topic_key": "canary", "namespace": "ns2", **w1},
        {"topic_key": "canary", "namespace": "ns1", **w2},
    ]
    for side in crew.everyone:
        for target in wrong:
            for scope in ("crew", "own"):
                body = {**target, "scope": scope}
                error(post(side, "feedback", {**body, "signal": "-"}), 404, "not_found")
                error(post(side, "forget", body), 404, "not_found")
    for entry, where in ((train, {"namespace": "default"}), (canary, {"namespace": "ns1"})):
        [kept] = [m for m in listed(crew.lead, **where, **w1) if m["id"] == entry["id"]]
        assert kept["status"] == "live" and kept["feedback"] == {"positive": 0, "negative": 0}, kept
    assert [h["id"] for h in recall(crew.bob, "release train", scope="crew_shared", **w1)["hits"]] == [train["id"]]

    # a remember in w2 is a separate entry: the same topic key in another workspace supersedes nothing.
    other = remember(crew.bob, "The canary region is us-east", scope="crew", namespace="ns1", topic_key="canary", **w2)
    assert other["supersedes"] is None
    assert contents(recall(crew.alice, "canary region", scope="crew_shared", namespace="ns1", **w1)) == [
        "The canary region is eu-west"
    ]


# -- 4. topic-key upsert ---------------------------------------------------------------------------
@pytest.mark.slow
def test_topic_key_upsert_from_two_members_keeps_one_live_entry_with_history(crew: Crew) -> None:
    ws = {"workspace_id": "w-topic"}
    first = remember(crew.alice, "The staging database is db-stage-3", scope="crew", topic_key="staging-db", **ws)
    assert first["supersedes"] is None
    second = remember(crew.bob, "The staging database moved to db-stage-4", scope="crew", topic_key="staging-db", **ws)
    assert second["supersedes"] == first["id"] and second["crew"] is True

    for side in crew.everyone:
        hits = recall(side, "staging database", scope="crew_shared", **ws)["hits"]
        assert [(h["id"], h["agent_id"], h["topic_key"]) for h in hits] == [(second["id"], "bob", "staging-db")]

    history = listed(crew.lead, topic_key="staging-db", **ws)
    assert [(m["id"], m["status"], m["agent_id"]) for m in history] == [
        (second["id"], "live", "bob"),
        (first["id"], "superseded", "alice"),
    ]
    assert history[1]["superseded_by"] == second["id"]
    assert [m["id"] for m in listed(crew.lead, **ws)] == [second["id"]]  # only the live one is listed

    # A topic key upserts within its scope only: the crew's entry never replaces the lead's own
    # memory with the same key, nor the other way round; each scope keeps its own live entry.
    lead_own = remember(crew.lead, "Lead private: rotate the deploy key on Fridays", topic_key="rotation", **ws)
    crew_rotation = remember(crew.alice, "Keys rotate monthly", scope="crew", topic_key="rotation", **ws)
    assert crew_rotation["supersedes"] is None
    lead_staging = remember(crew.lead, "Lead private: staging is mine", topic_key="staging-db", **ws)
    assert lead_staging["supersedes"] is None
    rotation = {m["id"]: m["status"] for m in listed(crew.lead, topic_key="rotation", **ws)}
    assert rotation == {lead_own["id"]: "live", crew_rotation["id"]: "live"}
    assert [m["id"] for m in listed(crew.lead, topic_key="staging-db", **ws)] == [
        lead_staging["id"],
        second["id"],
        first["id"],
    ]
    own = recall(crew.lead, "rotate keys", scope="own", **ws)["hits"]
    assert [h["id"] for h in own] == [lead_own["id"]]  # the crew's memory is not the lead's own
    shared = {h["id"] for h in recall(crew.lead, "rotate keys", scope="crew_shared", **ws)["hits"]}
    assert shared == {lead_own["id"], crew_rotation["id"]}

    # feedback by topic key lands on the live entry.
    rated = answer(post(crew.alice, "feedback", {"topic_key": "staging-db", "signal": "+", "scope": "crew", **ws}))
    assert rated["id"] == second["id"] and rated["feedback"] == {"positive": 1, "negative": 0}


# -- 5. retirement and forgetting ------------------------------------------------------------------
@pytest.mark.slow
def test_downvotes_retire_a_crew_entry_once_its_confidence_is_low_and_forget_removes_one(crew: Crew) -> None:
    ws = {"workspace_id": "w-retire"}
    flaky = remember(crew.alice, "Flaky tests are quarantined in qa/flaky.txt", scope="crew", **ws)
    vote = {"id": flaky["id"], "signal": "-", "scope": "crew", **ws}
    voters = (crew.alice, crew.bob, crew.alice, crew.bob)
    statuses = [answer(post(side, "feedback", vote))["status"] for side in voters]
    assert statuses == ["live", "live", "live", "retired"]  # full confidence: the fourth one retires it
    for side in crew.everyone:
        assert recall(side, "flaky tests quarantined", scope="crew_shared", **ws)["hits"] == []
    assert listed(crew.lead, **ws) == []
    error(post(crew.bob, "feedback", vote), 404, "not_found")  # a retired entry takes no more feedback

    oncall = remember(crew.bob, "The on-call rota is in the ops channel topic", scope="crew", topic_key="oncall", **ws)
    newer = remember(crew.alice, "The on-call rota moved to the wiki", scope="crew", topic_key="oncall", **ws)
    assert [h["id"] for h in recall(crew.bob, "on-call rota", scope="crew_shared", **ws)["hits"]] == [newer["id"]]
    gone = answer(post(crew.bob, "forget", {"topic_key": "oncall", "scope": "crew", **ws}))
    assert sorted(gone["forgotten"]) == sorted([oncall["id"], newer["id"]])  # the history goes too
    for side in crew.everyone:
        assert recall(side, "on-call rota", scope="crew_shared", **ws)["hits"] == []
    assert listed(crew.lead, topic_key="oncall", **ws) == []
    error(post(crew.alice, "forget", {"topic_key": "oncall", "scope": "crew", **ws}), 404, "not_found")

    # forget by id, from the lead's own API.
    note = remember(crew.bob, "Design reviews happen on Tuesdays", scope="crew", **ws)
    assert answer(post(crew.lead, "forget", {"id": note["id"], "scope": "crew", **ws}))["forgotten"] == [note["id"]]
    assert recall(crew.alice, "design reviews", scope="crew_shared", **ws)["hits"] == []


# -- 6. the lead down, then back -------------------------------------------------------------------
@pytest.mark.slow
def test_lead_down_degrades_recall_and_refuses_crew_writes_until_it_is_back(crew: Crew) -> None:
    ws = {"workspace_id": "w-down"}
    shared = remember(crew.bob, "Backups run nightly at 02:00", scope="crew", **ws)
    mine = remember(crew.alice, "My backups note: check the nightly run", **ws)
    crew.lead.stop(signal.SIGKILL)
    try:
        watch = PathStopwatch(crew.alice.proc.pid)  # less the time the host kept alice's loop waiting
        down = recall(crew.alice, "backups nightly", scope="crew_shared", **ws)
        if crew.store:
            # The crew's memories are in the crew store: members recall them without the lead.
            assert "degraded" not in down
            found = {(h["id"], h["source"]) for h in down["hits"]}
            assert found == {(mine["id"], "own"), (shared["id"], "crew")}
        else:
            assert down["degraded"] == ["crew"]
            assert [(h["id"], h["source"]) for h in down["hits"]] == [(mine["id"], "own")]
        assert watch.own() < 2.0, (watch.own(), watch.wall())
        assert "degraded" not in recall(crew.alice, "backups nightly", scope="own", **ws)

        err = error(post(crew.alice, "remember", {"content": "x", "scope": "crew", **ws}), 503, "crew_unavailable")
        assert "Traceback" not in err["message"]
        vote = {"id": shared["id"], "signal": "+", "scope": "crew", **ws}
        error(post(crew.alice, "feedback", vote), 503, "crew_unavailable")
        error(post(crew.bob, "forget", {"id": shared["id"], "scope": "crew", **ws}), 503, "crew_unavailable")
        # The member's own memories keep working.
        remember(crew.alice, "Another own note about backups", **ws)
        no_tracebacks(crew.alice, crew.bob)
    finally:
        crew.restart_lead()  # same listener port, same journal; the members are not restarted

    back = recall(crew.alice, "backups nightly", scope="crew_shared", **ws)
    assert "degraded" not in back
    assert {(h["id"], h["source"]) for h in back["hits"]} >= {(shared["id"], "crew"), (mine["id"], "own")}
    again = remember(crew.alice, "Restores are tested monthly", scope="crew", **ws)
    assert [h["id"] for h in recall(crew.bob, "restores tested", scope="crew_shared", **ws)["hits"]] == [again["id"]]
    no_tracebacks(*crew.everyone)


# -- 7. a solo sidecar has no crew -----------------------------------------------------------------
@pytest.fixture
def solo(tmp_path: Path) -> Iterator[SidecarProcess]:
    write(tmp_path / "solo", "AGENT.md", "# solo\n")
    proc = start_sidecar(tmp_path / "solo", "--agent-id", "solo", *QUICK, log_dir=tmp_path)
    try:
        yield proc
    finally:
        proc.kill()


@pytest.mark.slow
def test_a_solo_sidecar_refuses_crew_scopes_naming_scope(solo: SidecarProcess) -> None:
    made = remember(solo, "The staging database is db-stage-3")
    assert made["crew"] is False
    refused = [
        ("remember", {"content": "shared fact", "scope": "crew"}),
        ("recall", {"query": "staging database", "scope": "crew_shared"}),
        ("feedback", {"id": made["id"], "signal": "-", "scope": "crew"}),
        ("forget", {"id": made["id"], "scope": "crew"}),
    ]
    for route, body in refused:
        err = error(post(solo, route, body), 400, "invalid_scope")
        assert err["field"] == "scope" and "scope" in err["message"], route
    # Nothing was written, rated or forgotten.
    [kept] = listed(solo)
    assert kept["id"] == made["id"] and kept["status"] == "live"
    assert kept["feedback"] == {"positive": 0, "negative": 0}
    assert recall(solo, "staging database")["scope"] == "own"
    no_tracebacks(solo)


# -- bad requests: refused where they are made, in the one error shape --------------------------------
@pytest.mark.slow
def test_bad_crew_requests_are_400s_naming_the_field(crew: Crew) -> None:
    cases = [
        ("remember", {"content": "", "scope": "crew"}, "invalid_content"),
        ("remember", {"content": "x", "scope": "crew_shared"}, "invalid_scope"),
        ("remember", {"content": "x", "scope": "crew", "priority": 11}, "invalid_priority"),
        ("remember", {"content": "x", "scope": "crew", "namespace": "bad namespace"}, "invalid_namespace"),
        ("remember", {"content": "x", "scope": "crew", "bogus": 1}, "unknown_field"),
        ("recall", {"query": "x", "scope": "crew"}, "invalid_scope"),
        ("recall", {"query": "x", "scope": "crew_shared", "k": 0}, "invalid_k"),
        ("feedback", {"id": "je_x", "signal": "meh", "scope": "crew"}, "invalid_signal"),
        ("feedback", {"signal": "-", "scope": "crew"}, "invalid_id"),
        ("forget", {"id": "je_x", "topic_key": "k", "scope": "crew"}, "invalid_id"),
    ]
    for side in crew.everyone:
        for route, body, code in cases:
            error(post(side, route, {**body, "workspace_id": "w-bad"}), 400, code)
    assert listed(crew.lead, workspace_id="w-bad") == []


# -- a crew memory with a large payload ------------------------------------------------------------
@pytest.mark.slow
def test_a_crew_memory_as_large_as_a_member_accepts_reaches_the_lead(crew: Crew) -> None:
    ws = {"workspace_id": "w-large"}
    notes = "é" * 60_000  # 60,000 characters of payload: 120 KB as UTF-8 JSON
    made = remember(crew.bob, "The load test report", scope="crew", payload={"notes": notes}, **ws)
    [kept] = listed(crew.lead, **ws)
    assert kept["id"] == made["id"] and kept["payload"] == {"notes": notes}
    assert [h["id"] for h in recall(crew.alice, "load test report", scope="crew_shared", **ws)["hits"]] == [made["id"]]
    # Past what any member sends, the listener refuses the body; a search stays at 64 KB.
    url, auth = f"http://127.0.0.1:{crew.listen_port}", {"Authorization": f"Bearer {TOKEN}"}
    huge = {"content": "x", "payload": {"notes": "x" * 600_000}, **ws}
    error(httpx.post(f"{url}/crew/memory/remember", json=huge, headers=auth), 413, "payload_too_large")
    big_search = {"query": "x", "pad": "x" * 70_000}
    error(httpx.post(f"{url}/crew/search", json=big_search, headers=auth), 413, "payload_too_large")
    assert [m["id"] for m in listed(crew.lead, **ws)] == [made["id"]]


# -- a lead without crew memories (an older version) -----------------------------------------------
async def test_a_lead_without_crew_memory_routes_degrades_recall_and_is_503_for_writes(
    tmp_path: Path, aiohttp_server: Any
) -> None:
    async def search(request: web.Request) -> web.Response:
        return web.json_response({"results": []})

    app = web.Application(middlewares=[error_middleware])  # answers as a sidecar does
    app.router.add_post("/crew/search", search)
    server = await aiohttp_server(app)
    member = start_sidecar(
        tmp_path / "m", "--role", "member", "--agent-id", "m", "--lead-url", str(server.make_url("")),
        "--crew-token", TOKEN, "--crew-dir", str(tmp_path / "crew"), *QUICK, log_dir=tmp_path,
    )  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=f"{member.url}/memory/", timeout=HANG_GUARD_S) as client:
            made = await client.post("remember", json={"content": "The wombat runbook is in ops/"})
            assert made.status_code == 201
            resp = await client.post("recall", json={"query": "wombat runbook", "scope": "crew_shared"})
            shared = answer(resp)
            assert shared["degraded"] == ["crew"] and [h["source"] for h in shared["hits"]] == ["own"]
            resp = await client.post("remember", json={"content": "x", "scope": "crew"})
            error(resp, 503, "crew_unavailable")
            resp = await client.post("forget", json={"id": "je_1", "scope": "crew"})
            error(resp, 404, "not_found")  # an id the lead does not hold: the client's to act on
    finally:
        member.kill()
    no_tracebacks(member)


# -- the real model --------------------------------------------------------------------------------
@needs_model
@pytest.mark.slow
def test_crew_recall_with_the_real_model(tmp_path: Path) -> None:
    c = start_crew(tmp_path, "onnx")
    try:
        made = remember(c.alice, "The staging database is db-stage-3", scope="crew")
        remember(c.bob, "Our cat is called Miso and she hates the vacuum cleaner")
        for side in (c.bob, c.lead):
            found = recall(side, "what host is the staging db on", scope="crew_shared", explain=True)
            assert found["dense"] == "ok" and "degraded" not in found
            [hit] = found["hits"]
            assert (hit["id"], hit["source"], hit["agent_id"]) == (made["id"], "crew", "alice")
            assert hit["via"] == "both" and hit["explain"]["similarity"] > 0.4, hit
        # bob's own note is found by meaning in his own journal, and nothing earns a place for an
        # unrelated question.
        # (found once bob's indexer has embedded it: no word of the question is in the note)
        pet = wait_until(
            lambda: recall(c.bob, "What is the name of our pet kitten?", scope="crew_shared")["hits"], 60, 0.1
        )
        assert [(h["source"], h["via"]) for h in pet] == [("own", "dense")]
        assert recall(c.bob, "recipe for banana bread", scope="crew_shared")["hits"] == []
        no_tracebacks(*c.everyone)
    finally:
        for proc in c.everyone:
            proc.kill()
