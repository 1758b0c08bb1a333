"""Walking a JSON document (the OpenAPI document, a schema) for the string values of one key."""

from __future__ import annotations

from collections.abc import Iterator


def string_values(node: object, key: str) -> Iterator[str]:
    """Every string ``key`` holds anywhere in ``node``, in document order."""
    if isinstance(node, dict):
        if isinstance(node.get(key), str):
            yield node[key]
        for value in node.values():
            yield from string_values(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from string_values(value, key)
