"""What the two doors, REST routes and MCP tools, share: the process's services, made by the app's
lifespan and kept in `app.state` (read per request, so a test may swap one)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, fields

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.applications import Starlette

from app.config import Settings
from app.db.replica import ReadRouting
from app.events.working_memory import WorkingMemory
from app.jobs.queue import TaskQueue
from app.jobs.unit_of_work import UnitOfWork
from app.providers.embeddings import Embedder
from app.providers.rerank import HttpReranker
from app.query.recorder import ReadRecorder
from app.query.rerank import RerankDeps
from app.query.service import QueryDeps


@dataclass(frozen=True)
class Services:
    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    embedder: Embedder
    queue: TaskQueue
    working_memory: WorkingMemory
    recorder: ReadRecorder
    reads: ReadRouting
    work: UnitOfWork
    reranker: HttpReranker | None  # None: no HINDSIGHT_RERANK_URL

    @classmethod
    def of(cls, app: Starlette) -> Services:
        """The services the lifespan put on `app.state`, each under its field's name."""
        return cls(**{field.name: getattr(app.state, field.name) for field in fields(cls)})

    @property
    def query_deps(self) -> QueryDeps:
        return QueryDeps(
            embedder=self.embedder,
            working_memory=self.working_memory,
            recorder=self.recorder,
            working_memory_turns=self.settings.working_memory_max_turns,
            rerank=RerankDeps(
                provider=self.reranker,
                top_n=self.settings.rerank_top_n,
                budget_ms=self.settings.rerank_budget_ms,
            ),
        )

    def session(
        self, maker: async_sessionmaker[AsyncSession] | None = None
    ) -> AbstractAsyncContextManager[AsyncSession]:
        """The unit of work of a request, REST (`app.api.deps.get_db`) or MCP (`app.mcp.tools`)."""
        return self.work.session(maker)

    @asynccontextmanager
    async def read_session(self, primary: AsyncSession) -> AsyncIterator[AsyncSession]:
        """For reads only: a session on the read replica when one answers, else `primary` (the
        caller's own session, which authorised the caller on the primary)."""
        replica = await self.reads.replica_session()
        if replica is None:
            yield primary
            return
        async with replica:
            yield replica
