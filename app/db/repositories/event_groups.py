"""Group commit's statement: the appends of many requests, to many sessions of many banks, in one
multi-row INSERT (app.events.group_commit runs it, one transaction per group)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.events import Author, NewEvent, event_columns

SessionKey = tuple[str, str]  # (bank_id, session_id)

# The single append's statement (app.db.repositories.events._APPEND) over many sessions: each session
# row created or locked, in (bank, session) order so that two groups never wait on each other in a
# cycle, and advanced only where the statement's snapshot saw the session's every event; the events
# of those sessions inserted after their last seqs, in the order given. A session whose row moved
# since the snapshot is locked but not advanced, and not returned: the caller appends its events
# with fresh reads (`append_locked`), in the same transaction. No external id may repeat within a
# session in the input (the caller keeps the first).
_APPEND_GROUP = text("""
    WITH batch AS (
        SELECT * FROM unnest(CAST(:bank_ids AS text[]), CAST(:session_ids AS text[]), CAST(:roles AS text[]),
                             CAST(:contents AS text[]), CAST(:speakers AS text[]),
                             CAST(:occurred AS timestamptz[]), CAST(:external_ids AS text[]),
                             CAST(:metadata AS text[]), CAST(:agent_ids AS text[]),
                             CAST(:proposed AS boolean[]))
             WITH ORDINALITY AS e(bank_id, session_id, role, content, speaker, occurred_at, external_id,
                                  metadata, agent_id, proposed, ord)
    ),
    fresh AS (
        SELECT b.*, row_number() OVER (PARTITION BY b.bank_id, b.session_id ORDER BY b.ord) AS n
        FROM batch b
        WHERE b.external_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM events x
            WHERE x.bank_id = b.bank_id AND x.session_id = b.session_id AND x.external_id = b.external_id)
    ),
    targets AS (
        SELECT k.bank_id, k.session_id, count(f.ord) AS n, max(f.occurred_at) AS at,
               (SELECT coalesce(max(x.seq), 0) FROM events x
                WHERE x.bank_id = k.bank_id AND x.session_id = k.session_id) AS visible
        FROM (SELECT DISTINCT bank_id, session_id FROM batch) k
        LEFT JOIN fresh f ON f.bank_id = k.bank_id AND f.session_id = k.session_id
        GROUP BY k.bank_id, k.session_id
    ),
    session AS (
        INSERT INTO sessions AS s (bank_id, session_id, last_seq, last_event_at)
        SELECT t.bank_id, t.session_id, t.n, t.at FROM targets t ORDER BY t.bank_id, t.session_id
        ON CONFLICT (bank_id, session_id) DO UPDATE SET
            status = 'open',
            closed_at = NULL,
            last_seq = s.last_seq + EXCLUDED.last_seq,
            last_event_at = GREATEST(s.last_event_at, EXCLUDED.last_event_at)
        WHERE s.last_seq = (SELECT t.visible FROM targets t
                            WHERE t.bank_id = s.bank_id AND t.session_id = s.session_id)
        RETURNING s.bank_id, s.session_id, s.last_seq, s.distilled_seq
    ),
    inserted AS (
        INSERT INTO events
               (bank_id, session_id, seq, role, content, speaker, occurred_at, external_id, metadata,
                agent_id, proposed)
        SELECT f.bank_id, f.session_id, se.last_seq - t.n + f.n, f.role, f.content, f.speaker,
               f.occurred_at, f.external_id, f.metadata::jsonb, f.agent_id, f.proposed
        FROM fresh f
        JOIN session se ON se.bank_id = f.bank_id AND se.session_id = f.session_id
        JOIN targets t ON t.bank_id = f.bank_id AND t.session_id = f.session_id
        ORDER BY f.ord  -- ids in arrival (and so seq) order: readers break ties of time by id
    )
    SELECT se.bank_id, se.session_id, se.last_seq, se.distilled_seq,
           ARRAY(SELECT f.ord FROM fresh f WHERE f.bank_id = se.bank_id AND f.session_id = se.session_id
                 ORDER BY f.ord) AS kept
    FROM session se
""")


@dataclass(frozen=True)
class SessionAppended:
    last_seq: int  # the session's, after the group's events
    distilled_seq: int
    kept: list[int]  # indexes (into the group's events) of the events appended, in seq order


async def append_group(
    db: AsyncSession, events: list[tuple[SessionKey, NewEvent, Author]]
) -> dict[SessionKey, SessionAppended]:
    """Append `events` (each with its session and author) in one statement; the sessions advanced,
    each with the events it took. Sessions missing from the result were not touched but are locked."""
    params = {
        "bank_ids": [key[0] for key, _, _ in events],
        "session_ids": [key[1] for key, _, _ in events],
        **event_columns([event for _, event, _ in events]),
        "agent_ids": [author.agent_id for _, _, author in events],
        "proposed": [author.proposed for _, _, author in events],
    }
    rows = (await db.execute(_APPEND_GROUP, params)).all()
    return {
        (row.bank_id, row.session_id): SessionAppended(
            row.last_seq, row.distilled_seq, [ord_ - 1 for ord_ in row.kept]
        )
        for row in rows
    }
