"""The bank's timeline ("memory replay"): events, unit transitions, queries and jobs merged in time
order by one statement.

Each kind is a bounded subquery that walks its own `(bank_id, <time>)` index from the keyset
position and stops after `limit` rows; a UNION ALL merges them and the outer ORDER BY / LIMIT keeps
the first `limit`. The order is (at, kind rank, key): `at` is the row's own timestamp (transaction
time), the rank breaks ties between kinds, and the key between rows of one kind: the zero-padded
row id, or the job id's hex digits and its phase — fixed-length digits and a-f, which order the
same under any collation. Pages never repeat or skip an item written before the walk.

Finished jobs are found through `ix_jobs_bank_created` (bank) and sorted by `finished_at`: a bank
with very many jobs would want an index on `(bank_id, finished_at)`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

CONTENT_PREVIEW_CHARS = 280

# Ties at one instant read as cause before effect: the appended turns, the units they became,
# the queries that read them, the jobs those writes scheduled.
KIND_RANK = {"event": 0, "memory": 1, "query": 2, "job": 3}


@dataclass(frozen=True)
class TimelinePosition:
    """A keyset position: the last item of a page."""

    at: datetime
    rank: int
    key: str


@dataclass(frozen=True)
class TimelineRow:
    at: datetime
    rank: int
    key: str
    item: dict[str, Any]  # kind, id and the kind's own fields

    @property
    def position(self) -> TimelinePosition:
        return TimelinePosition(self.at, self.rank, self.key)


@dataclass(frozen=True)
class _Source:
    """One per-kind subquery; all fragments are constants (values travel as bind parameters;
    a literal colon is written `\\:` so that `text()` does not read it as one)."""

    kind: str
    at: str  # the timestamp that places a row on the timeline (a column of an indexed pair)
    key: str  # the tie-break within the kind
    item: str  # jsonb_build_object(...) of the item's fields
    from_: str
    where: str
    session: str  # the condition `session_id` adds


def _preview(column: str) -> str:
    """The content cut for the timeline, null when it is empty (a purged unit) or missing."""
    return (
        f"'content', CASE WHEN {column} <> '' THEN left({column}, {CONTENT_PREVIEW_CHARS}) END, "
        f"'content_truncated', coalesce(length({column}) > {CONTENT_PREVIEW_CHARS}, false)"
    )


# Jobs that name another session (a distillation, a redistillation of other sessions) are left out;
# bank-wide ones (resolution) stay.
_JOB_SESSION = (
    "(j.params->>'session_id' IS NULL OR j.params->>'session_id' = :session_id)"
    " AND (jsonb_typeof(j.params->'session_ids') IS DISTINCT FROM 'array'"
    " OR j.params->'session_ids' @> to_jsonb(CAST(:session_id AS text)))"
)
_ID_KEY = "lpad({}::text, 20, '0') COLLATE \"C\""

_SOURCES = (
    _Source(
        kind="event",
        at="e.created_at",
        key=_ID_KEY.format("e.id"),
        item=(
            "jsonb_build_object('kind', 'event', 'id', 'event:' || e.id, 'session_id', e.session_id, "
            "'seq', e.seq, 'role', e.role, 'speaker', e.speaker, 'event_id', e.id, 'agent_id', e.agent_id, "
            f"'occurred_at', e.occurred_at, {_preview('e.content')})"
        ),
        from_="events e",
        where="e.bank_id = :bank_id",
        session="e.session_id = :session_id",
    ),
    _Source(
        kind="memory",
        at="h.at",
        key=_ID_KEY.format("h.id"),
        # Content only from the unit itself, never from history details: a purge blanks the unit.
        item=(
            "jsonb_build_object('kind', 'memory', 'id', 'memory:' || h.id, 'memory_id', h.memory_id, "
            "'action', h.action, 'actor', h.actor, 'agent_id', h.agent_id, 'unit_agent_id', u.agent_id, "
            "'details', h.details, 'session_id', u.session_id, "
            f"{_preview('u.content')})"
        ),
        from_="memory_history h LEFT JOIN memory_units u ON u.id = h.memory_id AND u.bank_id = h.bank_id",
        where="h.bank_id = :bank_id",
        session="u.session_id = :session_id",
    ),
    _Source(
        kind="query",
        at="q.created_at",
        key=_ID_KEY.format("q.id"),
        item=(
            "jsonb_build_object('kind', 'query', 'id', 'query:' || q.id, 'query', q.query, "
            "'params', q.params, 'result_ids', to_jsonb(q.result_ids), 'took_ms', q.took_ms)"
        ),
        from_="query_log q",
        where="q.bank_id = :bank_id",
        session="(q.params->>'session_id' IS NULL OR q.params->>'session_id' = :session_id)",
    ),
    _Source(
        kind="job",
        at="j.created_at",
        key="(replace(j.id::text, '-', '') || '0') COLLATE \"C\"",
        item=(
            "jsonb_build_object('kind', 'job', 'id', 'job:' || j.id || '\\:created', 'job_id', j.id, "
            "'job_kind', j.kind, 'phase', 'created', 'status', 'queued', 'error', NULL)"
        ),
        from_="jobs j",
        where="j.bank_id = :bank_id",
        session=_JOB_SESSION,
    ),
    _Source(
        kind="job",
        at="j.finished_at",
        key="(replace(j.id::text, '-', '') || '1') COLLATE \"C\"",
        item=(
            "jsonb_build_object('kind', 'job', 'id', 'job:' || j.id || '\\:finished', 'job_id', j.id, "
            "'job_kind', j.kind, 'phase', 'finished', 'status', j.status, 'error', j.error)"
        ),
        from_="jobs j",
        where="j.bank_id = :bank_id AND j.finished_at IS NOT NULL",
        session=_JOB_SESSION,
    ),
)


def _subquery(source: _Source, *, start: bool, end: bool, session: bool, after: bool) -> str:
    rank = KIND_RANK[source.kind]
    conditions = [source.where]
    if start:
        conditions.append(f"{source.at} >= :start")
    if end:
        conditions.append(f"{source.at} < :end")
    if session:
        conditions.append(source.session)
    if after:
        # The plain `>=` lets the index range start at the position; the row comparison is exact.
        conditions.append(f"{source.at} >= :after_at")
        conditions.append(f"({source.at}, {rank}, {source.key}) > (:after_at, :after_rank, :after_key)")
    return (
        f"(SELECT {source.at} AS at, {rank} AS rank, {source.key} AS key, {source.item} AS item"
        f" FROM {source.from_} WHERE {' AND '.join(conditions)}"
        f" ORDER BY {source.at}, {source.key} LIMIT :limit)"
    )


def timeline_sql(kinds: Collection[str], *, start: bool, end: bool, session: bool, after: bool) -> str:
    """The statement for the chosen kinds and filters (exposed for EXPLAIN in tests)."""
    parts = [
        _subquery(s, start=start, end=end, session=session, after=after) for s in _SOURCES if s.kind in kinds
    ]
    return (
        "SELECT at, rank, key, item FROM (" + " UNION ALL ".join(parts) + ") AS timeline"
        ' ORDER BY at, rank, key COLLATE "C" LIMIT :limit'
    )


async def timeline(
    db: AsyncSession,
    bank_id: str,
    *,
    kinds: Collection[str],
    start: datetime | None,
    end: datetime | None,
    session_id: str | None,
    after: TimelinePosition | None,
    limit: int,
) -> list[TimelineRow]:
    """Up to `limit` items of the bank after `after`, ascending, in one round trip."""
    if not kinds:
        return []
    statement = timeline_sql(
        kinds,
        start=start is not None,
        end=end is not None,
        session=session_id is not None,
        after=after is not None,
    )
    params: dict[str, Any] = {"bank_id": bank_id, "limit": limit}
    if start is not None:
        params["start"] = start
    if end is not None:
        params["end"] = end
    if session_id is not None:
        params["session_id"] = session_id
    if after is not None:
        params.update(after_at=after.at, after_rank=after.rank, after_key=after.key)
    rows = await db.execute(text(statement), params)
    return [TimelineRow(at, rank, key, item) for at, rank, key, item in rows]
