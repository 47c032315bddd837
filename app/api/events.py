from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, status

from app.api.deps import (
    AppenderDep,
    AppendGroupsDep,
    BankDep,
    ContributableBankDep,
    ReadSessionDep,
    SessionDep,
    SettingsDep,
    WorkingMemoryDep,
    reads_only,
)
from app.events import service, sessions
from app.schemas.common import MAX_SEQ, Limit, Slug, decode_cursor, encode_cursor
from app.schemas.events import (
    AppendRequest,
    AppendResult,
    EventPage,
    EventRead,
    SessionClosed,
    SessionPage,
    SessionRead,
    WorkingMemoryRead,
)
from app.schemas.problems import IN_A_BANK, PAGINATED, SIZE_LIMITED, WITH_BODY

router = APIRouter(prefix="/v1/banks/{bank_id}/sessions", tags=["events"], responses=IN_A_BANK)


# The request reads nothing in a session of its own (the caller and the bank are remembered, or read
# and given back at once: `get_appender`); the events are written by the process's group commit, in one
# transaction with the appends that arrive beside them (app/events/group_commit.py), committed before the 202.
@router.post(
    "/{session_id}/events",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=AppendResult,
    responses=WITH_BODY,
)
async def append_events(
    session_id: Slug,
    body: AppendRequest,
    appender: AppenderDep,
    groups: AppendGroupsDep,
    working_memory: WorkingMemoryDep,
) -> AppendResult:
    """Append 1–1000 turns to a session's log (created on first append). Durable before the 202;
    a repeated `external_id` is counted in `duplicates`, not appended again. Every
    `distill_every_n_turns` undistilled turns start a distillation in the background. Turns appended
    with a propose-only key are distilled into `proposed` units, which wait for a review."""
    principal = appender.principal.acting_as(body.agent_id)
    appending = service.Appending(
        appender.bank,
        session_id,
        body,
        buffer=working_memory,
        agent_id=principal.agent_id,
        proposed=principal.proposes_only,
    )
    return await service.append_grouped(groups, appending)


@router.get("", response_model=SessionPage, responses=PAGINATED, dependencies=[Depends(reads_only)])
async def list_sessions(
    bank: BankDep, db: ReadSessionDep, limit: Limit = 100, cursor: str | None = None
) -> SessionPage:
    """List the bank's sessions by id."""
    after = decode_cursor(cursor, "id", str)
    rows = await sessions.list_sessions(db, bank.id, after=after, limit=limit)
    next_cursor = encode_cursor("id", rows[-1].session_id) if len(rows) == limit else None
    return SessionPage(sessions=[SessionRead.model_validate(s) for s in rows], next_cursor=next_cursor)


@router.get("/{session_id}", response_model=SessionRead, dependencies=[Depends(reads_only)])
async def get_session(session_id: Slug, bank: BankDep, db: ReadSessionDep) -> SessionRead:
    """Get a session's status and its `last_seq` / `distilled_seq` watermarks."""
    return SessionRead.model_validate(await sessions.get_session(db, bank.id, session_id))


@router.get(
    "/{session_id}/working_memory", response_model=WorkingMemoryRead, dependencies=[Depends(reads_only)]
)
async def get_working_memory(
    session_id: Slug,
    bank: BankDep,
    db: ReadSessionDep,
    buffer: WorkingMemoryDep,
    settings: SettingsDep,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> WorkingMemoryRead:
    """Read the session's turns not yet distilled (newest `limit`, default the buffer size), so an agent
    never loses its last few turns while distillation runs."""
    return await sessions.read_working_memory(
        db, buffer, bank.id, session_id, limit or settings.working_memory_max_turns
    )


@router.get(
    "/{session_id}/events", response_model=EventPage, responses=PAGINATED, dependencies=[Depends(reads_only)]
)
async def list_events(
    session_id: Slug,
    bank: BankDep,
    db: ReadSessionDep,
    after_seq: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
    limit: Limit = 100,
    cursor: str | None = None,
) -> EventPage:
    """List the session's events in seq order, after `after_seq` (or the cursor)."""
    after = decode_cursor(cursor, "seq", int)
    rows = await sessions.list_events(db, bank.id, session_id, after_seq=after or after_seq, limit=limit)
    next_cursor = encode_cursor("seq", rows[-1].seq) if len(rows) == limit else None
    return EventPage(events=[EventRead.model_validate(e) for e in rows], next_cursor=next_cursor)


@router.post("/{session_id}/close", response_model=SessionClosed, responses=SIZE_LIMITED)
async def close_session(session_id: Slug, bank: ContributableBankDep, db: SessionDep) -> SessionClosed:
    """Close a session and distil what is left of it (`job_id`, or null when nothing is). A later
    append reopens it."""
    session, job = await sessions.close_session(db, bank, session_id)
    return SessionClosed(**SessionRead.model_validate(session).model_dump(), job_id=job.id if job else None)
