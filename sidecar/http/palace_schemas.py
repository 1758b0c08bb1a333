"""The palace's answer shapes, by operation: the OpenAPI document and the MCP tools' output schemas
take them from here (its requests are the registry's, ``sidecar.ops.requests``). Each is the
JSON Schema of the TypedDict its operation returns (``sidecar.ops.answers``)."""

from __future__ import annotations

from typing import Any

from sidecar.contract import json_schema
from sidecar.ops.answers import (
    AgentSettingsAnswer,
    DeleteAnswer,
    DiaryReadAnswer,
    DiaryWriteAnswer,
    IdentityAnswer,
    IngestAnswer,
    ListAnswer,
    TaxonomyAnswer,
)

__all__ = ["ANSWERS", "TYPES"]

#: operation -> the TypedDict it answers with
TYPES: dict[str, type] = {
    "list": ListAnswer,
    "taxonomy": TaxonomyAnswer,
    "delete": DeleteAnswer,
    "identity": IdentityAnswer,
    "diary_write": DiaryWriteAnswer,
    "diary_read": DiaryReadAnswer,
    "ingest": IngestAnswer,
    "agent_settings": AgentSettingsAnswer,
}
ANSWERS: dict[str, dict[str, Any]] = {name: json_schema(shape, inline=True) for name, shape in TYPES.items()}
