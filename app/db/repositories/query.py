"""The retrieval statement's inputs: the request's filters (`Filters`), what each channel looks for
(`ChannelInputs`) and the statement's bounds (`ChannelLimits`); and the counts that shape it before it
runs: how many units a time window holds, and which words and entities are in too many of the bank's
units. The statement is app/db/repositories/channels.py; app/query/channels.py runs both."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models.memory import MEMORY_STATUSES


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
    # The window holds few units, a set that drives the channels (see `channels._where`); None: not
    # counted yet (`app.query.channels.size_window`).
    small_window: bool | None = None
    # the window is a month or a date named without its year: an earlier year's stands in for an empty one
    yearless: bool = False

    @property
    def window(self) -> bool:
        return self.time_from is not None and self.time_to is not None


@dataclass(frozen=True)
class ChannelLimits:
    """The statement's bounds (app/query/tuning.py says why each is what it is)."""

    rows: int  # each channel's hits
    window_candidates: int  # the semantic channel's candidates in a large window
    common_mentions: int  # an entity linked to more units than this is common
    hop_neighbours: int  # the entity channel's neighbours per hop


@dataclass
class ChannelInputs:
    model: str
    dim: int
    vector: list[float] | None  # None: no semantic channel
    keywords: list[str]  # the query's content words; empty: no keyword channel
    limits: ChannelLimits
    entity_names: list[str] = field(default_factory=list)
    entity_wanted: list[str] = field(default_factory=list)  # named by the request: never too common
    entity_walked: list[str] = field(default_factory=list)  # only their relations are followed
    inferred_tags: list[str] = field(default_factory=list)
    channels: frozenset[str] = frozenset()


async def common_words(db: AsyncSession, bank_id: str, words: list[str], limit: int) -> dict[str, bool]:
    """Tell of each of `words` whether it is in more than `limit` of the bank's units."""
    rows = await db.execute(
        text(f"""
            SELECT w.word, (SELECT count(*) FROM (
                SELECT 1 FROM memory_units m
                WHERE m.search @@ to_tsquery('english', quote_literal(w.word)) AND m.bank_id = :bank
                LIMIT {limit + 1}) c) AS n
            FROM unnest(CAST(:words AS text[])) AS w(word)
        """),
        {"bank": bank_id, "words": words},
    )
    return {word: n > limit for word, n in rows}


async def common_entities(db: AsyncSession, bank_id: str, names: list[str], limit: int) -> dict[str, bool]:
    """Tell of each of `names` (canonical) whether a bank entity of that name has more than `limit` units."""
    rows = await db.execute(
        text(f"""
            SELECT w.name, EXISTS (
                SELECT 1 FROM entities e
                WHERE e.bank_id = :bank AND e.canonical_name = w.name
                  AND (SELECT count(*) FROM (SELECT 1 FROM memory_entities me WHERE me.entity_id = e.id
                       LIMIT {limit + 1}) c) > {limit})
            FROM unnest(CAST(:names AS text[])) AS w(name)
        """),
        {"bank": bank_id, "names": names},
    )
    return {name: bool(common) for name, common in rows}


def status_sql(f: Filters, params: dict[str, Any], alias: str) -> str:
    """The filters' statuses as a condition on `alias`."""
    # Literals (the statuses are the schema's enum), so that generic plans can still use the partial
    # indexes: `status = 'active'`, and `status IN ('active', 'archived')` for a past window.
    statuses = sorted(set(f.statuses))
    if not set(statuses) <= set(MEMORY_STATUSES):
        params["statuses"] = statuses
        return f"{alias}.status = ANY(CAST(:statuses AS text[]))"
    if len(statuses) == 1:
        return f"{alias}.status = '{statuses[0]}'"
    return f"{alias}.status IN ({', '.join(repr(s) for s in statuses)})"


async def count_window(db: AsyncSession, f: Filters, limit: int) -> int:
    """Count the units of the statuses asked for (a past window's archived ones too) said in the filters'
    window, up to `limit` (on the valid_from index)."""
    params: dict[str, Any] = {"bank": f.bank_id, "time_from": f.time_from, "time_to": f.time_to}
    status = status_sql(f, params, "m")
    count = await db.scalar(
        text(f"""
            SELECT count(*) FROM (
                SELECT 1 FROM memory_units m
                WHERE m.bank_id = :bank AND {status}
                  AND m.valid_from >= :time_from AND m.valid_from < :time_to
                LIMIT {limit}) c
        """),
        params,
    )
    return int(count or 0)
