"""Running the retrieval channels: the request's time window sized, the bank's too common words left
out, the one statement (app/db/repositories/channels.py) run and its rows read as hits. Which words
and names are common in a bank is remembered per process for a while."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime

from cachetools import TTLCache
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories import query as repo
from app.db.repositories.channels import channel_rows
from app.db.repositories.query import ChannelInputs, ChannelLimits, Filters
from app.query.tuning import (
    CHANNEL_LIMIT,
    COMMON_ENTITY_MENTIONS,
    COMMON_WORD_UNITS,
    HOP_NEIGHBOURS,
    SMALL_WINDOW_UNITS,
    VOCABULARY_CACHE_SIZE,
    VOCABULARY_TTL_SECONDS,
    WINDOW_CANDIDATES,
    YEARLESS_YEARS,
)

LIMITS = ChannelLimits(
    rows=CHANNEL_LIMIT,
    window_candidates=WINDOW_CANDIDATES,
    common_mentions=COMMON_ENTITY_MENTIONS,
    hop_neighbours=HOP_NEIGHBOURS,
)
_common_words: TTLCache[tuple[str, str], bool] = TTLCache(VOCABULARY_CACHE_SIZE, VOCABULARY_TTL_SECONDS)
_common_names: TTLCache[tuple[str, str], bool] = TTLCache(VOCABULARY_CACHE_SIZE, VOCABULARY_TTL_SECONDS)


@dataclass(frozen=True, slots=True)
class Hit:
    channel: str
    memory_id: uuid.UUID
    rank: int
    score: float
    importance: float
    layer: str
    tags: list[str]
    valid_from: datetime | None
    created_at: datetime
    sources: list[int]


async def rare_words(db: AsyncSession, bank_id: str, words: list[str]) -> list[str]:
    """Leave out of `words` those in more than COMMON_WORD_UNITS of the bank's units."""
    unknown = [w for w in words if (bank_id, w) not in _common_words]
    if unknown:
        for word, common in (await repo.common_words(db, bank_id, unknown, COMMON_WORD_UNITS)).items():
            _common_words[(bank_id, word)] = common
    return [w for w in words if not _common_words.get((bank_id, w), False)]


async def common_entity_names(db: AsyncSession, bank_id: str, names: list[str]) -> list[str]:
    """Those of `names` (canonical) that are entities of the bank linked to more than
    COMMON_ENTITY_MENTIONS units: the bank's own subjects (its user, the people of a conversation)."""
    unknown = [n for n in names if (bank_id, n) not in _common_names]
    if unknown:
        found = await repo.common_entities(db, bank_id, unknown, COMMON_ENTITY_MENTIONS)
        for name, common in found.items():
            _common_names[(bank_id, name)] = common
    return [n for n in names if _common_names.get((bank_id, n), False)]


async def size_window(db: AsyncSession, f: Filters) -> Filters:
    """Count the units of `f`'s window (up to SMALL_WINDOW_UNITS + 1), which sets how the channels
    apply it. A year-less window ("in June") that holds no memory moves to the latest earlier year
    whose holds one (at most YEARLESS_YEARS back): the June the bank remembers."""
    if not f.window or f.small_window is not None:
        return f
    count = await repo.count_window(db, f, SMALL_WINDOW_UNITS + 1)
    if f.yearless and count == 0 and f.time_from and f.time_to:
        start, end = f.time_from, f.time_to
        for years in range(1, YEARLESS_YEARS + 1):
            try:
                earlier = replace(f, time_from=_years_before(start, years), time_to=_years_before(end, years))
            except ValueError:  # February 29 in a common year
                continue
            if found := await repo.count_window(db, earlier, SMALL_WINDOW_UNITS + 1):
                f, count = earlier, found
                break
    return replace(f, small_window=count <= SMALL_WINDOW_UNITS)


def _years_before(at: datetime, years: int) -> datetime:
    return at.replace(year=at.year - years)


async def run_channels(db: AsyncSession, f: Filters, c: ChannelInputs) -> list[Hit]:
    """Run every channel, its hits ranked within it, in one round trip (up to three when the
    bank's common words are not known yet or the time window is not sized)."""
    f = await size_window(db, f)
    if "keyword" in c.channels and c.keywords:
        c = replace(c, keywords=await rare_words(db, f.bank_id, c.keywords))
    rows = await channel_rows(db, f, c)
    # Unpacked by position (the statement's column order): ~250 rows a query.
    return [
        Hit(
            channel, memory_id, int(rank), float(score), importance, layer, tags, valid_from, created, sources
        )
        for channel, rank, memory_id, score, importance, layer, tags, valid_from, created, sources in rows
    ]
