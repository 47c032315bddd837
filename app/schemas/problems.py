"""The error responses routes declare in OpenAPI: RFC 9457 problem+json, as app.errors renders them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.errors import PROBLEM_JSON


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = Field(description="A URI naming the kind of problem.")
    title: str
    status: int
    detail: str = Field(description="What went wrong with this request.")
    errors: list[dict[str, Any]] | None = Field(
        default=None, description="Invalid input: one entry per problem, with its `loc`, `msg` and `type`."
    )


_SCHEMA = Problem.model_json_schema()
_RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}
}
_WHY: dict[int, str] = {
    400: "Malformed JSON body or cursor",
    401: "Missing or invalid key",
    403: "The key lacks the scope, or the operation is admin-only",
    404: "Not found, or another bank's",
    409: "Conflicts with the current state",
    413: "The body is over the size limit",
    415: "The body is not sent as JSON (Content-Type: application/json)",
    422: "Invalid input",
    429: "This key's rate limit is exhausted",
    503: "A backing service is unavailable",
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}},
    429: _RETRY_AFTER,
    503: _RETRY_AFTER,
}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route or router: each status as an `application/problem+json` Problem."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        response: dict[str, Any] = {
            "description": f"{_WHY[status]} (problem+json)",
            "content": {PROBLEM_JSON: {"schema": _SCHEMA}},
        }
        if status in _HEADERS:
            response["headers"] = _HEADERS[status]
        out[status] = response
    return out


# What every authenticated operation may answer (a 503 may come without Retry-After: readiness).
AUTHENTICATED = problem_responses(401, 422, 429, 503)
# Operations on one bank (or one of its resources): another bank's answers 404, a missing scope 403.
IN_A_BANK = problem_responses(401, 403, 404, 422, 429, 503)
# Operations with a JSON body: malformed JSON is 400, a body over the limit 413, not sent as JSON 415.
WITH_BODY = problem_responses(400, 413, 415)
# POST without a JSON body: the size limit still reads (and may refuse) whatever is sent.
SIZE_LIMITED = problem_responses(413, 415)
# Cursor-paginated lists: a cursor that is not one of ours is 400.
PAGINATED = problem_responses(400)
CONFLICT = problem_responses(409)
ADMIN_ONLY = problem_responses(403)
