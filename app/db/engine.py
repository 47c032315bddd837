"""Engines and session factories. Made by the app lifespan or the worker runtime, never at import."""

from __future__ import annotations

import asyncpg
from sqlalchemy import event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.config import Settings

# The server closed or is closing the connection: connection failure (08), shutdown or restart (57P0x).
DISCONNECT_SQLSTATES = ("08", "57P01", "57P02", "57P03")


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


def create_engine(settings: Settings, *, url: str | None = None, pool_size: int | None = None) -> AsyncEngine:
    engine = create_async_engine(
        url or settings.database_url,
        pool_size=pool_size or settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_pre_ping=True,  # a restarted PostgreSQL is reconnected to without operator help
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
    return engine


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
