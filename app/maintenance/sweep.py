"""The sweep: the guard that no lost message or dead worker leaves work undone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import events as events_repo
from app.db.repositories import jobs as repo
from app.db.repositories import task_ends as task_ends_repo
from app.db.repositories import units as units_repo
from app.jobs import schedule as triggers
from app.jobs.kinds import JobKind
from app.jobs.queue import TaskQueue
from app.jobs.unit_of_work import enqueue
from app.maintenance.tuning import (
    PENDING_AFTER_SECONDS,
    RESEND_AFTER,
    RESEND_UNSENT_AFTER,
    SWEEP_BATCH,
    TASK_END_HORIZON,
)
from app.schemas.banks import MAX_IDLE_SECONDS, BankConfig
from app.webhooks import emit as webhooks

DEFAULT_IDLE_SECONDS = int(BankConfig.model_fields["idle_distill_seconds"].default)


async def sweep(db: AsyncSession, job: Job, *, queue: TaskQueue, model: str) -> dict[str, Any]:
    """Requeue or fail overdue jobs, resend lost messages, and create the distillation of idle
    sessions and the resolution of pending units nobody resolved. Jobs created or requeued here are
    sent once this transaction commits (the job's unit of work)."""
    idle = await events_repo.idle_undistilled_sessions(
        db, DEFAULT_IDLE_SECONDS, MAX_IDLE_SECONDS, SWEEP_BATCH
    )
    for bank_id, session_id in idle:
        await task_ends_repo.mark_task_end(db, bank_id, session_id)  # an idle session's task has ended
        await triggers.schedule_distill(db, bank_id, session_id)
    # Sessions distilled to their last turn that went quiet: their task ended too (its task episode).
    quiet = await task_ends_repo.idle_sessions_past_task_end(
        db, DEFAULT_IDLE_SECONDS, MAX_IDLE_SECONDS, TASK_END_HORIZON, SWEEP_BATCH
    )
    for bank_id, session_id in quiet:
        await task_ends_repo.mark_task_end(db, bank_id, session_id)
        await triggers.schedule_distill(db, bank_id, session_id)
    stale_pending = await units_repo.banks_with_stale_pending(db, PENDING_AFTER_SECONDS, SWEEP_BATCH)
    for bank_id in stale_pending:
        await triggers.schedule_resolve(db, bank_id)
    # A changed HINDSIGHT_EMBEDDING_MODEL (or units written while the embedder was down).
    missing_vectors = await embeddings_repo.any_without_vector(db, model)
    if missing_vectors:
        await triggers.schedule_maintenance(db, JobKind.REEMBED, {})
    failed, requeued = 0, 0
    for overdue in await repo.overdue_running(db, SWEEP_BATCH):
        if overdue.id == job.id:
            continue
        if overdue.attempts >= overdue.max_attempts:
            error = f"deadline exceeded after {overdue.attempts} attempts"
            await repo.finish(db, overdue.id, status="failed", error=error)
            await webhooks.job_failed(db, overdue, error)
            failed += 1
        else:
            await repo.release_for_retry(db, overdue.id, "deadline exceeded; requeued by sweep")
            enqueue(db, overdue)  # its worker died: send it again as soon as this commits
            requeued += 1
    # Jobs are committed rows already, so sending before this transaction commits is safe: a
    # message that arrives early claims the job as usual.
    resent = []
    stale_jobs = await repo.stale_queued(
        db, datetime.now(UTC) - RESEND_AFTER, SWEEP_BATCH, unsent_grace=RESEND_UNSENT_AFTER
    )
    for stale in stale_jobs:
        if queue.send_sync(stale.kind, stale.id):
            resent.append(stale.id)
    if resent:
        await repo.mark_enqueued(db, resent)
    return {
        "failed_overdue": failed,
        "requeued_overdue": requeued,
        "resent": len(resent),
        "idle_sessions": len(idle),
        "idle_task_ends": len(quiet),
        "banks_with_stale_pending": len(stale_pending),
        "units_without_current_vector": missing_vectors,
    }
