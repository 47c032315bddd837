"""Which database errors mean "PostgreSQL is away" (503, and the pooled connection is dropped) and
which are the request's own (422 / 500): the classification the fault tests rely on, including the
asyncpg error a restart produces only now and then (sqlalchemy/sqlalchemy#13241)."""

from __future__ import annotations

import asyncpg
import pytest
from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_dbapi
from sqlalchemy.exc import DBAPIError

from app.db.engine import is_dead_connection
from app.errors import database_unavailable, install_error_handlers, transient_conflict

DBAPI = AsyncAdapt_asyncpg_dbapi(asyncpg)


def as_sqlalchemy_raises(error: Exception, invalidated: bool = False) -> DBAPIError:
    """The driver error translated by SQLAlchemy's asyncpg dialect, then wrapped, as it reaches us
    (`invalidated`: after the engine's handle_error hook called it a disconnect)."""
    translate = DBAPI._asyncpg_error_translate
    adapted_type = next(translate[t] for t in type(error).__mro__ if t in translate)
    adapted = adapted_type(str(error), error)
    adapted.__cause__ = error
    wrapped = DBAPIError.instance("SELECT 1", None, adapted, DBAPI.Error, connection_invalidated=invalidated)
    assert isinstance(wrapped, DBAPIError)
    return wrapped


# the server shut down or the connection was lost
SERVER_GONE = [
    asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"),
    asyncpg.exceptions.CannotConnectNowError("the database system is shutting down"),
    asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
]


@pytest.mark.parametrize(
    "error",
    [
        *SERVER_GONE,
        asyncpg.exceptions.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress"
        ),
    ],
)
def test_a_server_gone_away_is_a_dead_connection_and_a_503(error: Exception) -> None:
    assert is_dead_connection(as_sqlalchemy_raises(error).orig)
    assert database_unavailable(as_sqlalchemy_raises(error, invalidated=True))


@pytest.mark.parametrize(
    "error", [*SERVER_GONE, asyncpg.exceptions.CannotConnectNowError("the database system is starting up")]
)
def test_a_shutdown_or_lost_connection_is_a_503_by_its_sqlstate(error: Exception) -> None:
    assert database_unavailable(as_sqlalchemy_raises(error))


def test_too_many_connections_is_a_503_but_the_connection_is_not_dead() -> None:
    wrapped = as_sqlalchemy_raises(asyncpg.exceptions.TooManyConnectionsError("too many clients"))
    assert database_unavailable(wrapped)
    assert not is_dead_connection(wrapped.orig)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
        asyncpg.exceptions.InvalidTextRepresentationError("invalid input syntax"),
        asyncpg.exceptions.UndefinedColumnError("column does not exist"),
    ],
)
def test_a_statement_error_is_neither(error: Exception) -> None:
    wrapped = as_sqlalchemy_raises(error)
    assert not database_unavailable(wrapped)
    assert not transient_conflict(wrapped)
    assert not is_dead_connection(wrapped.orig)


CONFLICTS = [
    # a hot standby's replay removed rows the read still needed (max_standby_streaming_delay passed)
    asyncpg.exceptions.SerializationError("canceling statement due to conflict with recovery"),
    asyncpg.exceptions.DeadlockDetectedError("deadlock detected"),
]


@pytest.mark.parametrize("error", CONFLICTS)
async def test_a_statement_cancelled_by_a_conflict_is_a_503_to_retry(error: Exception) -> None:
    import httpx
    from fastapi import FastAPI

    wrapped = as_sqlalchemy_raises(error)
    assert transient_conflict(wrapped)
    assert not database_unavailable(wrapped)  # the database is there: the pool keeps its connection
    assert not is_dead_connection(wrapped.orig)
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/read")
    async def read() -> None:
        raise wrapped

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/read")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.headers["content-type"] == "application/problem+json"
    assert "retry" in response.json()["detail"]


@pytest.mark.parametrize(
    ("error", "answer"),
    [
        (CONFLICTS[0], "Service Unavailable (503)"),
        (SERVER_GONE[0], "Service Unavailable (503)"),
        (asyncpg.exceptions.UndefinedColumnError("column does not exist"), "Internal error (500)"),
    ],
)
async def test_mcp_tools_answer_database_errors_as_the_routes_do(
    error: Exception, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.types import ToolAnnotations

    from app.mcp import tools
    from app.mcp.arguments import ToolArguments

    async def failing(*_: object) -> None:
        raise as_sqlalchemy_raises(error)

    spec = tools.ToolSpec("memory_fail", "fails", ToolArguments, failing, ToolAnnotations())  # type: ignore[arg-type]
    monkeypatch.setitem(tools.TOOLS, spec.name, spec)
    result = await tools.call_tool(None, None, spec.name, {})  # type: ignore[arg-type]
    assert result.is_error
    assert result.content[0].text.startswith(answer)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.ProgramLimitExceededError("index row size 3000 exceeds btree maximum 2704"),
        asyncpg.exceptions.StringDataRightTruncationError("value too long for type character varying"),
    ],
)
async def test_a_value_too_large_or_refused_by_postgres_is_a_422(error: Exception) -> None:
    import httpx
    from fastapi import FastAPI

    app = FastAPI()
    install_error_handlers(app)

    @app.post("/write")
    async def write() -> None:
        raise as_sqlalchemy_raises(error)

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.post("/write")
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
