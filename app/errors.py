"""One error hierarchy, rendered as RFC 9457 problem+json by one set of handlers."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"


class AppError(Exception):
    status = 500
    title = "Internal Server Error"

    def __init__(self, message: str, *, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors
        self.headers: dict[str, str] = {}


class BadRequest(AppError):
    status, title = 400, "Bad Request"


class Unauthorized(AppError):
    status, title = 401, "Unauthorized"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.headers = {"WWW-Authenticate": "Bearer"}


class Forbidden(AppError):
    status, title = 403, "Forbidden"


class NotFound(AppError):
    status, title = 404, "Not Found"


class Conflict(AppError):
    status, title = 409, "Conflict"


class TooLarge(AppError):
    status, title = 413, "Payload Too Large"


class Invalid(AppError):
    status, title = 422, "Unprocessable Content"


class Unavailable(AppError):
    status, title = 503, "Service Unavailable"


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"https://hindsight.dev/problems/{status}",
        "title": title,
        "status": status,
        "detail": detail,
    }
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


# SQLSTATE classes that mean "not now" rather than "wrong": connection exception (08), insufficient
# resources such as too many connections (53), operator intervention: shutdown, restart (57P).
UNAVAILABLE_SQLSTATES = ("08", "53", "57P")


def _sqlstate(exc: DBAPIError) -> str:
    """The error's SQLSTATE as the driver reports it ("" when it has none)."""
    sqlstate = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    return sqlstate if isinstance(sqlstate, str) else ""


def database_unavailable(exc: DBAPIError) -> bool:
    """Whether a database error means PostgreSQL is unreachable, restarting or out of connections."""
    if isinstance(exc, OperationalError | InterfaceError) or exc.connection_invalidated:
        return True
    return _sqlstate(exc).startswith(UNAVAILABLE_SQLSTATES)


def transient_conflict(exc: DBAPIError) -> bool:
    """Whether PostgreSQL cancelled the statement for a conflict that a retry does not meet again
    (SQLSTATE class 40): a hot standby's recovery removing rows the read still needed ("conflict with
    recovery", 40001), a deadlock (40P01), a serialization failure."""
    return _sqlstate(exc).startswith("40")


def _jsonable_errors(errors: Any) -> list[dict[str, Any]]:
    out = []
    for err in errors:
        item = {
            "loc": list(err.get("loc", ())),
            "msg": str(err.get("msg", "")),
            "type": err.get("type"),
        }
        out.append(item)
    return out


def _retry_shortly(detail: str) -> JSONResponse:
    """503 with `Retry-After: 1`: not the client's fault, and a retry a moment later may succeed."""
    return problem(503, "Service Unavailable", detail, headers={"Retry-After": "1"})


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(_: Request, exc: AppError) -> JSONResponse:
        return problem(exc.status, exc.title, exc.message, errors=exc.errors, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _jsonable_errors(exc.errors())
        if any(e["type"] == "json_invalid" for e in errors):
            return problem(400, "Bad Request", "The request body is not valid JSON.", errors=errors)
        return problem(422, "Unprocessable Content", "The request is invalid.", errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, RecursionError):  # FastAPI's 400 for a body json.loads gave up on
            return problem(422, "Unprocessable Content", "The JSON body is nested too deeply.")
        title = {404: "Not Found", 405: "Method Not Allowed"}.get(exc.status_code, "Error")
        return problem(exc.status_code, title, str(exc.detail), headers=dict(exc.headers or {}))

    @app.exception_handler(DBAPIError)
    async def _db_refused(_: Request, exc: DBAPIError) -> JSONResponse:
        if database_unavailable(exc):  # down, restarting, out of connections: not the client's fault
            log.warning("database unavailable: %s", exc.orig)
            return _retry_shortly("The database is unavailable; retry shortly.")
        if transient_conflict(exc):
            log.warning("statement cancelled by a conflict: %s", exc.orig)
            return _retry_shortly(
                "The database cancelled the statement for a conflict with concurrent work; retry."
            )
        # A value PostgreSQL (SQLSTATE class 22, "data exception"; class 54, "program limit exceeded",
        # e.g. a key too long for an index) or the driver refused: input the schemas should have
        # caught. Answer as invalid input, and log it so the gap gets closed.
        cause = exc.orig.__cause__ if exc.orig is not None else None
        if _sqlstate(exc).startswith(("22", "54")) or isinstance(cause, ValueError):
            log.warning("the database refused a value: %s", exc.orig)
            return problem(
                422, "Unprocessable Content", "A value of the request cannot be stored or compared."
            )
        log.exception("unhandled database error", exc_info=exc)
        return problem(500, "Internal Server Error", "An unexpected error occurred.")

    @app.exception_handler(OSError)
    async def _connection_error(_: Request, exc: OSError) -> JSONResponse:
        log.warning("backing service unreachable: %s", exc)
        return _retry_shortly("A backing service is unavailable; retry shortly.")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return problem(500, "Internal Server Error", "An unexpected error occurred.")
