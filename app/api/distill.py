from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.api.deps import ContributableBankDep, SessionDep, SettingsDep, UnitOfWorkDep, WritableBankDep
from app.distill import entry
from app.schemas.common import Slug
from app.schemas.jobs import DistillAccepted, JobAccepted, JobRead, RedistillRequest
from app.schemas.problems import IN_A_BANK, SIZE_LIMITED, WITH_BODY

router = APIRouter(prefix="/v1/banks/{bank_id}", tags=["distillation"], responses=IN_A_BANK)


@router.post(
    "/sessions/{session_id}/distill",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=DistillAccepted,
    # Pinned: the operation id and summary were derived from the function's former name; clients know them.
    operation_id="distill_session_v1_banks__bank_id__sessions__session_id__distill_post",
    summary="Distill Session",
    responses={
        **SIZE_LIMITED,
        200: {
            "model": DistillAccepted,
            "description": "With `?wait=true`: the job finished, and unless it failed its units are "
            "searchable (`job.searchable` true).",
        },
    },
)
async def reflect_session(
    session_id: Slug,
    bank: ContributableBankDep,  # a propose-only key's turns distil into proposals
    db: SessionDep,
    work: UnitOfWorkDep,
    settings: SettingsDep,
    response: Response,
    wait: Annotated[
        bool,
        Query(
            description="Answer once the session's units are searchable (200), or after "
            "`HINDSIGHT_DISTILL_WAIT_SECONDS` (30) with the job still going (202)."
        ),
    ] = False,
) -> DistillAccepted:
    """Distil the session's undistilled tail now (an agent's "reflect" at the end of a task).
    Concurrent requests share one job; follow it at `GET /v1/jobs/{job_id}` until `searchable`."""
    if not wait:
        job = await entry.reflect(db, bank, session_id)
        return DistillAccepted(job_id=job.id)
    job, searchable = await entry.reflect_and_wait(work, db, bank, session_id, settings.distill_wait_seconds)
    if searchable or job.status == "failed":
        response.status_code = status.HTTP_200_OK
    read = JobRead.model_validate(job).model_copy(update={"searchable": searchable})
    return DistillAccepted(job_id=job.id, job=read)


@router.post(
    "/redistill", status_code=status.HTTP_202_ACCEPTED, response_model=JobAccepted, responses=WITH_BODY
)
async def redistill(
    body: RedistillRequest, bank: WritableBankDep, db: SessionDep, settings: SettingsDep
) -> JobAccepted:
    """Replay distillation over the raw events of some (or all) sessions. The job's result is the
    diff `{added, removed, unchanged}`; unless `dry_run`, the added units are inserted (pending, then
    resolved) and the live units the replay no longer produces are retired (`deleted`, history action
    `redistilled`, restorable)."""
    job = await entry.request_redistill(db, settings, bank, body)
    return JobAccepted(job_id=job.id)
