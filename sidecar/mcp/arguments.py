"""A tool's arguments held to the ``inputSchema`` it advertises, with the HTTP API's error codes.

The registry's rules for every request come first, as over HTTP (``sidecar.ops.registry``): a
field the tool does not take is 400 ``unknown_field``, naming it, so a typo such as ``limt`` is
never ignored; a NUL, a lone surrogate or an integer wider than 64 bits anywhere is
``invalid_<field>``. Anything else the schema refuses is first put to the operation's own check, which knows the HTTP API's exact codes
(``missing_query``, ``empty_query``, ``no_crew_tier`` ...); should that check let it pass, the
arguments are refused all the same, as ``missing_<field>`` or ``invalid_<field>``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from sidecar.errors import BadRequest
from sidecar.ops.registry import check_values, refuse_unknown

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]
    from jsonschema.protocols import Validator  # type: ignore[import-untyped]

__all__ = ["check_arguments"]

Schema = dict[str, Any]
#: Runs the operation's own check of the arguments; raises its BadRequest, or returns.
Probe = Callable[[dict[str, Any]], Awaitable[None]]


async def check_arguments(schema: Schema, args: dict[str, Any], probe: Probe | None) -> None:
    """Raise the BadRequest the HTTP API would give for ``args``, if the schema refuses them."""
    refuse_unknown(args, frozenset(schema.get("properties", {})))
    check_values(args)
    error = _first_error(schema, args)
    if error is None:
        return
    if probe is not None:
        await probe(args)  # raises the operation's own, exact, refusal
    raise _refusal(error)


def _first_error(schema: Schema, args: dict[str, Any]) -> ValidationError | None:
    from jsonschema.exceptions import best_match

    error: ValidationError | None = best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(args))
    return error


@functools.lru_cache(maxsize=256)
def _validator(schema: str) -> Validator:
    """A compiled validator per schema (compiling costs far more than validating)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    validator: Validator = Draft202012Validator(json.loads(schema))
    return validator


def _refusal(error: ValidationError) -> BadRequest:
    """``missing_<field>`` for a required field left out, ``invalid_<field>`` for any other problem;
    the message names the rule broken, never the value (which may be long)."""
    if error.validator == "required" and not error.path:
        missing = [name for name in error.validator_value if name not in error.instance]
        field = str(missing[0]) if missing else "arguments"
        return BadRequest(f"missing field: {field}", code=f"missing_{field}", field=field)
    field = str(error.path[0]) if error.path else "arguments"
    where = "".join(f"[{part!r}]" for part in list(error.path)[1:])
    rule = json.dumps(error.validator_value, default=str)
    rule = rule if len(rule) <= 200 else rule[:200] + "..."
    return BadRequest(
        f"{field}{where} is outside the tool's input schema ({error.validator}: {rule})",
        code=f"invalid_{field}",
        field=field,
    )
