"""Task episodes' bookkeeping: where a session's tasks ended (`sessions.metadata.task_ends`, the seqs at
which a close, a reflect or the idle sweep ended one), how far they were written
(`sessions.metadata.task_seq`), and the links from a task episode to the units of its turns."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.events import IDLE_LAST_EVENT, IDLE_SESSIONS

TASK_TAG = "episode.task"
MAX_TASK_ENDS = 1000  # a session that ends more tasks than this keeps only the newest ends


def task_ends(metadata: dict[str, Any]) -> list[int]:
    ends = metadata.get("task_ends")
    return [int(e) for e in ends] if isinstance(ends, list) else []


def task_seq(metadata: dict[str, Any]) -> int:
    return int(metadata.get("task_seq") or 0)


async def mark_task_end(db: AsyncSession, bank_id: str, session_id: str) -> bool:
    """A task of the session ended at its last turn; False when nothing was said since the last end."""
    row = await db.execute(
        text("""
            UPDATE sessions SET metadata = jsonb_set(metadata, '{task_ends}',
                (SELECT COALESCE(jsonb_agg(e ORDER BY e), '[]'::jsonb) FROM (
                    SELECT e FROM jsonb_array_elements(
                        COALESCE(metadata->'task_ends', '[]'::jsonb) || to_jsonb(last_seq)) AS a(e)
                    ORDER BY (e #>> '{}')::bigint DESC LIMIT :keep) AS kept))
            WHERE bank_id = :bank_id AND session_id = :session_id AND last_seq > 0
              AND last_seq > COALESCE((metadata->'task_ends'->>-1)::bigint, 0)
            RETURNING last_seq
        """),
        {"bank_id": bank_id, "session_id": session_id, "keep": MAX_TASK_ENDS},
    )
    return row.first() is not None


async def set_task_seq(db: AsyncSession, bank_id: str, session_id: str, seq: int) -> None:
    await db.execute(
        text("""
            UPDATE sessions SET metadata = jsonb_set(metadata, '{task_seq}', to_jsonb(CAST(:seq AS bigint)))
            WHERE bank_id = :bank_id AND session_id = :session_id
        """),
        {"bank_id": bank_id, "session_id": session_id, "seq": seq},
    )


async def tags_of_turns(db: AsyncSession, bank_id: str, session_id: str, seqs: list[int]) -> list[list[str]]:
    """The tags of the session's live units distilled from any of `seqs` (task episodes aside)."""
    rows = await db.execute(
        text("""
            SELECT tags FROM memory_units
            WHERE bank_id = :bank_id AND session_id = :session_id AND status IN ('pending', 'active')
              AND source_seqs && CAST(:seqs AS integer[]) AND NOT (:tag = ANY(tags))
            ORDER BY created_at, id
        """),
        {"bank_id": bank_id, "session_id": session_id, "seqs": seqs, "tag": TASK_TAG},
    )
    return [list(r[0]) for r in rows]


async def link_task_episodes(db: AsyncSession, bank_id: str, session_id: str) -> None:
    """Every live task episode of the session lists (`metadata.links`) the live units distilled from
    its turns, oldest first: what the task established, one click away."""
    await db.execute(
        text("""
            UPDATE memory_units t SET metadata = jsonb_set(t.metadata, '{links}', COALESCE((
                SELECT jsonb_agg(u.id::text ORDER BY u.created_at, u.id) FROM memory_units u
                WHERE u.bank_id = t.bank_id AND u.session_id = t.session_id AND u.id <> t.id
                  AND u.status IN ('pending', 'active') AND NOT (:tag = ANY(u.tags))
                  AND u.source_seqs && t.source_seqs), '[]'::jsonb))
            WHERE t.bank_id = :bank_id AND t.session_id = :session_id AND :tag = ANY(t.tags)
              AND t.status IN ('pending', 'active')
        """),
        {"bank_id": bank_id, "session_id": session_id, "tag": TASK_TAG},
    )


async def idle_sessions_past_task_end(
    db: AsyncSession, default_idle_seconds: int, max_idle_seconds: int, horizon_seconds: int, limit: int
) -> list[tuple[str, str]]:
    """Sessions distilled to their last turn, idle past the bank's `idle_distill_seconds` (server time
    of the last event) but not longer than `horizon_seconds`, with turns since their last task end:
    their task ended by going quiet. (The sweep's own query covers sessions with undistilled turns.)"""
    rows = await db.execute(
        text(f"""
            {IDLE_SESSIONS}
            WHERE s.last_seq = s.distilled_seq AND s.last_seq > 0
              AND s.last_seq > COALESCE((s.metadata->'task_ends'->>-1)::bigint, 0)
              AND {IDLE_LAST_EVENT} AND e.created_at > now() - make_interval(secs => :horizon)
            ORDER BY e.created_at
            LIMIT :limit
        """),
        {
            "default_idle": default_idle_seconds,
            "max_idle": max_idle_seconds,
            "horizon": horizon_seconds,
            "limit": limit,
        },
    )
    return [(row[0], row[1]) for row in rows]
