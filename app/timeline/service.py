"""A bank's timeline, the "memory replay" view: its appends, unit transitions, queries and jobs in time
order, read in one round trip over the four sources' indexes."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.repositories import timeline as repo
from app.errors import Invalid
from app.schemas.common import as_aware
from app.schemas.timeline import TimelinePage, decode_position, parse_kinds


async def timeline(
    db: AsyncSession,
    bank: ConfiguredBank,
    *,
    kinds: str | None,
    start: datetime | None,
    end: datetime | None,
    session_id: str | None,
    cursor: str | None,
    limit: int,
) -> TimelinePage:
    """A page of the timeline; `start` and `end` without an offset are read in the bank's time zone,
    `kinds` is the comma list of the request (default: all)."""
    tz = bank.timezone
    start = as_aware(start, tz) if start is not None else None
    end = as_aware(end, tz) if end is not None else None
    if start is not None and end is not None and start > end:
        raise Invalid("`from` must not be after `to`.")
    rows = await repo.timeline(
        db,
        bank.id,
        kinds=parse_kinds(kinds),
        start=start,
        end=end,
        session_id=session_id,
        after=decode_position(cursor),
        limit=limit + 1,
    )
    return TimelinePage.from_rows(rows, limit)
