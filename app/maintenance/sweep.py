"""The sweep: the guard that no lost message or dead worker leaves work undone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.db.repositories import jobs as repo
from app.jobs.queue import TaskQueue

BATCH = 500
RESEND_AFTER = timedelta(seconds=60)


async def sweep(db: AsyncSession, job: Job, *, queue: TaskQueue) -> dict[str, Any]:
    failed, requeued = 0, 0
    for overdue in await repo.overdue_running(db, BATCH):
        if overdue.id == job.id:
            continue
        if overdue.attempts >= overdue.max_attempts:
            await repo.finish(
                db,
                overdue.id,
                status="failed",
                error=f"deadline exceeded after {overdue.attempts} attempts",
            )
            failed += 1
        else:
            await repo.release_for_retry(db, overdue.id, "deadline exceeded; requeued by sweep")
            requeued += 1
    # Jobs are committed rows already, so sending before this transaction commits is safe: a
    # message that arrives early claims the job as usual.
    resent = []
    for stale in await repo.stale_queued(db, datetime.now(UTC) - RESEND_AFTER, BATCH):
        if queue.send_sync(stale.kind, stale.id):
            resent.append(stale.id)
    if resent:
        await repo.mark_enqueued(db, resent)
    return {"failed_overdue": failed, "requeued_overdue": requeued, "resent": len(resent)}
