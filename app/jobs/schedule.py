"""Scheduling jobs: created in the caller's transaction (the outbox), sent after it commits.
Concurrent triggers of one session (or bank) share its unfinished job (the dedupe key)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.jobs import service as jobs
from app.jobs.service import JobSender
from app.keys import composite_key

DISTILL = "distill.session"
REDISTILL = "distill.redistill"
RESOLVE = "resolve.bank"


async def _schedule(
    db: AsyncSession, kind: str, bank_id: str, key: tuple[str, ...], params: dict[str, Any] | None = None
) -> tuple[Job, bool]:
    """A queued job covers whatever the caller just committed. A running one may have read its
    input already, so then one more is queued behind it (at most one waits)."""
    first = composite_key(*key)
    job, created = await jobs.create(db, kind, bank_id=bank_id, params=params, dedupe_key=first)
    if created or job.status == "queued":
        return job, created
    return await jobs.create(db, kind, bank_id=bank_id, params=params, dedupe_key=composite_key(*key, "next"))


async def schedule_distill(db: AsyncSession, bank_id: str, session_id: str) -> tuple[Job, bool]:
    """The session's distillation job, in the caller's transaction (concurrent triggers share one)."""
    return await _schedule(db, DISTILL, bank_id, ("distill", bank_id, session_id), {"session_id": session_id})


async def schedule_resolve(db: AsyncSession, bank_id: str) -> tuple[Job, bool]:
    """The bank's resolution job, in the caller's transaction."""
    return await _schedule(db, RESOLVE, bank_id, ("resolve", bank_id))


def to_send(job: Job, created: bool, *, resend_queued: bool = False) -> Job | None:
    """The job to send once the caller commits: the one it created; with `resend_queued` (explicit
    requests: a reflect, a maintenance run) also the queued one it found under the dedupe key, whose
    message may be the one a broker outage lost (a duplicate message is harmless, the job runs once).
    Triggers on the write paths send only what they created; the sweep resends what was lost."""
    return job if created or (resend_queued and job.status == "queued") else None


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


def maintenance_key(kind: str, params: dict[str, Any]) -> str:
    """The dedupe key of a maintenance run: the task and what it covers (one bank or all, its clock,
    forced or not). Requests for the same run share its unfinished job; a bank's request never gets
    a global run's job, nor another bank's (beat's runs are global, with no params)."""
    scope = (
        str(params.get("bank_id") or ""),
        str(params.get("now") or ""),
        "force" if params.get("force") else "",
    )
    if not any(scope):
        return kind  # the plain global run: the key beat's ticks have always used
    return composite_key(kind, *scope)


async def run_maintenance_now(db: AsyncSession, sender: JobSender, kind: str, params: dict[str, Any]) -> Job:
    """An admin's maintenance run: one unfinished job per task and scope, committed and sent."""
    job, created = await jobs.create(db, kind, params=params, dedupe_key=maintenance_key(kind, params))
    await sender.commit_and_send(db, [to_send(job, created, resend_queued=True)])
    return job
