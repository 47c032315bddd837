"""Jobs: create (inside the caller's transaction), send after commit, run in a worker."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Job
from app.db.repositories import jobs as repo
from app.jobs.queue import TaskQueue
from app.metrics import JOBS_FINISHED

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
    """Create a job in the caller's transaction; send it with `send_after_commit` once committed."""
    return await repo.create_job(
        db,
        kind=kind,
        bank_id=bank_id,
        params=params or {},
        dedupe_key=dedupe_key,
        max_attempts=max_attempts,
    )


async def send_after_commit(
    sessionmaker: async_sessionmaker[AsyncSession], queue: TaskQueue, jobs: list[Job]
) -> None:
    """Publish committed jobs; record which were sent so the sweep knows what may be lost."""
    sent = [job.id for job in jobs if await queue.send(job.kind, job.id)]
    if sent:
        async with sessionmaker() as db, db.begin():
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
        status = "queued" if retry else "failed"
        JOBS_FINISHED.labels(job.kind, status).inc()
        return status
    JOBS_FINISHED.labels(job.kind, "succeeded").inc()
    return "succeeded"
