"""The contract module is the one source of the API's shapes: the OpenAPI document and the MCP
tools take their schemas from it, and real answers of a live sidecar validate against them."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import timedelta
from typing import Annotated, Any, Literal, NotRequired, TypedDict, get_args, get_type_hints

import jsonschema
import pytest

from sidecar import contract
from sidecar.clock import utcnow
from sidecar.contract import FIELDS, SEARCH_REQUEST, WRITE_REQUEST, Format, json_schema
from sidecar.episodic.entry import MEMORY_TYPES, STATUSES
from sidecar.errors import BadRequest
from sidecar.http.openapi import DOCUMENT
from sidecar.mcp.outputs import ROUTES, output_schema
from sidecar.mcp.server import tool_definitions
from sidecar.ops import answers
from sidecar.ops.registry import OPERATIONS
from sidecar.settings import Settings
from tests.support.memory import ClientFactory


class Inner(TypedDict):
    n: int


class Sample(TypedDict):
    name: Annotated[str, "what it is called"]
    kind: Literal["a", "b"]
    only: Literal["x"]
    items: list[Inner]
    maybe: float | None
    extra: NotRequired[dict[str, Any]]


def test_json_schema_reads_required_keys_literals_refs_and_descriptions() -> None:
    schema = json_schema(Sample)
    assert schema["required"] == ["name", "kind", "only", "items", "maybe"]
    props = schema["properties"]
    assert props["name"] == {"type": "string", "description": "what it is called"}
    assert props["kind"] == {"enum": ["a", "b"]}
    assert props["only"] == {"const": "x"}
    assert props["items"] == {"type": "array", "items": {"$ref": "#/components/schemas/Inner"}}
    assert props["maybe"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert props["extra"] == {"type": "object"}


class Outer(TypedDict):
    inner: Annotated[Inner, "the part"]
    maybe: NotRequired[Inner | None]
    when: Annotated[str, Format("date-time")] | None


def test_json_schema_inline_writes_nested_shapes_in_place_and_reads_formats() -> None:
    inner = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    schema = json_schema(Outer, inline=True)
    assert schema["required"] == ["inner", "when"]
    assert schema["properties"] == {
        "inner": {**inner, "description": "the part"},
        "maybe": {"anyOf": [inner, {"type": "null"}]},
        "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
    }
    assert json_schema(Outer)["properties"]["inner"] == {
        "$ref": "#/components/schemas/Inner",
        "description": "the part",
    }


def test_json_schema_refuses_a_type_it_cannot_describe() -> None:
    class Odd(TypedDict):
        when: bytes

    with pytest.raises(TypeError):
        json_schema(Odd)


def test_the_openapi_document_takes_its_shapes_from_the_contract() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    assert schemas["SearchRequest"] == SEARCH_REQUEST
    assert schemas["WriteRequest"] == WRITE_REQUEST
    for shape in contract.ANSWERS:
        assert schemas[shape.__name__] == json_schema(shape)
    for name, shape in answers.ANSWERS.items():
        assert schemas[name] == json_schema(shape, inline=True)


JSON = "application/json"
REF = "#/components/schemas/"


def _resolved(schema: Any, components: dict[str, Any], prefix: str = REF) -> Any:
    """``schema`` with every reference replaced by what it names, recursively (the keys beside a
    reference, such as a description, kept)."""
    if isinstance(schema, list):
        return [_resolved(item, components, prefix) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        named = components[schema["$ref"].removeprefix(prefix)]
        return {**_resolved(named, components, prefix), **_resolved(rest, components, prefix)}
    return {k: _resolved(v, components, prefix) for k, v in schema.items()}


def _answer_problems(document: dict[str, Any]) -> list[str]:
    """Every answer of ``document`` that is not its operation's type: each operation of the
    registry answers, at each success status, exactly the schema of the type
    ``answers.BY_OPERATION`` names (what its op returns), and every JSON error is the ``Error``
    type's; the operations with no JSON answer of their own (``answers.NOT_TYPED``) answer only
    what they are said to."""
    components = document["components"]["schemas"]
    error = json_schema(answers.ErrorAnswer, inline=True, closed=True)
    problems = []
    if set(answers.BY_OPERATION) & set(answers.NOT_TYPED):
        problems.append(f"typed and untyped: {set(answers.BY_OPERATION) & set(answers.NOT_TYPED)}")
    for op in OPERATIONS:
        responses = document["paths"][op.path][op.method.lower()]["responses"]
        ok = {
            s: r["content"][JSON]["schema"] for s, r in responses.items() if s < "300" and JSON in r.get("content", {})
        }
        failed = {
            s: r["content"][JSON]["schema"] for s, r in responses.items() if s >= "300" and JSON in r.get("content", {})
        }
        if op.name in answers.NOT_TYPED:
            allowed = {"openapi": {"200": {"type": "object"}}, "mcp": {"200": {"$ref": REF + "RpcResponse"}}}
            if ok != allowed.get(op.name, {}):
                problems.append(f"{op.name}: answers {ok}, not as NOT_TYPED says")
            if op.name.startswith("mcp"):  # JSON-RPC errors are the protocol's envelope
                failed = {s: f for s, f in failed.items() if f != {"$ref": REF + "RpcResponse"}}
        elif op.name not in answers.BY_OPERATION:
            problems.append(f"{op.name}: no answer type in BY_OPERATION")
            continue
        else:
            types = answers.BY_OPERATION[op.name]
            if set(ok) != set(types):
                problems.append(f"{op.name}: answers {sorted(ok)}, its types {sorted(types)}")
            for status, shape in types.items():
                if status in ok and _resolved(ok[status], components) != json_schema(shape, inline=True):
                    problems.append(f"{op.name} {status}: not the schema of {shape.__name__}")
        for status, schema in failed.items():
            if _resolved(schema, components) != error:
                problems.append(f"{op.name} {status}: an error that is not ErrorAnswer")
    return problems


def test_every_operation_s_answers_are_the_types_its_op_returns() -> None:
    assert {op.name for op in OPERATIONS} == set(answers.BY_OPERATION) | set(answers.NOT_TYPED)
    assert _answer_problems(DOCUMENT) == []
    # The error envelope is closed, and written by its type too.
    assert DOCUMENT["components"]["schemas"]["Error"]["additionalProperties"] is False


def test_the_answer_check_names_an_answer_written_by_hand() -> None:
    document = copy.deepcopy(DOCUMENT)
    responses = document["paths"]["/memory/consolidate"]["post"]["responses"]
    responses["200"]["content"][JSON]["schema"] = {"type": "object", "description": "the report"}
    document["paths"]["/journal"]["get"]["responses"]["200"]["content"][JSON]["schema"] = {
        "type": "object",
        "properties": {"entries": {"type": "array", "items": {"$ref": REF + "JournalEntry"}}},
    }
    del document["paths"]["/memory/session"]["post"]["responses"]["200"]
    document["paths"]["/kg/add"]["post"]["responses"]["400"]["content"][JSON]["schema"] = {"type": "object"}
    assert _answer_problems(document) == [
        "journal_list 200: not the schema of EntriesAnswer",
        "session: answers ['201'], its types ['200', '201']",
        "consolidate 200: not the schema of ConsolidateAnswer",
        "kg_add 400: an error that is not ErrorAnswer",
    ]


def test_each_mcp_tool_s_output_schema_is_its_operation_s_type() -> None:
    by_route = {(op.method.lower(), op.path): op.name for op in OPERATIONS}
    for tool, (method, path, status) in ROUTES.items():
        schema = output_schema(tool)
        shape = answers.BY_OPERATION[by_route[method, path]][status]
        assert _resolved(schema, schema.get("$defs", {}), "#/$defs/") == {
            **json_schema(shape, inline=True),
            **({"$defs": _resolved(schema["$defs"], schema["$defs"], "#/$defs/")} if "$defs" in schema else {}),
        }, tool
    duplicate = output_schema("memory_check_duplicate")
    assert {k: v for k, v in _resolved(duplicate, duplicate["$defs"], "#/$defs/").items() if k != "$defs"} == (
        json_schema(answers.DuplicateCheckAnswer, inline=True)
    )


def test_the_consolidation_answer_is_the_report_field_for_field() -> None:
    from sidecar.consolidate import memories, report

    pairs = {
        report.Report: answers.ConsolidateAnswer,
        report.SummaryWritten: answers.SummaryWritten,
        report.Promoted: answers.PromotedLine,
        report.NotPromoted: answers.NotPromotedLine,
        report.Archived: answers.ArchivedNote,
        report.DroppedLine: answers.DroppedLine,
        report.SupersededLine: answers.SupersededLine,
        report.Skipped: answers.SkippedFile,
        report.Withheld: answers.WithheldLine,
        report.Fallback: answers.FallbackSummary,
        report.OperatorUpdate: answers.OperatorUpdate,
        memories.MergedMemories: answers.MergedMemories,
    }
    for kind, shape in pairs.items():
        assert [f.name for f in dataclasses.fields(kind)] == list(get_type_hints(shape)), kind.__name__
    # A report holding one of everything, as a client gets it, is the type's.
    full = report.Report(
        dry_run=False,
        periods=["2026-W01"],
        summaries=[report.SummaryWritten("2026-W01", "daily/summaries/2026-W01.md", ("daily/a.md",), "extractive")],
        promoted=[report.Promoted("line", ("daily/a.md",))],
        not_promoted=[report.NotPromoted("line", ("daily/a.md",), "cap")],
        archived=[report.Archived("daily/a.md", "archive/daily/a.md")],
        dropped=[report.DroppedLine("text", ("daily/a.md",), "duplicate", "2026-W01", "kept")],
        superseded=[report.SupersededLine("old", "AGENT.md", "new", "daily/b.md", "2026-01-02")],
        operator_model=report.OperatorUpdate("OPERATOR.md", ("a",), ("b",), (("old", "new"),), ("c",), True),
        memories_merged=[memories.MergedMemories("m1", "text", ("m2",))],
        journal_entries=["e1"],
        skipped=[report.Skipped("daily/x.md", "why")],
        withheld=[report.Withheld("line", "AGENT.md", "role_hijack", "block")],
        fallbacks=[report.Fallback("2026-W01", "timeout")],
        compressed=["archive/daily/a.md"],
        expired=["archive/daily/old.md"],
        no_journal="no journal",
    )
    as_sent = json.loads(json.dumps(full.to_json()))
    jsonschema.validate(as_sent, _closed(json_schema(answers.ConsolidateAnswer, inline=True)))


def _closed(schema: Any) -> Any:
    """``schema`` with every object that lists its properties closed: an answer validated with it
    carries no field its type does not name."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: ({n: _closed(v) for n, v in val.items()} if k == "properties" else _closed(val)) for k, val in schema.items()
    }
    if "properties" in schema:
        out["additionalProperties"] = False
    return out


def test_the_answer_types_name_the_journal_s_memory_types_and_statuses() -> None:
    assert get_args(answers.MemoryType) == MEMORY_TYPES
    assert get_args(answers.MemoryStatus) == STATUSES


def test_mcp_tool_inputs_are_the_contract_fields_with_role_enums() -> None:
    solo = tool_definitions(Settings(role="solo"))
    lead = tool_definitions(Settings(role="lead"))
    write = solo["memory_write"]["inputSchema"]
    assert write["properties"]["content"] == FIELDS["content"]
    assert write["properties"]["path"] == FIELDS["path"]
    assert write["properties"]["tier"]["enum"] == ["agent"]
    assert lead["memory_write"]["inputSchema"]["properties"]["tier"]["enum"] == ["agent", "crew"]
    search = lead["memory_search"]["inputSchema"]
    assert search["properties"]["query"] == FIELDS["query"]
    assert search["properties"]["scope"]["enum"] == ["agent", "crew", "both"]
    assert search["properties"]["limit"]["maximum"] == contract.MAX_LIMIT
    assert set(search["required"]) == {"query"}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "missing_query"),
        ({"query": "x", "limit": 0}, "invalid_limit"),
        ({"query": "x", "limit": True}, "invalid_limit"),
        ({"query": "x", "scope": "team"}, "invalid_scope"),
        ({"query": "x", "after_seq": -1}, "invalid_after_seq"),
    ],
)
def test_search_requests_name_the_bad_field(body: dict[str, Any], code: str) -> None:
    with pytest.raises(BadRequest) as caught:
        contract.SearchRequest.from_json(body)
    assert caught.value.code == code


def test_read_requests_use_the_write_path_rules() -> None:
    assert contract.ReadRequest.from_json({"path": "daily/2026-05-14.md"}) == contract.ReadRequest(
        "agent", "daily/2026-05-14.md"
    )
    for body, code in (({"tier": "team", "path": "a.md"}, "invalid_tier"), ({}, "invalid_path")):
        with pytest.raises(BadRequest) as caught:
            contract.ReadRequest.from_json(body)
        assert caught.value.code == code
    with pytest.raises(BadRequest):
        contract.ReadRequest.from_json({"path": "../outside.md"})


def _validator(name: str) -> jsonschema.Draft202012Validator:
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", **DOCUMENT}
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return jsonschema.Draft202012Validator(schema)


async def test_live_answers_validate_against_the_contract(sidecar_client: ClientFactory, memory_dir: Any) -> None:
    client = await sidecar_client()
    written = await client.post("/memory/write", json={"path": "daily/2026-05-15.md", "content": "zebra crossing"})
    assert written.status == 201
    wrote = await written.json()
    _validator("WriteAnswer").validate(wrote)
    found = await client.post("/memory/search", json={"query": "zebra", "after_seq": wrote["seq"], "explain": True})
    answer = await found.json()
    assert answer["results"], answer
    _validator("SearchAnswer").validate(answer)
    read = await client.get("/memory/read", params={"path": "daily/2026-05-15.md"})
    _validator("ReadAnswer").validate(await read.json())
    block = await client.post("/memory/block", json={"query": "zebra"})
    _validator("BlockAnswer").validate(await block.json())
    _validator("HealthAnswer").validate(await (await client.get("/healthz")).json())
    _validator("ToolsAnswer").validate(await (await client.get("/memory/tools")).json())
    # The schemas do check: a hit without its path is refused.
    broken = {**answer, "results": [{k: v for k, v in answer["results"][0].items() if k != "path"}]}
    with pytest.raises(jsonschema.ValidationError):
        _validator("SearchAnswer").validate(broken)


async def test_live_memory_journal_and_status_answers_validate_against_their_types(
    sidecar_client: ClientFactory, memory_dir: Any
) -> None:
    client = await sidecar_client()
    remembered = await client.post("/memory/remember", json={"content": "Using Go for the API", "topic_key": "api"})
    assert remembered.status == 201, await remembered.text()
    memory = await remembered.json()
    _validator("RememberAnswer").validate(memory)
    recalled = await client.post("/memory/recall", json={"query": "Go API", "explain": True})
    assert recalled.status == 200
    recall = await recalled.json()
    assert [hit["id"] for hit in recall["hits"]] == [memory["id"]]
    _validator("MemoryRecallAnswer").validate(recall)
    feedback = await client.post("/memory/feedback", json={"id": memory["id"], "signal": "+"})
    _validator("FeedbackAnswer").validate(await feedback.json())
    listed = await (await client.get("/memory/memories")).json()
    assert [m["id"] for m in listed["memories"]] == [memory["id"]]
    for entry in listed["memories"]:
        _validator("JournalEntry").validate(entry)
    forgot = await client.post("/memory/forget", json={"topic_key": "api"})
    _validator("ForgetAnswer").validate(await forgot.json())
    journaled = await client.post(
        "/journal",
        json={"workspace_id": "w", "agent_id": "a", "entry_type": "peer.escalation", "summary": "OOM in checkout"},
    )
    assert journaled.status == 201
    body = {"workspace_id": "w", "agent_id": "a", "query_text": "checkout OOM", "hybrid": True}
    episodic = await (await client.post("/episodic/recall", json=body)).json()
    assert episodic["hits"], episodic
    _validator("RecallResponse").validate(episodic)
    health = await client.post("/memory/health", params={"recompute": "1", "workspace_id": "w"})
    assert health.status == 200
    _validator("HealthSnapshot").validate(await health.json())
    status = await (await client.get("/memory/status")).json()
    _validator("Status").validate(status)
    # The types name every field these answers carry (the schemas stay open for fields to come).
    components = DOCUMENT["components"]["schemas"]
    recall_hit = components["MemoryRecallAnswer"]["properties"]["hits"]["items"]
    for name, answer in [("RememberAnswer", memory), ("MemoryRecallAnswer", recall), ("Status", status)]:
        assert set(answer) <= set(components[name]["properties"]), (
            name,
            set(answer) - set(components[name]["properties"]),
        )
    assert set(recall["hits"][0]) <= set(recall_hit["properties"])
    assert set(episodic["hits"][0]) <= set(components["RecallResponse"]["properties"]["hits"]["items"]["properties"])
    # The derived schemas do check: a status without its tier, or a recall scope it never gives, is refused.
    with pytest.raises(jsonschema.ValidationError):
        _validator("Status").validate({k: v for k, v in status.items() if k != "tier"})
    with pytest.raises(jsonschema.ValidationError):
        _validator("MemoryRecallAnswer").validate({**recall, "scope": "everyone"})


class _IntOrText(TypedDict):
    value: int | str


class _TextOrInt(TypedDict):
    value: str | int


def test_a_union_s_schema_does_not_depend_on_how_it_was_spelt() -> None:
    """``int | str`` equals ``str | int``, so typing's caches may give a ``NotRequired[...]`` field
    either spelling (whichever some module made first): one schema for both, or the document
    differs from its types depending on what was imported before."""
    one, other = json_schema(_IntOrText, inline=True), json_schema(_TextOrInt, inline=True)
    assert one == other
    assert one["properties"]["value"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]


@pytest.mark.slow
async def test_live_answers_carry_only_what_their_operation_s_type_names(
    sidecar_client: ClientFactory, memory_dir: Any
) -> None:
    """A real sidecar's answers of the operations typed last, validated against their types with
    every object closed: a field the type does not name, or one it requires and the answer lacks,
    fails."""
    client = await sidecar_client()

    async def answered(op: str, status: int, method: str, path: str, **kwargs: Any) -> Any:
        resp = await client.request(method, path, **kwargs)
        assert resp.status == status, await resp.text()
        body = await resp.json()
        jsonschema.validate(body, _closed(json_schema(answers.BY_OPERATION[op][str(status)], inline=True)))
        return body

    entry = {"workspace_id": "w", "agent_id": "a", "entry_type": "peer.escalation", "summary": "OOM in checkout"}
    await answered("journal_append", 201, "POST", "/journal", json=entry)
    listed = await answered("journal_list", 200, "GET", "/journal", params={"workspace_id": "w"})
    assert [e["summary"] for e in listed["entries"]] == ["OOM in checkout"]
    session = {"session_id": "s-1", "summary": "We moved Orca's billing to Fly.io in Frankfurt."}
    first = await answered("session", 201, "POST", "/memory/session", json=session)
    assert first["engine"] == "given" and first["session_id"] == "s-1" and first["key_topics"]
    again = await answered("session", 200, "POST", "/memory/session", json=session)
    assert again["id"] == first["id"] and again["replayed"] is True
    await answered("remember", 201, "POST", "/memory/remember", json={"content": "Using Go for the API"})
    memories = await answered("memories", 200, "GET", "/memory/memories")
    assert [m["summary"] for m in memories["memories"]] == ["Using Go for the API"]
    fact = {"subject": "billing", "predicate": "uses", "object": "Stripe", "valid_from": "2026-03-01"}
    added = await answered("kg_add", 201, "POST", "/kg/add", json=fact)
    await answered("kg_query", 200, "POST", "/kg/query", json={"entity": "billing"})
    await answered("kg_timeline", 200, "POST", "/kg/timeline", json={"entity": "billing"})
    await answered("kg_traverse", 200, "POST", "/kg/traverse", json={"entity": "billing"})
    await answered("kg_tunnels", 200, "POST", "/kg/tunnels", json={})
    await answered("kg_stats", 200, "GET", "/kg/stats")
    await answered("kg_invalidate", 200, "POST", "/kg/invalidate", json={"fact_id": added["fact"]["id"]})
    # Three old notes of one week, each repeating one fact: a run summarises, promotes and archives.
    monday = utcnow().date() - timedelta(days=35 + utcnow().date().weekday())
    for n in range(3):
        note = memory_dir / "daily" / f"{(monday + timedelta(days=n)).isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"## Ops\n- The staging database is db-stage-3.\n- Rotated log shard {n} by hand.\n")
    dry = await answered("consolidate", 200, "POST", "/memory/consolidate", json={"dry_run": True})
    done = await answered("consolidate", 200, "POST", "/memory/consolidate", json={})
    assert dry["dry_run"] is True and done["archived"] and done["summaries"] and done["promoted"]
    # An error answer is the closed error type's.
    refused = await client.post("/memory/search", json={"query": "Go", "limt": 2})
    assert refused.status == 400
    jsonschema.validate(await refused.json(), _closed(json_schema(answers.ErrorAnswer, inline=True)))
