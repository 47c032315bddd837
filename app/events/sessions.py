"""Sessions: reading one (or 404), listing them and their events, closing one, its working memory."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.models import ChatSession, Event, Job
from app.db.repositories import events as repo
from app.db.repositories import task_ends as task_ends_repo
from app.errors import NotFound
from app.events.service import working_memory
from app.events.working_memory import WorkingMemory
from app.jobs.schedule import schedule_distill
from app.schemas.events import WorkingMemoryRead, WorkingTurn


async def get_session(db: AsyncSession, bank_id: str, session_id: str) -> ChatSession:
    session = await repo.get_session(db, bank_id, session_id)
    if session is None:
        raise NotFound(f"Session {session_id!r} not found.")
    return session


async def list_sessions(
    db: AsyncSession, bank_id: str, *, after: str | None, limit: int
) -> list[ChatSession]:
    return await repo.list_sessions(db, bank_id, after=after, limit=limit)


async def list_events(
    db: AsyncSession, bank_id: str, session_id: str, *, after_seq: int, limit: int
) -> list[Event]:
    """The session's events in seq order after `after_seq`; 404 for a session that does not exist."""
    await get_session(db, bank_id, session_id)
    return await repo.list_events(db, bank_id, session_id, after_seq=after_seq, limit=limit)


async def close_session(
    db: AsyncSession, bank: ConfiguredBank, session_id: str
) -> tuple[ChatSession, Job | None]:
    """Close the session and distil what is left of it (the job, or None when nothing is). Closing
    ends the session's task: its task episode is written (app/distill/episodes.py)."""
    session = await repo.close_session(db, bank.id, session_id)
    if session is None:
        raise NotFound(f"Session {session_id!r} not found.")
    job = None
    ended = await task_ends_repo.mark_task_end(db, bank.id, session_id)
    if session.last_seq > session.distilled_seq or ended:
        job, _ = await schedule_distill(db, bank.id, session_id)
    return session, job


async def read_working_memory(
    db: AsyncSession, buffer: WorkingMemory, bank_id: str, session_id: str, limit: int
) -> WorkingMemoryRead:
    """The session's newest `limit` turns not yet distilled, from Redis or else the event log."""
    session = await get_session(db, bank_id, session_id)
    turns, source = await working_memory(db, buffer, session, limit)
    return WorkingMemoryRead(
        session_id=session_id,
        last_seq=session.last_seq,
        distilled_seq=session.distilled_seq,
        turns=[WorkingTurn.model_validate(t) for t in turns],
        source=source,
    )
