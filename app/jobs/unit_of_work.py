"""One unit of work: a session committed once, at its end, then the jobs its transactions created
sent. Never before the commit (a worker would look for a row that is not there yet) and never after
a rollback; the jobs table is the outbox, so a message lost after the commit is resent by the sweep.
A request (REST or MCP: `Services.session`) and a job (`app.jobs.service.run`) each run in one;
services schedule jobs (`app.jobs.schedule`, which calls `enqueue`) and never commit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import commit_hooks
from app.db.commit_hooks import enqueue
from app.db.models import Job
from app.db.repositories import jobs as repo
from app.jobs.queue import TaskQueue

__all__ = ["UnitOfWork", "enqueue"]


@dataclass(frozen=True)
class UnitOfWork:
    """Made once per process (the API's lifespan, the worker's runtime): sessions and where jobs go."""

    sessionmaker: async_sessionmaker[AsyncSession]
    queue: TaskQueue

    @asynccontextmanager
    async def session(
        self, maker: async_sessionmaker[AsyncSession] | None = None
    ) -> AsyncIterator[AsyncSession]:
        """A session (of `maker`, by default the primary's) committed at the end when still in a
        transaction, rolled back on an exception; then what its commits left to do is done."""
        async with commit_hooks.collect() as committed:
            async with (maker or self.sessionmaker)() as db:
                yield db
                if db.in_transaction():
                    await db.commit()
        for action in committed.actions:
            await action()
        await self.send(list(committed.jobs.values()))

    async def send(self, jobs: Sequence[Job]) -> None:
        """Publish committed jobs; record which were sent, so the sweep knows which messages may be lost."""
        sent = [job.id for job in jobs if await self.queue.send(job.kind, job.id)]
        if sent:
            async with self.sessionmaker() as db, db.begin():
                await repo.mark_enqueued(db, sent)
