"""The jobs table: every background task's status, and the outbox the sweep re-sends from."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job


async def create_job(
    db: AsyncSession,
    *,
    kind: str,
    bank_id: str | None,
    params: dict[str, Any],
    dedupe_key: str | None,
    max_attempts: int,
) -> tuple[Job, bool]:
    """Insert a queued job; with a dedupe key, return the unfinished job that holds it instead.

    Returns (job, created).
    """
    stmt = (
        insert(Job)  # the id is the model's default, a new one each time the statement runs
        .values(kind=kind, bank_id=bank_id, params=params, dedupe_key=dedupe_key, max_attempts=max_attempts)
        .on_conflict_do_nothing(
            index_elements=[Job.dedupe_key],
            index_where=text("dedupe_key IS NOT NULL AND status IN ('queued','running')"),
        )
        .returning(Job.id)
    )
    while True:
        new_id = (await db.execute(stmt)).scalar_one_or_none()
        if new_id is not None:
            job = await db.get(Job, new_id)
            assert job is not None
            return job, True
        # Locked until the caller commits: a worker cannot claim a queued job we join (and read its
        # input) before what we add for it is committed; one claimed meanwhile is seen here as `running`.
        existing = (
            await db.scalars(
                select(Job)
                .where(Job.dedupe_key == dedupe_key, Job.status.in_(("queued", "running")))
                .with_for_update()
                .execution_options(populate_existing=True)
            )
        ).first()
        if existing is not None:
            return existing, False
        # the holder finished between our two statements: try once more


# `create_job` for many dedupe keys of one kind at once: the new jobs inserted in one statement, the
# unfinished holders of the others locked and read in a second (two round trips for a group of appends).
_CREATE_MANY = text("""
    INSERT INTO jobs (id, kind, bank_id, params, dedupe_key, max_attempts)
    SELECT gen_random_uuid(), :kind, w.bank_id, w.params::jsonb, w.dedupe_key, :max_attempts
    FROM unnest(CAST(:bank_ids AS text[]), CAST(:params AS text[]), CAST(:keys AS text[]))
         AS w(bank_id, params, dedupe_key)
    ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued','running') DO NOTHING
    RETURNING id, kind, bank_id, dedupe_key, status
""")
_HOLDERS = text("""
    SELECT id, kind, bank_id, dedupe_key, status FROM jobs
    WHERE dedupe_key = ANY(CAST(:keys AS text[])) AND status IN ('queued','running')
    ORDER BY dedupe_key
    FOR UPDATE
""")


async def create_jobs(
    db: AsyncSession, kind: str, wanted: Mapping[str, tuple[str | None, dict[str, Any]]], *, max_attempts: int
) -> dict[str, tuple[Job, bool]]:
    """`create_job` for each dedupe key of `wanted` (key → (bank_id, params)); per key, (job, created).
    The jobs are detached rows holding their id, kind, bank, key and status (what sending needs)."""
    found: dict[str, tuple[Job, bool]] = {}
    missing = sorted(wanted)
    while missing:
        params = {
            "kind": kind,
            "max_attempts": max_attempts,
            "bank_ids": [wanted[k][0] for k in missing],
            "params": [json.dumps(wanted[k][1]) for k in missing],
            "keys": missing,
        }
        for row in (await db.execute(_CREATE_MANY, params)).all():
            found[row.dedupe_key] = (_detached(row), True)
        held = [k for k in missing if k not in found]
        if held:  # locked until the caller commits, as in `create_job`
            for row in (await db.execute(_HOLDERS, {"keys": held})).all():
                found[row.dedupe_key] = (_detached(row), False)
        missing = [k for k in missing if k not in found]  # holders that finished meanwhile: once more
    return found


def _detached(row: Any) -> Job:
    return Job(id=row.id, kind=row.kind, bank_id=row.bank_id, dedupe_key=row.dedupe_key, status=row.status)


async def set_progress(
    db: AsyncSession, job_id: uuid.UUID, progress: dict[str, Any], lease: timedelta | None = None
) -> None:
    """Record the job's progress; `lease`: a running job reporting progress holds its claim that much
    longer, so the sweep never requeues a long job that is still working (a bank's redistill)."""
    values: dict[str, Any] = {"progress": progress}
    if lease is not None:
        values["deadline_at"] = case((Job.status == "running", func.now() + lease), else_=Job.deadline_at)
    await db.execute(update(Job).where(Job.id == job_id).values(**values))


async def get_job(db: AsyncSession, job_id: uuid.UUID, *, fresh: bool = False) -> Job | None:
    """`fresh`: read the row again even when the session holds it already (polling a job)."""
    return await db.get(Job, job_id, populate_existing=fresh)


async def mark_enqueued(db: AsyncSession, job_ids: list[uuid.UUID]) -> None:
    await db.execute(update(Job).where(Job.id.in_(job_ids)).values(enqueued_at=func.now()))


async def claim(db: AsyncSession, job_id: uuid.UUID, deadline: timedelta) -> Job | None:
    """Move a job to `running` if it is queued, or running past its deadline (its worker died).

    A duplicate or redelivered message finds nothing to claim and does nothing.
    """
    stmt = (
        update(Job)
        .where(
            Job.id == job_id,
            (Job.status == "queued") | ((Job.status == "running") & (Job.deadline_at < func.now())),
        )
        .values(
            status="running",
            attempts=Job.attempts + 1,
            started_at=func.clock_timestamp(),
            deadline_at=func.now() + deadline,
            error=None,
        )
        .returning(Job)
    )
    return (await db.scalars(stmt)).first()


def _held(job_id: uuid.UUID, attempt: int | None) -> list[Any]:
    """The job's row, and with `attempt` only while that attempt still runs it: a runner the sweep gave
    up on (requeued, failed, or claimed by another runner since) changes nothing."""
    held = [Job.id == job_id]
    return held if attempt is None else [*held, Job.status == "running", Job.attempts == attempt]


async def finish(
    db: AsyncSession,
    job_id: uuid.UUID,
    *,
    status: str,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    attempt: int | None = None,
) -> bool:
    """Mark the job done; False when `attempt` no longer holds it (see `_held`)."""
    done = await db.execute(
        update(Job)
        .where(*_held(job_id, attempt))
        .values(
            status=status, result=result, error=error, finished_at=func.clock_timestamp(), deadline_at=None
        )
    )
    return bool(done.rowcount)  # type: ignore[attr-defined]


async def release_for_retry(
    db: AsyncSession, job_id: uuid.UUID, error: str, attempt: int | None = None
) -> bool:
    """Queue the job again; False when `attempt` no longer holds it (see `_held`)."""
    done = await db.execute(
        update(Job).where(*_held(job_id, attempt)).values(status="queued", error=error, deadline_at=None)
    )
    return bool(done.rowcount)  # type: ignore[attr-defined]


async def overdue_running(db: AsyncSession, limit: int) -> list[Job]:
    stmt = (
        select(Job)
        .where(Job.status == "running", Job.deadline_at < func.now())
        .order_by(Job.deadline_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await db.scalars(stmt)).all())


async def stale_queued(
    db: AsyncSession, older_than: datetime, limit: int, *, unsent_grace: timedelta | None = None
) -> list[Job]:
    """Queued jobs whose message may have been lost: sent before `older_than`, or never sent and
    created more than `unsent_grace` ago by the database's clock (default: before `older_than`)."""
    unsent_before = func.now() - unsent_grace if unsent_grace is not None else older_than
    unsent = Job.enqueued_at.is_(None) & (Job.created_at < unsent_before)
    stmt = (
        select(Job)
        .where(Job.status == "queued", unsent | (Job.enqueued_at < older_than))
        .order_by(Job.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await db.scalars(stmt)).all())


def _blank(value: Any, content: str) -> Any:
    if isinstance(value, str):
        return "" if value == content else value
    if isinstance(value, list):
        return [_blank(v, content) for v in value]
    if isinstance(value, dict):
        return {k: _blank(v, content) for k, v in value.items()}
    return value


async def scrub_results(db: AsyncSession, bank_id: str, content: str) -> int:
    """Blank every string equal to `content` in the bank's job results (a redistill diff lists unit
    contents), for a purge. Returns how many jobs changed."""
    if not content:
        return 0
    rows = (
        await db.execute(
            text(
                "SELECT id, result FROM jobs WHERE bank_id = :bank AND result IS NOT NULL"
                " AND jsonb_path_exists(result, '$.** ? (@ == $c)',"
                " jsonb_build_object('c', CAST(:c AS text)))"
            ),
            {"bank": bank_id, "c": content},
        )
    ).all()
    for job_id, result in rows:
        await db.execute(update(Job).where(Job.id == job_id).values(result=_blank(result, content)))
    return len(rows)


async def queued_by_kind(db: AsyncSession) -> list[tuple[str, int, float]]:
    """Queued jobs per kind: (kind, how many, seconds since the oldest was created, by the database's
    clock). Reads the partial index of unfinished jobs."""
    age = func.extract("epoch", func.now() - func.min(Job.created_at))
    stmt = select(Job.kind, func.count(), age).where(Job.status == "queued").group_by(Job.kind)
    return [(kind, int(count), float(seconds)) for kind, count, seconds in (await db.execute(stmt)).all()]
