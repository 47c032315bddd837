"""Thin tasks: a job id in, one service call. Idempotent: a redelivered message finds its job
claimed or finished and does nothing."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from celery import shared_task
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Job
from app.distill import service as distill
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.jobs.schedule import maintenance_key
from app.maintenance import lifecycle
from app.maintenance.lifecycle import Run, job_now
from app.maintenance.merge import merge
from app.maintenance.reembed import reembed
from app.maintenance.summary import LLMSummarizer
from app.maintenance.sweep import sweep
from app.resolve.service import resolve_bank
from app.webhooks import delivery as webhook_delivery
from app.webhooks.outbox import DELIVER
from worker.runtime import WorkerRuntime, get_runtime

TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
}


def _run(kind: str, job_id: str | None, handler: jobs.JobHandler) -> str:
    """Run a job by id; without one (a beat tick), find or make the job of this kind first."""
    worker_runtime = get_runtime()
    return worker_runtime.run(_run_async(worker_runtime, kind, job_id, handler))


async def _run_async(
    worker_runtime: WorkerRuntime, kind: str, job_id: str | None, handler: jobs.JobHandler
) -> str:
    if job_id is None:
        # A beat tick: make the job, or take over the unfinished one holding the dedupe key. The
        # claim in jobs.run skips a healthy running copy but revives one whose worker died.
        async with worker_runtime.work.session() as db:
            job, _ = await jobs.create(db, kind, dedupe_key=maintenance_key(kind, {}))
        job_uuid = job.id
    else:
        job_uuid = uuid.UUID(job_id)
    return await jobs.run(worker_runtime.work, job_uuid, handler, deadline=worker_runtime.job_deadline)


@shared_task(name=JobKind.SWEEP, **TASK_OPTIONS)
def sweep_task(job_id: str | None = None) -> str:
    worker_runtime = get_runtime()

    async def handler(db: AsyncSession, job: Job) -> dict[str, Any]:
        return await sweep(db, job, queue=worker_runtime.queue, model=worker_runtime.settings.embedding_model)

    return _run(JobKind.SWEEP, job_id, handler)


@shared_task(name=JobKind.DISTILL, **TASK_OPTIONS)
def distill_session_task(job_id: str) -> str:
    async def handler(db: AsyncSession, job: Job) -> dict[str, Any]:
        return await distill.distill_session(get_runtime().distill_runtime(), job)

    return _run(JobKind.DISTILL, job_id, handler)


@shared_task(name=JobKind.REDISTILL, **TASK_OPTIONS)
def redistill_task(job_id: str) -> str:
    async def handler(db: AsyncSession, job: Job) -> dict[str, Any]:
        return await distill.redistill(get_runtime().distill_runtime(), job)

    return _run(JobKind.REDISTILL, job_id, handler)


@shared_task(name=JobKind.RESOLVE, **TASK_OPTIONS)
def resolve_bank_task(job_id: str) -> str:
    async def handler(db: AsyncSession, job: Job) -> dict[str, Any]:
        worker_runtime = get_runtime()
        return await resolve_bank(
            worker_runtime.sessionmaker, job, embedder=worker_runtime.embedder, judge=worker_runtime.judge
        )

    return _run(JobKind.RESOLVE, job_id, handler)


def _maintenance(kind: str, job_id: str | None, work: Callable[[Run], Awaitable[dict[str, Any]]]) -> str:
    async def handler(db: AsyncSession, job: Job) -> dict[str, Any]:
        return await work(Run(get_runtime().sessionmaker, job, job_now(job)))

    return _run(kind, job_id, handler)


@shared_task(name=JobKind.EXPIRE, **TASK_OPTIONS)
def expire_task(job_id: str | None = None) -> str:
    return _maintenance(JobKind.EXPIRE, job_id, lifecycle.expire)


@shared_task(name=JobKind.DECAY, **TASK_OPTIONS)
def decay_task(job_id: str | None = None) -> str:
    return _maintenance(JobKind.DECAY, job_id, lifecycle.decay)


@shared_task(name=JobKind.PROMOTE, **TASK_OPTIONS)
def promote_task(job_id: str | None = None) -> str:
    return _maintenance(JobKind.PROMOTE, job_id, lifecycle.promote)


@shared_task(name=JobKind.MERGE, **TASK_OPTIONS)
def merge_task(job_id: str | None = None) -> str:
    async def work(run: Run) -> dict[str, Any]:
        worker_runtime = get_runtime()
        if (
            not worker_runtime.settings.judge_enabled
        ):  # no LLM in use: the most complete member stays as it is
            return await merge(run, worker_runtime.embedder)
        summarizer = LLMSummarizer.from_settings(worker_runtime.settings, worker_runtime.ledger)
        try:
            return await merge(run, worker_runtime.embedder, summarizer)
        finally:
            await summarizer.aclose()

    return _maintenance(JobKind.MERGE, job_id, work)


@shared_task(name=JobKind.REEMBED, **TASK_OPTIONS)
def reembed_task(job_id: str | None = None) -> str:
    return _maintenance(JobKind.REEMBED, job_id, lambda run: reembed(run, get_runtime().embedder))


# A retry due within this long is woken up by a message of its own (a countdown); later ones, and
# nudges lost with the broker, by beat's tick.
WAKE_WITHIN_SECONDS = 300.0


@shared_task(name=DELIVER, **TASK_OPTIONS)
def deliver_webhooks_task(bank_id: str | None = None) -> str:
    """Deliver what is due, of every bank: `bank_id` only says whose change sent the nudge. A run
    scoped to that bank would leave another bank's nudge queued behind it for as long as the first
    bank's receivers hang; an unscoped run takes up any bank's delivery as soon as it is due. Beat's
    tick (no bank) also prunes old deliveries."""
    worker_runtime = get_runtime()
    policy = webhook_delivery.Policy.from_settings(worker_runtime.settings)
    run = webhook_delivery.deliver_due(worker_runtime.sessionmaker, policy, prune=bank_id is None)
    report = worker_runtime.run(run)
    if report.more:
        worker_runtime.queue.publish_sync(DELIVER, [])
    elif report.retry_at is not None:
        wait = max(0.0, (report.retry_at - webhook_delivery.utcnow()).total_seconds())
        if wait <= WAKE_WITHIN_SECONDS:
            worker_runtime.queue.publish_sync(DELIVER, [], countdown=wait)
    return ",".join(f"{k}={v}" for k, v in report.counts.items())
