"""The schemathesis run tests/http/test_openapi.py makes against a live sidecar, in one place:
the test and ``python -m tests.support.st_reach`` (the same run with other example counts or seeds)
both build it here."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["HYPOTHESIS_HOME", "ST", "st_argv", "st_env"]

ST = Path(sys.executable).with_name("st")
#: Where the ``st`` run keeps Hypothesis's tables of which characters UTF-8 encodes and their Unicode
#: categories (the generated strings are drawn from them): built once, some 2 s of CPU, then read by
#: every later run on the machine. Left to itself it would build them in its working directory,
#: a fresh temporary one each run. The same directory as tests/http/test_properties.py's.
HYPOTHESIS_HOME = Path(tempfile.gettempdir()) / "memory-sidecar-hypothesis"


#: The checks the run makes: every built-in check of ``st run`` but positive_data_acceptance (see the test).
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
)


def st_argv(url: str, report: Path, *, max_examples: int = 30, seed: int = 1) -> list[str]:
    """The ``st run`` the test makes against the document at ``url``, its JSON report to ``report``
    (``python -m tests.support.st_reach`` runs the same with other example counts or seeds)."""
    # Every check but positive_data_acceptance, named one by one: ``--checks all`` also turns on
    # max_response_time with a 10 s limit, a wall-clock bound a loaded host breaks (a consolidation
    # starts a process of its own) without anything being wrong; speed is measured in benches.
    argv = [str(ST), "run", url, "--checks", ",".join(CHECKS)]
    argv += [
        "--max-examples",
        str(max_examples),
        "--request-timeout",
        "30",
    ]
    # A request's own timeout is 30 s: a write of a megabyte of generated text is scanned before it is
    # acknowledged (seconds of CPU), and a loaded host stretches that; a hang is still caught, and the run's
    # CPU is guarded by the test.
    argv += ["--workers", "1", "--seed", str(seed), "--no-color", "--generation-database", "none"]
    # Hypothesis's too_slow health check times the generator against the clock: on a loaded host a
    # long-text pattern (the diary's 10,000 characters, say) trips it, which says nothing of the API.
    argv += ["--suppress-health-check", "too_slow"]
    argv += ["--report", "json", "--report-json-path", str(report)]
    return argv


def st_env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "HYPOTHESIS_STORAGE_DIRECTORY": str(HYPOTHESIS_HOME)}
