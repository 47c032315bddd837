"""Jobs: create (inside the caller's transaction), send after commit, run in a worker."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.banks.service import Principal
from app.db.models import Job
from app.db.repositories import jobs as repo
from app.errors import NotFound
from app.jobs.queue import TaskQueue
from app.metrics import JOBS_FINISHED
from app.webhooks import events as webhooks

log = logging.getLogger(__name__)

JobHandler = Callable[[AsyncSession, Job], Awaitable[dict[str, Any] | None]]


class RetryableError(Exception):
    """A transient failure (LLM 5xx, lock busy): the job goes back to `queued` and is retried."""


async def create(
    db: AsyncSession,
    kind: str,
    *,
    bank_id: str | None = None,
    params: dict[str, Any] | None = None,
    dedupe_key: str | None = None,
    max_attempts: int = 3,
) -> tuple[Job, bool]:
    """Create a job in the caller's transaction; send it with a JobSender once committed."""
    return await repo.create_job(
        db,
        kind=kind,
        bank_id=bank_id,
        params=params or {},
        dedupe_key=dedupe_key,
        max_attempts=max_attempts,
    )


async def get_visible(db: AsyncSession, principal: Principal, job_id: uuid.UUID) -> Job:
    """A job the caller may see: any for the admin key, its bank's for a bank key; else 404."""
    job = await repo.get_job(db, job_id)
    if job is None or not (principal.is_admin or job.bank_id == principal.bank_id):
        raise NotFound(f"Job {job_id} not found.")
    return job


@dataclass(frozen=True)
class JobSender:
    """Commit, then send: how every request (REST or MCP) and every task that creates jobs ends. Never
    the other way round, so a worker never looks for a job row that is not committed yet; a message
    lost after the commit is resent by the sweep (the database is the outbox)."""

    sessionmaker: async_sessionmaker[AsyncSession]
    queue: TaskQueue

    async def commit_and_send(self, db: AsyncSession, jobs: Sequence[Job | None] = ()) -> None:
        await db.commit()
        await self.send(jobs)

    async def send(self, jobs: Sequence[Job | None]) -> None:
        """Publish jobs the caller has committed already (an append or a task's transaction; None:
        nothing to send); record which were sent, so the sweep knows which messages may be lost."""
        sent = [job.id for job in jobs if job is not None and await self.queue.send(job.kind, job.id)]
        if sent:
            async with self.sessionmaker() as db, db.begin():
                await repo.mark_enqueued(db, sent)


async def run(
    sessionmaker: async_sessionmaker[AsyncSession],
    job_id: uuid.UUID,
    handler: JobHandler,
    *,
    deadline: timedelta,
) -> str:
    """Claim, run and finish one job. Returns the job's final status, or `skipped` when another
    worker holds it or it is already done (duplicated and redelivered messages end here)."""
    async with sessionmaker() as db, db.begin():
        job = await repo.claim(db, job_id, deadline)
    if job is None:
        return "skipped"
    try:
        async with sessionmaker() as db, db.begin():
            result = await handler(db, job)
            await repo.finish(db, job.id, status="succeeded", result=result or {})
    except Exception as exc:
        retry = isinstance(exc, RetryableError) and job.attempts < job.max_attempts
        log.warning(
            "job %s (%s) attempt %d failed: %r",
            job.id,
            job.kind,
            job.attempts,
            exc,
            exc_info=not isinstance(exc, RetryableError),
        )
        async with sessionmaker() as db, db.begin():
            if retry:
                await repo.release_for_retry(db, job.id, f"{type(exc).__name__}: {exc}")
            else:
                await repo.finish(db, job.id, status="failed", error=f"{type(exc).__name__}: {exc}")
                await webhooks.job_failed(db, job, f"{type(exc).__name__}: {exc}")
        status = "queued" if retry else "failed"
        JOBS_FINISHED.labels(job.kind, status).inc()
        return status
    JOBS_FINISHED.labels(job.kind, "succeeded").inc()
    return "succeeded"
