"""Engines and session factories. Made by the app lifespan or the worker runtime, never at import."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import asyncpg
from sqlalchemy import event, text
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import ORMExecuteState, Session
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from app.config import Settings

if TYPE_CHECKING:
    from psycopg2.extensions import cursor

# The server closed or is closing the connection: connection failure (08), shutdown or restart (57P0x).
DISCONNECT_SQLSTATES = ("08", "57P01", "57P02", "57P03")
# A pooled connection idle for longer than this is pinged before it is handed out.
IDLE_PING_SECONDS = 2.0


def is_dead_connection(error: BaseException | None) -> bool:
    """Errors after which a pooled connection must not be used again. asyncpg reports a session the
    server terminated mid-operation as InternalClientError ("cannot switch to state …") as often as
    a closed connection, and SQLAlchemy would return that connection to the pool
    (sqlalchemy/sqlalchemy#13241), so every later checkout fails."""
    while error is not None:
        if isinstance(error, asyncpg.exceptions.InternalClientError):
            return True
        sqlstate = getattr(error, "sqlstate", None)
        if isinstance(sqlstate, str) and sqlstate.startswith(DISCONNECT_SQLSTATES):
            return True
        error = error.__cause__
    return False


def _invalidate_dead_connections(context: ExceptionContext) -> None:
    if not context.is_disconnect and is_dead_connection(context.original_exception):
        context.is_disconnect = True


def _mark_checkin(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    record.info["checked_in_at"] = time.monotonic()


def _ping_if_idle(dbapi_connection: Any, record: ConnectionPoolEntry, proxy: PoolProxiedConnection) -> None:
    """Pool checkout: ping a connection that sat idle, so one left over from before a PostgreSQL
    restart is replaced, not handed out. A connection in use moments ago is not pinged: a ping is
    three round trips (BEGIN, `;`, ROLLBACK) on a request of a few; if the server died since, the
    statement fails, `_invalidate_dead_connections` marks it a disconnect and SQLAlchemy drops every
    connection of the pool opened before (the request answers 503, a retry gets a new connection)."""
    checked_in = record.info.get("checked_in_at")
    if checked_in is not None and time.monotonic() - checked_in > IDLE_PING_SECONDS:
        try:
            dbapi_connection.ping()
        except Exception as exc:
            raise DisconnectionError("the pooled connection is dead") from exc


def create_engine(
    settings: Settings, *, url: str | None = None, pool_size: int | None = None, pre_ping: bool = False
) -> AsyncEngine:
    """`pre_ping`: test every connection on checkout (one round trip), so a server that went away is
    found before the request's first statement (the read replica's engine: reads then fall back)."""
    engine = create_async_engine(
        url or settings.database_url,
        pool_pre_ping=pre_ping,
        pool_size=pool_size or settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_recycle=1800,
        connect_args={
            "timeout": 5,
            "command_timeout": 60,
            # HNSW scans keep going until enough rows pass the query's filters (pgvector ≥ 0.8).
            # Custom plans only: the query channels' best plan depends on their parameters (how
            # common a tag is, how wide a time window); a generic plan guesses and can scan a bank.
            "server_settings": {
                "hnsw.iterative_scan": "relaxed_order",
                "hnsw.ef_search": "100",
                "plan_cache_mode": "force_custom_plan",
            },
        },
    )
    event.listen(engine.sync_engine, "handle_error", _invalidate_dead_connections)
    event.listen(engine.sync_engine.pool, "checkin", _mark_checkin)
    event.listen(engine.sync_engine.pool, "checkout", _ping_if_idle)
    return engine


class _Session(Session):
    """The sessions of this project's sessionmakers (see `_sync_matched_by_returning`)."""


@event.listens_for(_Session, "do_orm_execute")
def _sync_matched_by_returning(state: ORMExecuteState) -> None:
    """An ORM UPDATE or DELETE updates the loaded objects it matched by the rows its RETURNING names
    ("fetch"), not by evaluating its WHERE on every object the session holds (SQLAlchemy's default,
    "evaluate"): a resolution batch holds hundreds of units and runs several updates per unit, which
    made that evaluation a tenth of a worker's CPU. The loaded objects end the same either way."""
    if (state.is_update or state.is_delete) and not state.is_executemany:
        if "synchronize_session" not in state.execution_options:
            state.update_execution_options(synchronize_session="fetch")


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False, sync_session_class=_Session)


def autocommit(engine: AsyncEngine) -> AsyncEngine:
    """The engine's pool, outside transactions: for reads, no BEGIN / COMMIT round trips."""
    return engine.execution_options(isolation_level="AUTOCOMMIT")


async def database_ready(engine: AsyncEngine) -> bool:
    """PostgreSQL runs a statement on a connection of the engine's pool (readiness)."""
    async with engine.connect() as conn:
        return bool((await conn.execute(text("SELECT 1"))).scalar_one() == 1)


def create_database(cur: cursor, name: str) -> None:
    """Create the database `name` unless it exists: the embedded server's one-off bootstrap, through a
    sync cursor on an autocommit connection (CREATE DATABASE cannot run in a transaction)."""
    cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
    if cur.fetchone() is None:
        cur.execute(f'CREATE DATABASE "{name}"')
