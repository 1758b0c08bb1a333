"""The contract module is the one source of the API's shapes: the OpenAPI document and the MCP
tools take their schemas from it, and real answers of a live sidecar validate against them."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

import jsonschema
import pytest

from sidecar import contract
from sidecar.contract import FIELDS, SEARCH_REQUEST, WRITE_REQUEST, json_schema
from sidecar.errors import BadRequest
from sidecar.http.openapi import DOCUMENT
from sidecar.mcp.server import tool_definitions
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
