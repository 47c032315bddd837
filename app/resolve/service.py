"""Resolution of pending units. For now every pending unit becomes `active`, so the pipeline works
end to end; conflict detection (supersede, merge) replaces this decision in `resolve_pending`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.db.repositories import memory as repo
from app.db.repositories.locks import try_xact_lock
from app.jobs.service import RetryableError

BATCH = 500


async def resolve_bank(db: AsyncSession, job: Job) -> dict[str, Any]:
    """Resolve the bank's pending units. Serialised per bank: two resolutions could otherwise
    activate two units that contradict each other."""
    assert job.bank_id is not None
    if not await try_xact_lock(db, f"resolve/{job.bank_id}"):
        raise RetryableError(f"bank {job.bank_id!r} is being resolved by another job")
    activated = 0
    while units := await repo.lock_pending(db, job.bank_id, BATCH):
        ids = [u.id for u in units]
        await repo.set_status(db, ids, "active")
        await repo.add_history(
            db,
            [
                {
                    "bank_id": job.bank_id,
                    "memory_id": mid,
                    "action": "activated",
                    "actor": "resolver",
                    "details": {"job_id": str(job.id), "from": "pending"},
                }
                for mid in ids
            ],
        )
        activated += len(ids)
    return {"activated": activated}
