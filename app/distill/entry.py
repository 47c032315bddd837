"""The distillation entry points the API and MCP call: a reflect (distil a session's tail now) and a
replay (redistill). Both create their job in the caller's transaction, commit, then send it."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.config import Settings
from app.db.models import Job
from app.db.repositories import events as events_repo
from app.db.repositories import tasks as tasks_repo
from app.distill.service import llm_configured
from app.errors import Invalid, NotFound
from app.events.sessions import get_session
from app.jobs.schedule import schedule_distill, schedule_redistill, to_send
from app.jobs.service import JobSender
from app.schemas.jobs import RedistillRequest


async def reflect(db: AsyncSession, sender: JobSender, bank: ConfiguredBank, session_id: str) -> Job:
    """The session's distillation job (404 for no such session). Concurrent calls share one job; a
    queued one found under its key is sent again, in case a broker outage lost its message. A reflect
    ends the session's task: its task episode is written (app/distill/episodes.py)."""
    await get_session(db, bank.id, session_id)
    await tasks_repo.mark_task_end(db, bank.id, session_id)
    job, created = await schedule_distill(db, bank.id, session_id)
    await sender.commit_and_send(db, [to_send(job, created, resend_queued=True)])
    return job


async def request_redistill(
    db: AsyncSession, sender: JobSender, settings: Settings, bank: ConfiguredBank, body: RedistillRequest
) -> Job:
    """A replay job over the named sessions (all when none is named); 404 names the missing ones."""
    if body.distiller == "llm" and not llm_configured(settings):
        raise Invalid("The LLM distiller is not configured (set HINDSIGHT_LLM_BASE_URL).")
    if body.session_ids is not None:
        missing = [s for s in body.session_ids if await events_repo.get_session(db, bank.id, s) is None]
        if missing:
            raise NotFound(f"Sessions not found: {', '.join(map(repr, missing[:10]))}.")
    job = await schedule_redistill(db, bank.id, body.session_ids, body.distiller, body.dry_run)
    await sender.commit_and_send(db, [job])
    return job
