"""The FastAPI application: create_app() and its lifespan (engines, Redis, queue made here)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from app.api import banks, distill, entities, events, health, jobs, memories, query, timeline
from app.config import Settings, get_settings
from app.db.engine import create_engine, create_sessionmaker
from app.errors import install_error_handlers
from app.events.working_memory import WorkingMemory
from app.jobs.queue import TaskQueue
from app.mcp import server as mcp
from app.middleware import BodySizeLimitMiddleware, MetricsMiddleware
from app.providers.embeddings import LazyEmbedder
from app.query.recorder import ReadRecorder

DESCRIPTION = """Agent memory as a service. Append raw conversation events; workers distil them into
typed memory units; queries return the few units that matter, newest truth first.

Errors are RFC 9457 `application/problem+json`. Authenticate with `Authorization: Bearer <key>`."""


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from worker.factory import create_celery

        engine = create_engine(settings)
        redis = aioredis.Redis.from_url(
            settings.redis_url,
            socket_timeout=settings.redis_timeout_seconds,
            socket_connect_timeout=settings.redis_timeout_seconds,
        )
        app.state.settings = settings
        app.state.engine = engine
        app.state.sessionmaker = create_sessionmaker(engine)
        app.state.redis = redis
        app.state.working_memory = WorkingMemory(
            redis,
            max_turns=settings.working_memory_max_turns,
            ttl_seconds=settings.working_memory_ttl_seconds,
        )
        app.state.queue = TaskQueue(create_celery(settings))
        app.state.embedder = LazyEmbedder(settings)
        app.state.recorder = ReadRecorder(app.state.sessionmaker)
        app.state.recorder.start()
        try:
            async with mcp.lifespan(app):  # the MCP session manager at /mcp
                yield
        finally:
            await app.state.recorder.stop()
            await app.state.embedder.aclose()
            await redis.aclose()
            await engine.dispose()

    app = FastAPI(
        title="Hindsight",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        responses={
            401: {"description": "Missing or invalid key (problem+json)"},
            404: {"description": "Not found, or another bank's (problem+json)"},
            422: {"description": "Invalid input (problem+json)"},
            503: {"description": "A backing service is unavailable (problem+json)"},
        },
    )
    install_error_handlers(app)
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    app.add_middleware(MetricsMiddleware)
    for module in (health, banks, events, distill, memories, query, jobs, timeline, entities):
        app.include_router(module.router)
    mcp.mount(app)
    return app
