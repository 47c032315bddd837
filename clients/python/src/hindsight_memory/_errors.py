"""Exceptions: one per HTTP status of the contract, built from the server's problem+json, and the
transport's own (the request never got an answer)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

# The public exceptions (the package exports these).
__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "HindsightError",
    "JobTimeoutError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServiceUnavailableError",
    "UnprocessableEntityError",
]


class HindsightError(Exception):
    """Base of every exception this client raises."""


class APIError(HindsightError):
    """The server answered with an error status; the fields are those of its RFC 9457 problem."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str,
        *,
        type: str = "about:blank",
        errors: list[dict[str, Any]] | None = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(f"{status} {title}: {detail}" if detail else f"{status} {title}")
        self.status = status
        self.title = title
        self.detail = detail
        self.type = type
        self.errors = errors
        self.response = response

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked to wait (its `Retry-After`), if it said."""
        return retry_after(self.response) if self.response is not None else None


class BadRequestError(APIError):
    """400: malformed JSON body or cursor."""


class AuthenticationError(APIError):
    """401: missing or invalid key."""


class PermissionDeniedError(APIError):
    """403: the key lacks the scope, or the operation is admin-only."""


class NotFoundError(APIError):
    """404: not found, or another bank's."""


class ConflictError(APIError):
    """409: conflicts with the current state."""


class UnprocessableEntityError(APIError):
    """422: invalid input; `errors` holds one entry per problem (`loc`, `msg`, `type`)."""


class RateLimitError(APIError):
    """429: the key's rate limit is exhausted; `retry_after` says for how long."""


class ServiceUnavailableError(APIError):
    """503: a backing service (database, Redis, worker) is unavailable."""


class APIConnectionError(HindsightError):
    """No answer: the server could not be reached, or the connection broke before its reply."""

    def __init__(self, message: str, *, cause: Exception | None = None) -> None:
        super().__init__(message)
        self.__cause__ = cause


class APITimeoutError(APIConnectionError):
    """No answer within the client's `timeout`."""


class JobTimeoutError(HindsightError, TimeoutError):
    """`jobs.wait` gave up: the job had not finished within its `timeout`; `job` is its last state."""

    def __init__(self, message: str, job: Any) -> None:
        super().__init__(message)
        self.job = job


STATUS_ERRORS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_from_response(response: httpx.Response) -> APIError:
    """The exception for an error response: its problem+json fields, or what a non-problem body
    (a proxy's HTML page) allows."""
    body: Any = None
    try:
        body = response.json()
    except ValueError:
        pass
    problem = body if isinstance(body, dict) else {}
    errors = problem.get("errors")
    cls = STATUS_ERRORS.get(response.status_code, APIError)
    return cls(
        response.status_code,
        str(problem.get("title") or response.reason_phrase or "Error"),
        str(problem.get("detail") or ("" if problem else response.text[:500])),
        type=str(problem.get("type") or "about:blank"),
        errors=errors if isinstance(errors, list) else None,
        response=response,
    )


def transport_error(exc: httpx.TransportError) -> APIConnectionError:
    cls = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    return cls(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, cause=exc)


def retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (a number or an HTTP date), None when absent or unreadable."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
