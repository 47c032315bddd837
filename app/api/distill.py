from __future__ import annotations

from fastapi import APIRouter, status

from app.api.deps import JobSenderDep, SessionDep, SettingsDep, WritableBankDep
from app.db.repositories import events as repo
from app.distill.service import llm_configured
from app.errors import Invalid, NotFound
from app.jobs.schedule import schedule_distill, schedule_redistill, to_send
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
    if await repo.get_session(db, bank.id, session_id) is None:
        raise NotFound(f"Session {session_id!r} not found.")
    job, created = await schedule_distill(db, bank.id, session_id)
    await db.commit()
    await sender.send([to_send(job, created, resend_queued=True)])
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
    if body.distiller == "llm" and not llm_configured(settings):
        raise Invalid("The LLM distiller is not configured (set HINDSIGHT_LLM_BASE_URL).")
    if body.session_ids is not None:
        missing = [s for s in body.session_ids if await repo.get_session(db, bank.id, s) is None]
        if missing:
            raise NotFound(f"Sessions not found: {', '.join(map(repr, missing[:10]))}.")
    job = await schedule_redistill(db, bank.id, body.session_ids, body.distiller, body.dry_run)
    await db.commit()
    await sender.send([job])
    return JobAccepted(job_id=job.id)
