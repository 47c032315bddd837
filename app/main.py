"""The FastAPI application: create_app() and its lifespan (engines, Redis, queue made here)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline

from app.api import (
    banks,
    distill,
    entities,
    events,
    health,
    jobs,
    memories,
    pages,
    portability,
    query,
    timeline,
    ui,
    usage,
    webhooks,
)
from app.banks.access import AccessCache
from app.config import Settings, get_settings
from app.db.engine import autocommit, create_engine, create_sessionmaker
from app.db.replica import ReadRouting
from app.errors import install_error_handlers
from app.events.group_commit import AppendGroups
from app.events.working_memory import WorkingMemory
from app.jobs.queue import TaskQueue
from app.jobs.unit_of_work import UnitOfWork
from app.mcp import server as mcp
from app.middleware import BodySizeLimitMiddleware, JsonBodyMiddleware, MetricsMiddleware
from app.providers.embeddings import LazyEmbedder
from app.providers.rerank import build_reranker
from app.query.recorder import ReadRecorder
from app.ratelimit import RateLimiter, RateLimitMiddleware
from app.schemas.examples import add_examples
from app.text import segment
from app.webhooks import outbox as webhook_outbox

log = logging.getLogger(__name__)

DESCRIPTION = """Agent memory as a service. Append raw conversation events; workers distil them into
typed memory units; queries return the few units that matter, newest truth first.

Errors are RFC 9457 `application/problem+json`. Authenticate with `Authorization: Bearer <key>`."""


REDIS_MAX_CONNECTIONS = 100  # per API process; each request holds one for a round trip or two


async def warm_up(embedder: LazyEmbedder) -> None:
    """Load, as the process starts serving, what its first queries would otherwise wait for: the
    embedding model (~0.3 s) and jieba's dictionary (~1 s, for the first Chinese query). Then what
    the process holds for good leaves the garbage collector's view (`gc.freeze`): a full collection
    scanned its ~260,000 containers, a pause of 130–250 ms that was the tail of appends (p99)."""
    try:
        await embedder.load()
        await asyncio.to_thread(segment, "预热")
    except Exception as exc:  # the first request that needs it tries again, and says why
        log.warning("warm-up failed: %s", exc)
    gc.freeze()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from worker.factory import create_celery

        engine = create_engine(settings)
        # A blocking pool: past its connections a call waits (as long as any Redis call may take) instead
        # of failing at once, which under a burst would fail the rate limit open and drop working memory.
        redis = aioredis.Redis.from_pool(
            aioredis.BlockingConnectionPool.from_url(
                settings.redis_url,
                max_connections=REDIS_MAX_CONNECTIONS,
                timeout=settings.redis_timeout_seconds,
                socket_timeout=settings.redis_timeout_seconds,
                socket_connect_timeout=settings.redis_timeout_seconds,
            )
        )
        app.state.settings = settings
        app.state.engine = engine
        app.state.sessionmaker = create_sessionmaker(engine)
        app.state.read_sessionmaker = create_sessionmaker(autocommit(engine))
        # Its connections are pinged on checkout: a replica gone is found before a statement fails.
        replica = (
            create_engine(settings, url=settings.read_database_url, pre_ping=True)
            if settings.read_database_url
            else None
        )
        app.state.reads = ReadRouting(replica, settings.read_replica_retry_seconds)
        app.state.redis = redis
        app.state.access = AccessCache(redis)  # who may append where, under Redis's access generation
        app.state.rate_limiter = RateLimiter(
            redis,
            per_second=settings.rate_limit_per_second,
            burst=settings.rate_limit_burst,
            secret=settings.admin_key.get_secret_value(),
        )
        app.state.working_memory = WorkingMemory(
            redis,
            max_turns=settings.working_memory_max_turns,
            ttl_seconds=settings.working_memory_ttl_seconds,
        )
        app.state.queue = TaskQueue(create_celery(settings))
        webhook_outbox.attach(app.state.sessionmaker, app.state.queue, blocking=False)
        app.state.work = UnitOfWork(app.state.sessionmaker, app.state.queue)  # commits, then sends jobs
        app.state.append_groups = AppendGroups(
            app.state.work,
            max_events=settings.append_group_max_events,
            wait_seconds=settings.append_group_wait_ms / 1000,
        )
        app.state.embedder = LazyEmbedder(settings)
        warming = asyncio.create_task(warm_up(app.state.embedder), name="warm-up")
        app.state.recorder = ReadRecorder(app.state.sessionmaker)
        app.state.recorder.start()
        app.state.reranker = build_reranker(settings)
        try:
            async with mcp.lifespan(app):  # the MCP session manager at /mcp
                yield
        finally:
            warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await warming
            await app.state.recorder.stop()
            await app.state.append_groups.aclose()
            await app.state.embedder.aclose()
            if app.state.reranker is not None:
                await app.state.reranker.aclose()
            await redis.aclose()
            await app.state.reads.aclose()
            await engine.dispose()

    # Swagger UI and ReDoc from the package's own copies of their assets: /docs works offline.
    app = FastAPIOffline(
        title="Hindsight",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        # Error responses are declared per router and route (app.schemas.problems), with their schema.
    )
    install_error_handlers(app)
    app.add_middleware(JsonBodyMiddleware)  # inside the body limit: it sees the body already bounded
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.max_body_bytes)
    # Outside the body limit (refuse before reading a body), inside CORS (a browser can read the 429).
    app.add_middleware(RateLimitMiddleware)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["Retry-After"],  # not CORS-safelisted: a browser client needs it after 429/503
        )
    app.add_middleware(MetricsMiddleware)
    for module in (
        health,
        banks,
        portability,
        events,
        distill,
        memories,
        query,
        jobs,
        timeline,
        entities,
        pages,
        webhooks,
        usage,
    ):
        app.include_router(module.router)
    mcp.mount(app)
    ui.mount(app)  # the web console at /ui (its own security headers) and GET /v1/whoami
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:  # generated once, then cached by FastAPI
            app.openapi_schema = add_examples(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
