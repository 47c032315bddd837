"""Engines and session factories. Made by the app lifespan or the worker runtime, never at import."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.config import Settings


def create_engine(settings: Settings, *, url: str | None = None, pool_size: int | None = None) -> AsyncEngine:
    return create_async_engine(
        url or settings.database_url,
        pool_size=pool_size or settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_pre_ping=True,  # a restarted PostgreSQL is reconnected to without operator help
        pool_recycle=1800,
        connect_args={
            "timeout": 5,
            "command_timeout": 60,
            # HNSW scans keep going until enough rows pass the query's filters (pgvector ≥ 0.8)
            "server_settings": {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "100"},
        },
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
