"""Scheduling jobs: created in the caller's transaction (the outbox) and sent after it commits, by
the unit of work the caller runs in (`app.jobs.unit_of_work`). Concurrent triggers of one session
(or bank) share its unfinished job (the dedupe key)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.jobs.unit_of_work import enqueue
from app.keys import composite_key


def _send(db: AsyncSession, job: Job, created: bool, *, resend_queued: bool = False) -> None:
    """Send the job once the caller commits: the one it created; with `resend_queued` (explicit
    requests: a reflect, a maintenance run) also the queued one it found under the dedupe key, whose
    message may be the one a broker outage lost (a duplicate message is harmless, the job runs once).
    Triggers on the write paths send only what they created; the sweep resends what was lost."""
    if created or (resend_queued and job.status == "queued"):
        enqueue(db, job)


async def _schedule(
    db: AsyncSession,
    kind: JobKind,
    bank_id: str,
    key: tuple[str, ...],
    params: dict[str, Any] | None = None,
    *,
    resend_queued: bool = False,
) -> tuple[Job, bool]:
    """A queued job covers whatever the caller just committed. A running one may have read its
    input already, so then one more is queued behind it (at most one waits)."""
    job, created = await jobs.create(db, kind, bank_id=bank_id, params=params, dedupe_key=composite_key(*key))
    if not created and job.status != "queued":
        next_key = composite_key(*key, "next")
        job, created = await jobs.create(db, kind, bank_id=bank_id, params=params, dedupe_key=next_key)
    _send(db, job, created, resend_queued=resend_queued)
    return job, created


async def schedule_distill(
    db: AsyncSession, bank_id: str, session_id: str, *, resend_queued: bool = False
) -> tuple[Job, bool]:
    """Schedule the session's distillation in the caller's transaction (concurrent triggers share one)."""
    key = ("distill", bank_id, session_id)
    return await _schedule(
        db, JobKind.DISTILL, bank_id, key, {"session_id": session_id}, resend_queued=resend_queued
    )


async def _distills(
    db: AsyncSession, sessions: list[tuple[str, str]], *suffix: str
) -> dict[tuple[str, str], tuple[Job, bool]]:
    keys = {composite_key("distill", *s, *suffix): s for s in sessions}
    made = await jobs.create_many(
        db, JobKind.DISTILL, {k: (s[0], {"session_id": s[1]}) for k, s in keys.items()}
    )
    return {keys[k]: pair for k, pair in made.items()}


async def schedule_distills(db: AsyncSession, sessions: list[tuple[str, str]]) -> dict[tuple[str, str], Job]:
    """`schedule_distill` for many (bank, session) pairs in two to four statements (a group of appends)."""
    scheduled = await _distills(db, sessions)
    # As `_schedule`: behind a running job (it may have read its input already) one more is queued.
    running = [s for s, (job, _) in scheduled.items() if job.status != "queued"]
    if running:
        scheduled |= await _distills(db, running, "next")
    for job, created in scheduled.values():
        _send(db, job, created)
    return {s: job for s, (job, _) in scheduled.items()}


async def schedule_resolve(db: AsyncSession, bank_id: str) -> tuple[Job, bool]:
    """Schedule the bank's resolution in the caller's transaction."""
    return await _schedule(db, JobKind.RESOLVE, bank_id, ("resolve", bank_id))


async def schedule_redistill(
    db: AsyncSession, bank_id: str, session_ids: list[str] | None, distiller: str | None, dry_run: bool
) -> Job:
    """Schedule a replay of the bank's sessions (each request its own job) in the caller's transaction."""
    job, created = await jobs.create(
        db,
        JobKind.REDISTILL,
        bank_id=bank_id,
        params={"session_ids": session_ids, "distiller": distiller, "dry_run": dry_run},
    )
    _send(db, job, created)
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


async def schedule_maintenance(
    db: AsyncSession, kind: JobKind, params: dict[str, Any], *, resend_queued: bool = False
) -> tuple[Job, bool]:
    """Schedule a maintenance run, one unfinished job per task and scope, in the caller's transaction."""
    job, created = await jobs.create(db, kind, params=params, dedupe_key=maintenance_key(kind, params))
    _send(db, job, created, resend_queued=resend_queued)
    return job, created


async def run_maintenance_now(db: AsyncSession, kind: JobKind, params: dict[str, Any]) -> Job:
    """Run maintenance for an admin: the task's unfinished job for this scope, sent once committed."""
    job, _ = await schedule_maintenance(db, kind, params, resend_queued=True)
    return job
