"""The distillation entry points the API and MCP call: a reflect (distil a session's tail now) and a
replay (redistill). Both create their job in the caller's transaction; it is sent once that commits. And the
graph of a direct write, found as the distiller finds a turn's."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.config import Settings
from app.db.models import Job
from app.db.repositories import events as events_repo
from app.db.repositories import task_ends as task_ends_repo
from app.distill.service import llm_configured
from app.entities.types import EntityOut, RelationOut
from app.errors import Invalid, NotFound
from app.events.sessions import get_session
from app.jobs import service as jobs
from app.jobs.schedule import schedule_distill, schedule_redistill
from app.jobs.unit_of_work import UnitOfWork
from app.schemas.jobs import RedistillRequest

log = logging.getLogger(__name__)


async def reflect(db: AsyncSession, bank: ConfiguredBank, session_id: str) -> Job:
    """Request the session's distillation (404 for no such session). Concurrent calls share one job; a
    queued one found under its key is sent again, in case a broker outage lost its message. A reflect
    ends the session's task: its task episode is written (app/distill/episodes.py)."""
    await get_session(db, bank.id, session_id)
    await task_ends_repo.mark_task_end(db, bank.id, session_id)
    job, _ = await schedule_distill(db, bank.id, session_id, resend_queued=True)
    return job


async def reflect_and_wait(
    work: UnitOfWork, db: AsyncSession, bank: ConfiguredBank, session_id: str, within: float
) -> tuple[Job, bool | None]:
    """`reflect` in a unit of work of its own (the job must be committed and sent before the wait),
    then wait on `db` (at most `within` seconds) until the job failed or the session's units are
    searchable → (the job, searchable)."""
    async with work.session() as write:
        job = await reflect(write, bank, session_id)
    return await jobs.wait_searchable(db, job, within)


async def request_redistill(
    db: AsyncSession, settings: Settings, bank: ConfiguredBank, body: RedistillRequest
) -> Job:
    """Request a replay of the named sessions (all when none is named); 404 names the missing ones."""
    if body.distiller == "llm" and not llm_configured(settings):
        raise Invalid("The LLM distiller is not configured (set HINDSIGHT_LLM_BASE_URL).")
    if body.session_ids is not None:
        missing = [s for s in body.session_ids if await events_repo.get_session(db, bank.id, s) is None]
        if missing:
            raise NotFound(f"Sessions not found: {', '.join(map(repr, missing[:10]))}.")
    return await schedule_redistill(db, bank.id, body.session_ids, body.distiller, body.dry_run)


async def statement_graph(content: str, tags: list[str]) -> tuple[list[EntityOut], list[RelationOut]]:
    """Find the relations of a self-contained statement (a direct write) and the entities they join, by the
    heuristic distiller's rules (offline, in the request; on a thread: jieba and the rules are CPU work)."""
    from app.distill.heuristic.statement import statement_graph as find

    try:
        return await asyncio.to_thread(find, content, tags)
    except Exception:
        # The graph enriches a write, it is not the write: a statement the rules fail on is stored
        # without it (as a distillation quarantines the turn), never answered with a 500.
        log.warning("statement graph failed; the unit is written without one", exc_info=True)
        return [], []
