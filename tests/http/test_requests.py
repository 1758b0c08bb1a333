"""One request per operation: what the registry says an operation reads (``sidecar.ops.requests``),
what the OpenAPI document gives it, and what its MCP tool takes agree. The tests walk the registry
and the tool table, so an operation or a tool added later is held to the same rule.

An MCP tool may narrow its operation's request, and only so: leave out the fields the agent's own
tools leave to the sidecar's settings (workspace, agent), offer fewer enum values (the scopes and
tiers this role may use), a lower maximum, other descriptions. It may not take a field its
operation does not, type one otherwise, or require what the operation does not.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sidecar.crew.listener import create_crew_app
from sidecar.http.openapi import DOCUMENT
from sidecar.http.state import SIDECAR
from sidecar.kg.requests import REQUESTS as KG_REQUESTS
from sidecar.mcp.catalog import TOOLS, ToolSpec
from sidecar.mcp.tools import IDENTITY_FIELDS, tool_definitions
from sidecar.ops.journal import EntriesList, HealthRequest
from sidecar.ops.memories import MemoriesRequest
from sidecar.ops.registry import OPERATIONS, Operation, by_name
from sidecar.ops.requests import BODIES, PARAMS, TYPES
from sidecar.ops.status import StatusRequest
from sidecar.settings import Settings
from tests.support.memory import ClientFactory

Schema = dict[str, Any]
ROLES = ("solo", "member", "lead")
TOKEN = "t" * 32
#: The fields a tool leaves out of its operation's request, on purpose.
LEFT_OUT: dict[str, set[str]] = {
    "memory_search": {"syntax", "explain"},  # plain-text search, no scoring detail for the model
    **{
        t.name: set(IDENTITY_FIELDS)
        for t in TOOLS
        if t.operation in ("remember", "recall", "feedback", "forget", "restore", "session")
    },
}
#: The one tool with arguments of its own: it asks the write service whether content is already
#: held, and is admitted as a search (it reads memory) whose request it does not take.
OWN_ARGUMENTS = {"memory_check_duplicate"}


def _resolve(schema: Schema) -> Schema:
    if "$ref" in schema:
        found: Schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        return found
    return schema


def test_every_request_shape_belongs_to_an_operation() -> None:
    names = {op.name for op in OPERATIONS}
    assert set(BODIES) <= names and set(PARAMS) <= names
    for op in OPERATIONS:
        assert op.body == (frozenset(op.request.schema["properties"]) if op.request is not None else None)
        if op.request is not None:
            assert op.request.schema.get("additionalProperties") is False, f"{op.name}: an open request"


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_the_document_gives_each_operation_the_registrys_request(op: Operation) -> None:
    spec = DOCUMENT["paths"][op.path][op.method.lower()]
    if op.request is None:
        assert op.name.startswith("mcp") or "requestBody" not in spec
    else:
        assert _resolve(spec["requestBody"]["content"]["application/json"]["schema"]) == op.request.schema
    documented = [(p["name"], p["schema"], p["required"]) for p in spec.get("parameters", []) if p["in"] == "query"]
    assert documented == [(p.name, p.schema, p.required) for p in op.params or ()]


#: Typed requests of the operations that live beside them (not imported by the registry).
TYPED = {
    **TYPES,
    "memories": MemoriesRequest,
    "status": StatusRequest,
    "reindex": StatusRequest,
    "journal_list": EntriesList,
    "health": HealthRequest,
}


@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_typed_request_takes_the_fields_of_its_schema(name: str) -> None:
    fields = set(TYPED[name].FIELDS)  # type: ignore[attr-defined]
    assert fields == set(by_name(name).arguments()["properties"])
    assert set(by_name(name).body or by_name(name).query or ()) == fields


def _plain(schema: Schema) -> Schema:
    """A field's schema as far as what it accepts goes: no description, default or example, and
    "x or null" as x (a query parameter cannot be null; a tool's argument may say "not given")."""
    schema = {k: v for k, v in schema.items() if k not in ("description", "default", "examples")}
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        return _plain({**rest, **next(o for o in options if o != {"type": "null"})})
    return schema


def disagreements(tool: str, given: Schema, request: Schema) -> list[str]:
    """How a tool's input schema ``given`` goes beyond its operation's ``request`` (empty: it only narrows)."""
    problems = []
    props, wanted = given.get("properties", {}), request.get("properties", {})
    for name in sorted(set(props) - set(wanted)):
        problems.append(f"{tool}: takes {name}, which its operation does not")
    for name in sorted(set(wanted) - set(props) - LEFT_OUT.get(tool, set())):
        problems.append(f"{tool}: leaves out {name}")
    if request.get("additionalProperties") is False and given.get("additionalProperties") is not False:
        problems.append(f"{tool}: takes any field, its operation refuses unknown ones")
    required = set(request.get("required", [])) & set(props)
    if set(given.get("required", [])) != required:
        problems.append(f"{tool}: requires {sorted(given.get('required', []))}, its operation {sorted(required)}")
    for name in sorted(set(props) & set(wanted)):
        mine, theirs = _plain(props[name]), _plain(wanted[name])
        if "enum" in mine and "enum" in theirs:
            narrowed = set(mine.pop("enum")) <= set(theirs.pop("enum"))
            if not narrowed:
                problems.append(f"{tool}: {name} offers a value its operation refuses")
        if "maximum" in mine and "maximum" in theirs and mine["maximum"] <= theirs["maximum"]:
            mine.pop("maximum"), theirs.pop("maximum")
        elif "maximum" in mine and "maximum" not in theirs:
            mine.pop("maximum")
        if mine != theirs:
            problems.append(f"{tool}: {name} is {mine}, its operation's {theirs}")
    return problems


def _request_of(spec: ToolSpec) -> Schema:
    if spec.name == "kg_stats":  # a GET over HTTP; the tool takes the graph's own request
        assert by_name(spec.operation).query == frozenset(KG_REQUESTS["stats"]["properties"])
    return by_name(spec.operation).arguments()


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("spec", [t for t in TOOLS if t.name not in OWN_ARGUMENTS], ids=lambda t: t.name)
def test_each_tool_takes_its_operations_request(spec: ToolSpec, role: str) -> None:
    given = tool_definitions(Settings(role=role))[spec.name]["inputSchema"]
    assert disagreements(spec.name, given, _request_of(spec)) == []


def test_the_tools_narrow_to_the_role() -> None:
    solo, lead = tool_definitions(Settings(role="solo")), tool_definitions(Settings(role="lead"))
    assert solo["memory_remember"]["inputSchema"]["properties"]["scope"]["enum"] == ["own"]
    assert lead["memory_recall"]["inputSchema"]["properties"]["scope"]["enum"] == ["own", "crew_shared"]
    assert solo["kg_add"]["inputSchema"]["properties"]["scope"]["anyOf"][0]["enum"] == ["agent"]
    assert solo["memory_delete"]["inputSchema"]["properties"]["tier"]["enum"] == ["agent"]
    assert "workspace_id" not in solo["memory_session"]["inputSchema"]["properties"]
    assert "workspace_id" in by_name("session").arguments()["properties"]


def test_the_check_finds_a_tool_that_goes_beyond_its_operation() -> None:
    """The comparison above can fail: each way a tool's schema could drift is named."""
    request = by_name("kg_add").arguments()
    given = copy.deepcopy(request)
    given["properties"]["subjekt"] = {"type": "string"}  # a field the operation does not take
    given["properties"]["confidence"] = {"type": "string"}  # typed otherwise
    given["properties"]["scope"]["anyOf"][0]["enum"] = ["agent", "everyone"]  # a value it refuses
    given["required"].append("source")  # required where the operation is not
    del given["properties"]["object"]  # a field left out
    given["required"].remove("object")
    found = disagreements("kg_add", given, request)
    assert [p.split(":")[1].split()[0] for p in found] == ["takes", "leaves", "requires", "confidence", "scope"], found
    open_ = {**copy.deepcopy(request), "additionalProperties": True}
    assert disagreements("kg_add", open_, request) == ["kg_add: takes any field, its operation refuses unknown ones"]


def test_every_tool_runs_an_operation_of_the_registry() -> None:
    for spec in TOOLS:
        assert by_name(spec.operation).memory != "none", spec.name


# -- the crew listener: a member's request is the same request as the agent API's ----------------------
@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/crew/search", {"query": "postgres", "limt": 2}),
        ("/crew/memory/remember", {"content": "Using Go", "colour": "red"}),
        ("/crew/memory/recall", {"query": "Go", "colour": "red"}),
        ("/crew/memory/feedback", {"topic_key": "k", "signal": "+", "colour": "red"}),
        ("/crew/memory/forget", {"topic_key": "k", "colour": "red"}),
        ("/crew/kg/add", {"subject": "billing", "predicate": "uses", "object": "Stripe", "colour": "red"}),
        ("/crew/kg/query", {"entity": "billing", "colour": "red"}),
        # A field of the wrong type: invalid_<field>, as over the agent API.
        ("/crew/search", {"query": "postgres", "limit": "2"}),
        ("/crew/memory/remember", {"content": 5}),
        ("/crew/memory/recall", {"query": "Go", "k": "five"}),
        ("/crew/kg/query", {"entity": "billing", "limit": "many"}),
        ("/crew/kg/add", {"subject": "billing", "predicate": "uses", "object": "Stripe", "confidence": "high"}),
    ],
)
async def test_the_crew_listener_refuses_a_bad_field_as_the_agent_api_does(
    sidecar_client: ClientFactory, aiohttp_client: Any, route: str, body: Schema
) -> None:
    lead = await sidecar_client(role="lead")
    sc = lead.app[SIDECAR]
    crew = await aiohttp_client(create_crew_app(sc.tiers["crew"], sc.search, TOKEN, lead=sc))
    resp = await crew.post(route, json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    refused = (await resp.json())["error"]
    assert resp.status == 400, refused
    bad = next(name for name in body if name in ("limt", "colour", "limit", "content", "k", "confidence"))
    assert refused["code"] in ("unknown_field", f"invalid_{bad}"), refused
    # The agent API's own answer to the same request, word for word.
    own = route.replace("/crew/memory/", "/memory/").replace("/crew/kg/", "/kg/").replace("/crew/", "/memory/")
    mine = await lead.post(own, json=body)
    assert mine.status == 400
    assert {k: (await mine.json())["error"].get(k) for k in ("code", "message")} == {
        k: refused.get(k) for k in ("code", "message")
    }


def test_the_documents_paths_are_the_registrys_operations() -> None:
    """The document lists the registry's operations, in its order; answers written for a route the
    registry lacks, or an operation without answers, stop the document being made."""
    from sidecar.http.openapi import ANSWERS, paths_of

    routes = [(path, method.upper()) for path, ops in DOCUMENT["paths"].items() for method in ops]
    assert routes == list(dict.fromkeys((op.path, op.method) for op in OPERATIONS))
    missing = copy.deepcopy(ANSWERS)
    del missing["/kg/tunnels"]
    with pytest.raises(LookupError, match="POST /kg/tunnels"):
        paths_of(missing)
    extra = {**copy.deepcopy(ANSWERS), "/memory/shred": {"post": {"summary": "x", "responses": {}}}}
    with pytest.raises(LookupError, match="POST /memory/shred"):
        paths_of(extra)
