"""The retrieval request as the channels read it: its filters (`Filters`), what each channel looks
for (`ChannelInputs`) and what a channel finds (`Hit`); and the two reads that shape the statement
before it runs: how many units the time window holds and which of the query's words are too common
in the bank to search for. The channels themselves are app/db/repositories/channels.py."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime

from cachetools import TTLCache
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

CHANNEL_LIMIT = 50
# A time window of at most this many units (said in it) is a set the channels are driven by; a larger
# one is a condition on each row their own indexes find (see `channels._where`).
SMALL_WINDOW_UNITS = 2000
# The semantic channel's candidates in a larger window (see `channels._semantic`).
WINDOW_CANDIDATES = 500
# An entity named in more units than this says little about any one of them (the bank's own user,
# the two people of a conversation): the entity channel leaves it out unless the request names it.
COMMON_ENTITY_MENTIONS = 50
# The entity channel's walk over relations keeps this many neighbours per hop (the most recently
# related): a hub (the bank's user relates to everything it said) cannot pull in the whole bank.
HOP_NEIGHBOURS = 20
# A word in more units than this (in a large bank: "want", "order") costs more to rank than it tells;
# the keyword channel leaves it out. Counting is a bitmap scan per word, so each API process remembers
# the answer per (bank, word) for a while: a bank's vocabulary changes slowly.
COMMON_WORD_UNITS = 1000
_common_words: TTLCache[tuple[str, str], bool] = TTLCache(maxsize=100_000, ttl=600)


@dataclass
class Filters:
    bank_id: str
    statuses: list[str]
    as_of: datetime | None = None
    tags: list[str] | None = None
    entities: list[str] | None = None  # canonical names
    agents: list[str] | None = None  # only units these agents wrote
    time_from: datetime | None = None
    time_to: datetime | None = None
    window_units: int | None = None  # units said in the window, counted up to SMALL_WINDOW_UNITS + 1

    @property
    def window(self) -> bool:
        return self.time_from is not None and self.time_to is not None

    @property
    def small_window(self) -> bool:
        return self.window_units is not None and self.window_units <= SMALL_WINDOW_UNITS


@dataclass
class ChannelInputs:
    model: str
    dim: int
    vector: list[float] | None  # None: no semantic channel
    keywords: list[str]  # the query's content words; empty: no keyword channel
    entity_names: list[str] = field(default_factory=list)
    entity_wanted: list[str] = field(default_factory=list)  # named by the request: never too common
    entity_walked: list[str] = field(default_factory=list)  # only their relations are followed
    inferred_tags: list[str] = field(default_factory=list)
    channels: frozenset[str] = frozenset()


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
    """`words` without those in more than COMMON_WORD_UNITS of the bank's units."""
    unknown = [w for w in words if (bank_id, w) not in _common_words]
    if unknown:
        rows = await db.execute(
            text(f"""
                SELECT w.word, (SELECT count(*) FROM (
                    SELECT 1 FROM memory_units m
                    WHERE m.search @@ to_tsquery('english', quote_literal(w.word)) AND m.bank_id = :bank
                    LIMIT {COMMON_WORD_UNITS + 1}) c) AS n
                FROM unnest(CAST(:words AS text[])) AS w(word)
            """),
            {"bank": bank_id, "words": unknown},
        )
        for word, n in rows:
            _common_words[(bank_id, word)] = n > COMMON_WORD_UNITS
    return [w for w in words if not _common_words.get((bank_id, w), False)]


_common_names: TTLCache[tuple[str, str], bool] = TTLCache(maxsize=100_000, ttl=600)


async def common_entity_names(db: AsyncSession, bank_id: str, names: list[str]) -> list[str]:
    """Those of `names` (canonical) that are entities of the bank linked to more than
    COMMON_ENTITY_MENTIONS units: the bank's own subjects (its user, the people of a conversation).
    Remembered per (bank, name) for a while, like the common words."""
    unknown = [n for n in names if (bank_id, n) not in _common_names]
    if unknown:
        rows = await db.execute(
            text(f"""
                SELECT w.name, EXISTS (
                    SELECT 1 FROM entities e
                    WHERE e.bank_id = :bank AND e.canonical_name = w.name
                      AND (SELECT count(*) FROM (SELECT 1 FROM memory_entities me WHERE me.entity_id = e.id
                           LIMIT {COMMON_ENTITY_MENTIONS + 1}) c) > {COMMON_ENTITY_MENTIONS})
                FROM unnest(CAST(:names AS text[])) AS w(name)
            """),
            {"bank": bank_id, "names": unknown},
        )
        for name, common in rows:
            _common_names[(bank_id, name)] = bool(common)
    return [n for n in names if _common_names.get((bank_id, n), False)]


async def size_window(db: AsyncSession, f: Filters) -> Filters:
    """`f` with `window_units` counted (up to SMALL_WINDOW_UNITS + 1, on the valid_from index), which
    sets how the channels apply the window."""
    if not f.window or f.window_units is not None:
        return f
    count = await db.scalar(
        text(f"""
            SELECT count(*) FROM (
                SELECT 1 FROM memory_units m
                WHERE m.bank_id = :bank AND m.status = 'active'
                  AND m.valid_from >= :time_from AND m.valid_from < :time_to
                LIMIT {SMALL_WINDOW_UNITS + 1}) c
        """),
        {"bank": f.bank_id, "time_from": f.time_from, "time_to": f.time_to},
    )
    return replace(f, window_units=int(count or 0))
