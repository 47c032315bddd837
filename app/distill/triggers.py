"""What starts a distillation: jobs created in the caller's transaction (the outbox), sent after
it commits. Concurrent triggers of one session share its unfinished job (the dedupe key)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.jobs import service as jobs

DISTILL = "distill.session"
REDISTILL = "distill.redistill"
RESOLVE = "resolve.bank"


async def schedule_distill(db: AsyncSession, bank_id: str, session_id: str) -> tuple[Job, bool]:
    """The session's distillation job, in the caller's transaction: a new one, or the unfinished
    one that already covers it (concurrent triggers share a job)."""
    return await jobs.create(
        db,
        DISTILL,
        bank_id=bank_id,
        params={"session_id": session_id},
        dedupe_key=f"distill:{bank_id}:{session_id}",
    )


async def schedule_resolve(db: AsyncSession, bank_id: str) -> tuple[Job, bool]:
    """The bank's resolution job. A running one may have read the pending units already, so then
    one more is queued behind it (at most one waits)."""
    job, created = await jobs.create(db, RESOLVE, bank_id=bank_id, dedupe_key=f"resolve:{bank_id}")
    if created or job.status == "queued":
        return job, created
    return await jobs.create(db, RESOLVE, bank_id=bank_id, dedupe_key=f"resolve:{bank_id}:next")


async def schedule_redistill(
    db: AsyncSession, bank_id: str, session_ids: list[str] | None, distiller: str | None, dry_run: bool
) -> Job:
    job, _ = await jobs.create(
        db,
        REDISTILL,
        bank_id=bank_id,
        params={"session_ids": session_ids, "distiller": distiller, "dry_run": dry_run},
    )
    return job
