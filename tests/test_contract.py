"""The contract module is the one source of the API's shapes: the OpenAPI document and the MCP
tools take their schemas from it, and real answers of a live sidecar validate against them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict, get_args

import jsonschema
import pytest

from sidecar import contract
from sidecar.contract import FIELDS, SEARCH_REQUEST, WRITE_REQUEST, Format, json_schema
from sidecar.episodic.entry import MEMORY_TYPES, STATUSES
from sidecar.errors import BadRequest
from sidecar.http.openapi import DOCUMENT
from sidecar.mcp.server import tool_definitions
from sidecar.ops import answers
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


def test_the_document_s_palace_graph_and_journal_answers_are_their_types() -> None:
    paths = DOCUMENT["paths"]

    def answer(path: str, method: str) -> Any:
        (ok,) = [r for status, r in paths[path][method]["responses"].items() if status in ("200", "201")]
        return ok["content"]["application/json"]["schema"]

    for op, shape in answers.KG_ANSWERS.items():
        path, method = ("/kg/stats", "get") if op == "stats" else (f"/kg/{op}", "post")
        assert answer(path, method) == json_schema(shape, inline=True), op
    assert answer("/memory/delete", "post") == json_schema(answers.DeleteAnswer, inline=True)
    assert answer("/memory/list", "get") == json_schema(answers.ListAnswer, inline=True)
    assert answer("/memory/restore", "post") == json_schema(answers.RestoreAnswer, inline=True)
    journal = paths["/journal"]["post"]["responses"]
    assert journal["201"]["content"]["application/json"]["schema"] == json_schema(answers.AppendAnswer, inline=True)
    assert journal["200"]["content"]["application/json"]["schema"] == json_schema(answers.ReplayedAppend, inline=True)
    for status in ("200", "201"):
        session = paths["/memory/session"]["post"]["responses"][status]["content"]["application/json"]["schema"]
        assert session == json_schema(answers.SessionAnswer, inline=True)


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
