"""Every domain error of the sidecar, in one place.

Each error carries a stable ``code`` and the HTTP ``status`` the edge maps it to; ``extra`` is
merged into the JSON error body (``{"error": {"code", "message", **extra}}``). Only the HTTP
middleware turns these into responses.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, ClassVar

__all__ = [
    "BadRequest",
    "CapExceeded",
    "ConfigError",
    "Conflict",
    "CrewUnavailable",
    "EngineUnavailable",
    "Forbidden",
    "IndexCorrupt",
    "InjectionSuspected",
    "NotFound",
    "PayloadTooLarge",
    "SearchFailed",
    "SidecarError",
    "TierLocked",
    "TierMissing",
    "Unauthorized",
    "WriteFailed",
    "WritesStalled",
    "refuse_unknown",
]


class SidecarError(Exception):
    """Base of every error the sidecar reports to a client."""

    status: ClassVar[int] = 500
    default_code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


class ConfigError(SidecarError):
    """Settings that cannot be used; raised before anything starts."""

    status = 500
    default_code = "config_error"


class TierLocked(ConfigError):
    """Another sidecar already serves this tier dir (it holds the dir's lock); nothing was touched."""

    default_code = "tier_locked"


class BadRequest(SidecarError):
    status = 400
    default_code = "bad_request"


def refuse_unknown(fields: Iterable[str], allowed: Collection[str]) -> None:
    """400 ``unknown_field`` naming the first field of a request that its operation does not take.
    Every way in (HTTP, MCP, the crew listener) and every request parser refuses with this one
    function, so the answer is the same wherever the field was sent."""
    unknown = sorted(name for name in fields if name not in allowed)
    if unknown:
        taken = ", ".join(sorted(allowed)) or "none"
        raise BadRequest(
            f"unknown field: {unknown[0]} (this operation takes: {taken})", code="unknown_field", field=unknown[0]
        )


class Unauthorized(SidecarError):
    status = 401
    default_code = "unauthorized"


class Forbidden(SidecarError):
    status = 403
    default_code = "forbidden"


class NotFound(SidecarError):
    status = 404
    default_code = "not_found"


class Conflict(SidecarError):
    status = 409
    default_code = "conflict"


class NoCrewTier(Conflict):
    """A crew scope or tier asked of a solo sidecar: this sidecar's configuration, not a passing
    outage, so retrying cannot help (409, never 503)."""

    default_code = "no_crew_tier"


class ClientClosed(SidecarError):
    """The client closed the connection while its request was being worked on: the work stopped.
    499, as web servers log it: the client's doing, never counted as a server error."""

    status = 499
    default_code = "client_closed"


class PayloadTooLarge(SidecarError):
    status = 413
    default_code = "payload_too_large"


class CapExceeded(SidecarError):
    """A write would push a file or tier past its hard cap; nothing was written."""

    status = 413
    default_code = "cap_exceeded"


class InjectionSuspected(SidecarError):
    """The write-path scanner found a prompt-injection pattern; nothing was written."""

    status = 422
    default_code = "injection_suspected"


class EngineUnavailable(SidecarError):
    """The requested memory engine does not exist here (e.g. crew scope on a solo agent)."""

    status = 503
    default_code = "engine_unavailable"


class TierMissing(EngineUnavailable):
    """The tier dir vanished while running (an unmounted volume?); it is not silently recreated."""

    default_code = "tier_dir_missing"


class WritesStalled(EngineUnavailable):
    """The write thread has been stuck on one write for too long (a hung disk?): new writes are
    refused at once rather than queued behind it, and the sink reports unhealthy."""

    default_code = "writes_stalled"


class CrewUnavailable(EngineUnavailable):
    """The lead's sidecar (or the crew store) could not be reached or answered garbage."""

    default_code = "crew_unavailable"

    @classmethod
    def store_down(cls) -> CrewUnavailable:
        """The crew store (PostgreSQL) could not be reached or did not answer in time."""
        return cls("crew tier unavailable: the crew store cannot be reached", store="postgres")


class SearchFailed(SidecarError):
    status = 500
    default_code = "search_failed"


class WriteFailed(SidecarError):
    """A durable write could not complete; the old content is intact."""

    status = 500
    default_code = "write_failed"


class IndexCorrupt(SidecarError):
    status = 500
    default_code = "index_corrupt"
