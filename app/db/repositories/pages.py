"""What a knowledge page reads (docs/architecture.md, "Knowledge pages"): an entity, the bank's main subject,
and the active units about one of them — each a single bounded statement; the page is derived on read."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.repositories.graph import canonical

MAX_PAGE_UNITS = 2000  # a page lists at most this many units (L3 first, then the newest)
SPEAKER_WINDOW = 5000  # the turns the main subject is counted over


@dataclass(frozen=True)
class PageEntity:
    id: uuid.UUID | None  # None: the bank's user, named by no entity
    name: str
    type: str


@dataclass(frozen=True)
class PageUnit:
    id: uuid.UUID
    content: str
    tags: list[str]
    valid_from: datetime | None
    created_at: datetime
    confidence: float
    layer: str
    day: str  # YYYY-MM-DD of `valid_from` (else `created_at`) in the bank's time zone


async def entity_by_id(db: AsyncSession, bank_id: str, entity_id: uuid.UUID) -> PageEntity | None:
    row = (
        await db.execute(
            text("SELECT id, name, type FROM entities WHERE bank_id = :bank_id AND id = :id"),
            {"bank_id": bank_id, "id": entity_id},
        )
    ).first()
    return PageEntity(row.id, row.name, row.type) if row else None


async def entity_by_name(db: AsyncSession, bank_id: str, name: str) -> PageEntity | None:
    """The entity of that name (case and spacing aside); a person first, then the most mentioned."""
    row = (
        await db.execute(
            text("""
                SELECT e.id, e.name, e.type FROM entities e
                WHERE e.bank_id = :bank_id AND e.canonical_name = :name
                ORDER BY (e.type = 'person') DESC,
                         (SELECT count(*) FROM memory_entities me WHERE me.entity_id = e.id) DESC, e.id
                LIMIT 1
            """),
            {"bank_id": bank_id, "name": canonical(name)},
        )
    ).first()
    return PageEntity(row.id, row.name, row.type) if row else None


async def main_speaker(db: AsyncSession, bank_id: str) -> str | None:
    """The speaker of most user turns among the bank's last `SPEAKER_WINDOW` turns (None when none
    names one): bounded by the (bank_id, created_at) index however long the bank's history is."""
    row = (
        await db.execute(
            text("""
                SELECT speaker FROM (
                    SELECT role, speaker FROM events WHERE bank_id = :bank_id
                    ORDER BY created_at DESC LIMIT :window
                ) AS recent
                WHERE role = 'user' AND speaker IS NOT NULL AND speaker <> ''
                GROUP BY speaker ORDER BY count(*) DESC, speaker LIMIT 1
            """),
            {"bank_id": bank_id, "window": SPEAKER_WINDOW},
        )
    ).first()
    return str(row.speaker) if row else None


_COLUMNS = (
    "u.id, u.content, u.tags, u.valid_from, u.created_at, u.confidence, u.layer,"
    " to_char(COALESCE(u.valid_from, u.created_at) AT TIME ZONE :tz, 'YYYY-MM-DD')"
)
_CURRENT = (
    "u.status = 'active' AND cardinality(u.tags) > 0 AND split_part(u.tags[1], '.', 1) <> ALL(:left_out)"
)
_ORDER = "ORDER BY (u.layer = 'semantic') DESC, COALESCE(u.valid_from, u.created_at) DESC, u.id"


async def entity_units(
    db: AsyncSession, bank_id: str, entity_id: uuid.UUID, left_out: list[str], tz: str
) -> list[PageUnit]:
    """Active units linked to the entity whose kind is not in `left_out`: L3 first, newest first. The
    entity's unit ids are collected first (one index scan), then read by primary key: a join here was
    planned as a nested loop over the active-units index (250× the rows) whenever statistics lagged a
    fast-growing bank (before its first ANALYZE), ~33 ms for 500 units instead of ~1."""
    rows = await db.execute(
        text(f"""
            SELECT {_COLUMNS} FROM memory_units u
            WHERE u.id = ANY(ARRAY(
                SELECT me.memory_id FROM memory_entities me
                WHERE me.bank_id = :bank_id AND me.entity_id = :entity_id
            )) AND u.bank_id = :bank_id AND {_CURRENT}
            {_ORDER} LIMIT :limit
        """),
        {"bank_id": bank_id, "entity_id": entity_id, "left_out": left_out, "limit": MAX_PAGE_UNITS, "tz": tz},
    )
    return [PageUnit(*row) for row in rows]


async def unnamed_subject_units(
    db: AsyncSession, bank_id: str, left_out: list[str], tz: str
) -> list[PageUnit]:
    """Active units that name no person: what the bank knows about its user when no turn names them."""
    rows = await db.execute(
        text(f"""
            SELECT {_COLUMNS} FROM memory_units u
            WHERE u.bank_id = :bank_id AND {_CURRENT}
              AND NOT EXISTS (SELECT 1 FROM memory_entities me JOIN entities e ON e.id = me.entity_id
                              WHERE me.memory_id = u.id AND e.type = 'person')
            {_ORDER} LIMIT :limit
        """),
        {"bank_id": bank_id, "left_out": left_out, "limit": MAX_PAGE_UNITS, "tz": tz},
    )
    return [PageUnit(*row) for row in rows]
