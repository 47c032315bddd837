"""What a unit's `why` sentence is built from (app/memory/why.py), for a page of units in one statement:
its first source turn, the unit it replaced and the one that replaced it, and who created it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.ext.asyncio import AsyncSession

# A source turn's text is read up to this many characters: the quote is one sentence of it.
TURN_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Neighbour:
    """The unit a unit replaced, or the one that replaced it."""

    content: str
    claims: list[dict[str, Any]] | None
    said_at: datetime


@dataclass(frozen=True, slots=True)
class Provenance:
    """One unit's source turn (the first of its sources), neighbours in its chain and creator."""

    seq: int | None
    role: str | None
    speaker: str | None
    occurred_at: datetime | None
    turn: str | None  # the turn's text, up to TURN_CHARS
    replaced: Neighbour | None
    replaced_by: Neighbour | None
    created_by: str | None  # the actor of its `created` history action


_PROVENANCE = text(f"""
    SELECT u.id, e.seq, e.role, e.speaker, e.occurred_at, left(e.content, {TURN_CHARS}) AS turn,
           p.content AS p_content, p.claims AS p_claims, coalesce(p.valid_from, p.created_at) AS p_at,
           s.content AS s_content, s.claims AS s_claims, coalesce(s.valid_from, s.created_at) AS s_at,
           h.actor AS created_by
    FROM memory_units u
    LEFT JOIN events e ON e.id = u.source_event_ids[1]
    LEFT JOIN memory_units p ON p.id = u.supersedes
    LEFT JOIN memory_units s ON s.id = u.superseded_by
    LEFT JOIN LATERAL (
        SELECT actor FROM memory_history
        WHERE memory_id = u.id AND action = 'created' ORDER BY at LIMIT 1
    ) h ON true
    WHERE u.id = ANY(:ids)
""").bindparams(bindparam("ids", type_=ARRAY(UUID(as_uuid=True))))


async def provenance(db: AsyncSession, ids: list[uuid.UUID]) -> dict[uuid.UUID, Provenance]:
    """Each unit's provenance, by id (ids of no unit are left out)."""
    if not ids:
        return {}
    rows = (await db.execute(_PROVENANCE, {"ids": ids})).mappings()
    return {
        row["id"]: Provenance(
            seq=row["seq"],
            role=row["role"],
            speaker=row["speaker"],
            occurred_at=row["occurred_at"],
            turn=row["turn"],
            replaced=Neighbour(row["p_content"], row["p_claims"], row["p_at"]) if row["p_at"] else None,
            replaced_by=Neighbour(row["s_content"], row["s_claims"], row["s_at"]) if row["s_at"] else None,
            created_by=row["created_by"],
        )
        for row in rows
    }
