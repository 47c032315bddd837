from __future__ import annotations

from fastapi import APIRouter, status

from app.api.deps import JobSenderDep, SessionDep, SettingsDep, WritableBankDep
from app.distill import entry
from app.schemas.common import Slug
from app.schemas.jobs import JobAccepted, RedistillRequest
from app.schemas.problems import IN_A_BANK, SIZE_LIMITED, WITH_BODY

router = APIRouter(prefix="/v1/banks/{bank_id}", tags=["distillation"], responses=IN_A_BANK)


@router.post(
    "/sessions/{session_id}/distill",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=JobAccepted,
    responses=SIZE_LIMITED,
)
async def distill_session(
    session_id: Slug, bank: WritableBankDep, db: SessionDep, sender: JobSenderDep
) -> JobAccepted:
    """Distil the session's undistilled tail now (an agent's "reflect" at the end of a task).
    Concurrent requests share one job; follow it at `GET /v1/jobs/{job_id}`."""
    job = await entry.reflect(db, sender, bank, session_id)
    return JobAccepted(job_id=job.id)


@router.post(
    "/redistill", status_code=status.HTTP_202_ACCEPTED, response_model=JobAccepted, responses=WITH_BODY
)
async def redistill(
    body: RedistillRequest, bank: WritableBankDep, db: SessionDep, settings: SettingsDep, sender: JobSenderDep
) -> JobAccepted:
    """Replay distillation over the raw events of some (or all) sessions. The job's result is the
    diff `{added, removed, unchanged}`; unless `dry_run`, new units replace the session's old ones
    (which become `superseded`, history action `redistilled`)."""
    job = await entry.request_redistill(db, sender, settings, bank, body)
    return JobAccepted(job_id=job.id)
