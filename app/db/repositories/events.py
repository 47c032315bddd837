"""Sessions and the append-only event log. The append path uses Core statements: it is hot."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import MAX_IDLE_SECONDS
from app.db.models import ChatSession, Event


@dataclass(frozen=True)
class Author:
    """Who appends a batch (shared memory): the agent, and whether its turns' units are proposals."""

    agent_id: str | None = None
    proposed: bool = False


@dataclass(frozen=True)
class NewEvent:
    role: str
    content: str
    speaker: str | None
    occurred_at: datetime
    external_id: str | None
    metadata: dict[str, Any]


async def lock_session_for_append(db: AsyncSession, bank_id: str, session_id: str) -> tuple[int, int]:
    """Create the session if needed and lock its row; return its `last_seq` and `distilled_seq`.

    The row lock serialises appenders of one session, so seqs never gap or repeat. An append to a
    closed session reopens it.
    """
    stmt = (
        insert(ChatSession)
        .values(bank_id=bank_id, session_id=session_id)
        .on_conflict_do_update(
            index_elements=[ChatSession.bank_id, ChatSession.session_id],
            set_={"status": "open", "closed_at": None},
        )
        .returning(ChatSession.last_seq, ChatSession.distilled_seq)
    )
    last_seq, distilled_seq = (await db.execute(stmt)).one()
    return int(last_seq), int(distilled_seq)


async def existing_external_ids(
    db: AsyncSession, bank_id: str, session_id: str, external_ids: list[str]
) -> set[str]:
    stmt = select(Event.external_id).where(
        Event.bank_id == bank_id,
        Event.session_id == session_id,
        Event.external_id.in_(external_ids),
    )
    return {row for row in (await db.scalars(stmt)).all() if row is not None}


_INSERT_EVENTS_AND_ADVANCE = text("""
    WITH inserted AS (
        INSERT INTO events (bank_id, session_id, seq, role, content, speaker, occurred_at, external_id,
                            metadata, agent_id, proposed)
        SELECT :bank_id, :session_id, e.seq, e.role, e.content, e.speaker, e.occurred_at, e.external_id,
               e.metadata::jsonb, CAST(:agent_id AS text), CAST(:proposed AS boolean)
        FROM unnest(CAST(:seqs AS int[]), CAST(:roles AS text[]), CAST(:contents AS text[]),
                    CAST(:speakers AS text[]), CAST(:occurred AS timestamptz[]),
                    CAST(:external_ids AS text[]), CAST(:metadata AS text[]))
             AS e(seq, role, content, speaker, occurred_at, external_id, metadata)
        RETURNING 1
    )
    UPDATE sessions SET last_seq = :last_seq,
           last_event_at = GREATEST(COALESCE(last_event_at, :at), :at)
    WHERE bank_id = :bank_id AND session_id = :session_id
""")


async def insert_events_and_advance(
    db: AsyncSession, bank_id: str, session_id: str, first_seq: int, events: list[NewEvent], author: Author
) -> None:
    """The batch (one INSERT over unnest of arrays, not one per event) and the session's `last_seq`
    in one statement, one round trip (the session row is locked by `lock_session_for_append`)."""
    await db.execute(
        _INSERT_EVENTS_AND_ADVANCE,
        {
            "bank_id": bank_id,
            "session_id": session_id,
            "seqs": list(range(first_seq, first_seq + len(events))),
            **_arrays(events),
            "agent_id": author.agent_id,
            "proposed": author.proposed,
            "last_seq": first_seq + len(events) - 1,
            "at": max(e.occurred_at for e in events),
        },
    )


# The whole append in one statement: the batch less the external ids the session already holds,
# the session row created or locked and advanced, the events inserted after its last seq. The
# statement's snapshot is taken before it waits for the row lock, so it advances the session only when
# that snapshot saw the session's every event (the locked row's last_seq is the newest seq it sees:
# events are append-only and always written under that lock); otherwise it only locks the row, returns
# nothing, and the caller appends with fresh reads (`append_locked`).
_APPEND = text("""
    WITH batch AS (
        SELECT * FROM unnest(CAST(:roles AS text[]), CAST(:contents AS text[]), CAST(:speakers AS text[]),
                             CAST(:occurred AS timestamptz[]), CAST(:external_ids AS text[]),
                             CAST(:metadata AS text[]))
             WITH ORDINALITY AS e(role, content, speaker, occurred_at, external_id, metadata, ord)
    ),
    fresh AS (
        SELECT b.*, row_number() OVER (ORDER BY b.ord) AS n FROM batch b
        WHERE b.external_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM events x
            WHERE x.bank_id = :bank_id AND x.session_id = :session_id AND x.external_id = b.external_id)
    ),
    visible AS (
        SELECT coalesce(max(seq), 0) AS seq FROM events WHERE bank_id = :bank_id AND session_id = :session_id
    ),
    counted AS (SELECT count(*) AS n, max(occurred_at) AS at FROM fresh),
    session AS (
        INSERT INTO sessions AS s (bank_id, session_id, last_seq, last_event_at)
        SELECT :bank_id, :session_id, n, at FROM counted
        ON CONFLICT (bank_id, session_id) DO UPDATE SET
            status = 'open',
            closed_at = NULL,
            last_seq = s.last_seq + EXCLUDED.last_seq,
            last_event_at = GREATEST(s.last_event_at, EXCLUDED.last_event_at)
        WHERE s.last_seq = (SELECT seq FROM visible)  -- otherwise locked, not updated, no row returned
        RETURNING s.last_seq, s.distilled_seq
    ),
    inserted AS (
        INSERT INTO events (bank_id, session_id, seq, role, content, speaker, occurred_at, external_id,
                            metadata, agent_id, proposed)
        SELECT :bank_id, :session_id, se.last_seq - c.n + f.n, f.role, f.content, f.speaker, f.occurred_at,
               f.external_id, f.metadata::jsonb, CAST(:agent_id AS text), CAST(:proposed AS boolean)
        FROM fresh f, session se, counted c
    )
    SELECT se.last_seq, se.distilled_seq, ARRAY(SELECT ord FROM fresh ORDER BY ord) AS kept FROM session se
""")


@dataclass(frozen=True)
class Appended:
    first_seq: int  # of the first appended event (last_seq + 1 when none was)
    last_seq: int
    distilled_seq: int
    kept: list[int]  # indexes of the events appended (the others' external ids were there already)


def _arrays(events: list[NewEvent]) -> dict[str, Any]:
    return {
        "roles": [e.role for e in events],
        "contents": [e.content for e in events],
        "speakers": [e.speaker for e in events],
        "occurred": [e.occurred_at for e in events],
        "external_ids": [e.external_id for e in events],
        "metadata": [json.dumps(e.metadata) for e in events],
    }


async def append(
    db: AsyncSession, bank_id: str, session_id: str, events: list[NewEvent], author: Author | None = None
) -> Appended:
    """Append `events` (no external id twice among them) to the session, creating or reopening it:
    one round trip, or four when another append of the session committed while this one waited."""
    author = author or Author()
    params = {
        "bank_id": bank_id,
        "session_id": session_id,
        **_arrays(events),
        "agent_id": author.agent_id,
        "proposed": author.proposed,
    }
    row = (await db.execute(_APPEND, params)).first()
    if row is None:
        return await append_locked(db, bank_id, session_id, events, author)
    kept = [i - 1 for i in row.kept]
    return Appended(row.last_seq - len(kept) + 1, row.last_seq, row.distilled_seq, kept)


async def append_locked(
    db: AsyncSession, bank_id: str, session_id: str, events: list[NewEvent], author: Author
) -> Appended:
    """The append with the session row locked first, then reads that see every committed event."""
    last_seq, distilled_seq = await lock_session_for_append(db, bank_id, session_id)
    ids = [e.external_id for e in events if e.external_id is not None]
    already = await existing_external_ids(db, bank_id, session_id, ids) if ids else set()
    kept = [i for i, e in enumerate(events) if e.external_id is None or e.external_id not in already]
    if kept:
        await insert_events_and_advance(
            db, bank_id, session_id, last_seq + 1, [events[i] for i in kept], author
        )
    return Appended(last_seq + 1, last_seq + len(kept), distilled_seq, kept)


async def get_session(db: AsyncSession, bank_id: str, session_id: str) -> ChatSession | None:
    return await db.get(ChatSession, (bank_id, session_id))


async def events_by_id(db: AsyncSession, ids: list[int]) -> dict[int, Event]:
    if not ids:
        return {}
    return {e.id: e for e in (await db.scalars(select(Event).where(Event.id.in_(ids)))).all()}


async def list_sessions(
    db: AsyncSession, bank_id: str, *, after: str | None, limit: int
) -> list[ChatSession]:
    stmt = (
        select(ChatSession)
        .where(ChatSession.bank_id == bank_id)
        .order_by(ChatSession.session_id)
        .limit(limit)
    )
    if after is not None:
        stmt = stmt.where(ChatSession.session_id > after)
    return list((await db.scalars(stmt)).all())


async def list_events(
    db: AsyncSession, bank_id: str, session_id: str, *, after_seq: int, limit: int
) -> list[Event]:
    stmt = (
        select(Event)
        .where(Event.bank_id == bank_id, Event.session_id == session_id, Event.seq > after_seq)
        .order_by(Event.seq)
        .limit(limit)
    )
    return list((await db.scalars(stmt)).all())


async def close_session(db: AsyncSession, bank_id: str, session_id: str) -> ChatSession | None:
    session = await db.get(ChatSession, (bank_id, session_id), with_for_update=True)
    if session is not None and session.status != "closed":
        session.status = "closed"
        session.closed_at = datetime.now(UTC)
        await db.flush()
    return session


async def advance_distilled(db: AsyncSession, bank_id: str, session_id: str, seq: int) -> None:
    await db.execute(
        text("""
            UPDATE sessions SET distilled_seq = GREATEST(distilled_seq, :seq)
            WHERE bank_id = :bank_id AND session_id = :session_id
        """),
        {"seq": seq, "bank_id": bank_id, "session_id": session_id},
    )


async def set_quarantined(
    db: AsyncSession, bank_id: str, session_id: str, quarantined: list[dict[str, Any]]
) -> None:
    await db.execute(
        update(ChatSession)
        .where(ChatSession.bank_id == bank_id, ChatSession.session_id == session_id)
        .values(quarantined=quarantined)
    )


# Sessions with their bank and their last event (`e`), and whether that event is older than the bank's
# `idle_distill_seconds` (server time; `:default_idle`, `:max_idle`): shared by the sweep's idle rules.
IDLE_SESSIONS = """
            SELECT s.bank_id, s.session_id
            FROM sessions s
            JOIN banks b ON b.id = s.bank_id
            JOIN events e ON e.bank_id = s.bank_id AND e.session_id = s.session_id AND e.seq = s.last_seq"""
IDLE_LAST_EVENT = """e.created_at < now() - make_interval(secs => LEAST(
                    COALESCE((b.config->>'idle_distill_seconds')::numeric, :default_idle), :max_idle))"""


async def idle_undistilled_sessions(
    db: AsyncSession, default_idle_seconds: int, limit: int
) -> list[tuple[str, str]]:
    """Sessions with undistilled events whose last append is older than the bank's
    `idle_distill_seconds` (server time of the last event, not the client's `occurred_at`)."""
    rows = await db.execute(
        text(f"""
            {IDLE_SESSIONS}
            WHERE s.last_seq > s.distilled_seq AND {IDLE_LAST_EVENT}
            ORDER BY e.created_at
            LIMIT :limit
        """),
        {"default_idle": default_idle_seconds, "max_idle": MAX_IDLE_SECONDS, "limit": limit},
    )
    return [(row[0], row[1]) for row in rows]


async def all_session_ids(db: AsyncSession, bank_id: str) -> list[str]:
    stmt = (
        select(ChatSession.session_id).where(ChatSession.bank_id == bank_id).order_by(ChatSession.session_id)
    )
    return list((await db.scalars(stmt)).all())
