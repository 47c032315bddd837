"""Jobs: create (inside the caller's transaction), read, wait for, and run in a worker."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.service import Principal
from app.db.models import Job
from app.db.repositories import jobs as repo
from app.db.repositories import units as units_repo
from app.errors import NotFound
from app.jobs.kinds import JobKind
from app.jobs.unit_of_work import UnitOfWork
from app.metrics import JOBS_FINISHED
from app.providers.metering import charging
from app.webhooks import emit as webhooks

log = logging.getLogger(__name__)

JobResult = dict[str, Any] | None
# A job's work: given the job, it opens the transactions it needs (a distillation, one per batch).
JobHandler = Callable[[Job], Awaitable[JobResult]]
# A job's work done in the job's own transaction, committed with its `succeeded` mark (the sweep).
SessionJobHandler = Callable[[AsyncSession, Job], Awaitable[JobResult]]


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
    """Create a job in the caller's transaction (`app.jobs.schedule` also sends it once committed)."""
    return await repo.create_job(
        db,
        kind=kind,
        bank_id=bank_id,
        params=params or {},
        dedupe_key=dedupe_key,
        max_attempts=max_attempts,
    )


async def create_many(
    db: AsyncSession,
    kind: str,
    wanted: Mapping[str, tuple[str | None, dict[str, Any]]],
    max_attempts: int = 3,
) -> dict[str, tuple[Job, bool]]:
    """`create` for many dedupe keys (key → (bank_id, params)) in a couple of statements; per key,
    (job, created), the job detached (its id, kind and status: what sending needs)."""
    return await repo.create_jobs(db, kind, wanted, max_attempts=max_attempts)


async def get_visible(db: AsyncSession, principal: Principal, job_id: uuid.UUID) -> Job:
    """Get a job the caller may see: any for the admin key, its bank's for a bank key; else 404."""
    job = await repo.get_job(db, job_id)
    if job is None or not (principal.is_admin or job.bank_id == principal.bank_id):
        raise NotFound(f"Job {job_id} not found.")
    return job


SEARCHABLE_KINDS = frozenset({JobKind.DISTILL})


async def searchable(db: AsyncSession, job: Job) -> bool | None:
    """For a session's distillation: whether what it distilled can be found by a query, i.e. it
    succeeded and resolution has decided every unit it wrote (none is `pending`). None for other kinds."""
    if job.kind not in SEARCHABLE_KINDS or job.bank_id is None:
        return None
    if job.status != "succeeded" or job.finished_at is None:
        return False
    session_id = str(job.params.get("session_id", ""))
    return not await units_repo.session_has_pending(db, job.bank_id, session_id, job.finished_at)


POLL_FIRST, POLL_MAX = 0.05, 0.5


async def wait_searchable(db: AsyncSession, job: Job, within: float) -> tuple[Job, bool | None]:
    """Poll the job (after the caller committed it) until it failed, or succeeded and is
    `searchable`, or `within` seconds passed → (the job as last read, searchable). Each read ends its
    transaction, so the wait holds no snapshot and no connection between polls."""
    deadline = time.monotonic() + within
    pause = POLL_FIRST
    while True:
        fresh = await repo.get_job(db, job.id, fresh=True)
        if fresh is None:  # its bank was deleted meanwhile
            raise NotFound(f"Job {job.id} not found.")
        found = await searchable(db, fresh)
        await db.close()  # ends the read's transaction and frees its connection; the job stays loaded
        job = fresh
        left = deadline - time.monotonic()
        if job.status == "failed" or found or left <= 0:
            return job, found
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, POLL_MAX)


class _LostClaim(Exception):
    """The runner's attempt no longer holds its job when it is done (its deadline passed meanwhile)."""

    def __init__(self, job: Job) -> None:
        super().__init__(f"job {job.id} attempt {job.attempts} no longer holds it")


async def run(work: UnitOfWork, job_id: uuid.UUID, handler: JobHandler, *, deadline: timedelta) -> str:
    """Claim, run and finish one job (see `run_in_session`); the handler opens its own transactions."""
    return await run_in_session(work, job_id, lambda _db, job: handler(job), deadline=deadline)


async def run_in_session(
    work: UnitOfWork, job_id: uuid.UUID, handler: SessionJobHandler, *, deadline: timedelta
) -> str:
    """Claim, run and finish one job, its handler in one unit of work with the `succeeded` mark (the
    jobs it creates are sent once that commits). Returns the job's final status, or `skipped` when
    another worker holds it or it is already done (duplicated and redelivered messages end here)."""
    async with work.session() as db:
        job = await repo.claim(db, job_id, deadline)
    if job is None:
        return "skipped"
    try:
        with charging(job.bank_id, job.id):  # the LLM calls the job makes go on its bank's bill
            async with work.session() as db:
                result = await handler(db, job)
                if not await repo.finish(
                    db, job.id, status="succeeded", result=result or {}, attempt=job.attempts
                ):
                    raise _LostClaim(job)  # its work rolls back: the job is another attempt's now
    except _LostClaim:
        log.warning(
            "job %s (%s) attempt %d outlived its deadline: its work is dropped",
            job.id,
            job.kind,
            job.attempts,
        )
        return "skipped"
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
        error = f"{type(exc).__name__}: {exc}"
        async with work.session() as db:
            if retry:
                held = await repo.release_for_retry(db, job.id, error, attempt=job.attempts)
            else:
                held = await repo.finish(db, job.id, status="failed", error=error, attempt=job.attempts)
                if held:
                    await webhooks.job_failed(db, job, error)
        if not held:  # the sweep gave up on this attempt meanwhile: the job's state is not this runner's
            return "skipped"
        status = "queued" if retry else "failed"
        JOBS_FINISHED.labels(job.kind, status).inc()
        return status
    JOBS_FINISHED.labels(job.kind, "succeeded").inc()
    return "succeeded"
