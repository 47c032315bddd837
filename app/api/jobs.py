from __future__ import annotations

import uuid
from datetime import UTC
from typing import Literal

from fastapi import APIRouter, status

from app.api.deps import AdminDep, PrincipalDep, SessionDep
from app.banks.service import configured_bank
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.jobs.schedule import run_maintenance_now
from app.schemas.common import as_aware
from app.schemas.jobs import JobAccepted, JobRead, MaintenanceRequest
from app.schemas.problems import ADMIN_ONLY, AUTHENTICATED, WITH_BODY, problem_responses

router = APIRouter(tags=["jobs"], responses=AUTHENTICATED)

MaintenanceTask = Literal["decay", "expire", "merge", "promote", "reembed", "sweep"]


@router.get("/v1/jobs/{job_id}", response_model=JobRead, responses=problem_responses(404))
async def get_job(job_id: uuid.UUID, db: SessionDep, principal: PrincipalDep) -> JobRead:
    """Get a background job's status, progress, result or error."""
    job = await jobs.get_visible(db, principal, job_id)
    return JobRead.model_validate(job).model_copy(update={"searchable": await jobs.searchable(db, job)})


@router.post(
    "/v1/admin/maintenance/{task}",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobAccepted,
    tags=["admin"],
    responses={**ADMIN_ONLY, **WITH_BODY},
)
async def run_maintenance(
    task: MaintenanceTask,
    db: SessionDep,
    _: AdminDep,
    body: MaintenanceRequest | None = None,
) -> JobAccepted:
    """Run a maintenance task now (admin key); Celery beat runs the same tasks on its schedule.
    Optional body: `bank_id` (one bank only), `now` (the clock the task reads: tests, backfills; without
    an offset, read in that bank's timezone, or in UTC for every bank)."""
    if body is not None and body.now is not None:
        bank = await configured_bank(db, body.bank_id) if body.bank_id else None
        body = body.model_copy(update={"now": as_aware(body.now, bank.timezone if bank else UTC)})
    params = body.model_dump(mode="json", exclude_none=True) if body else {}
    job = await run_maintenance_now(db, JobKind(f"maintenance.{task}"), params)
    return JobAccepted(job_id=job.id)
