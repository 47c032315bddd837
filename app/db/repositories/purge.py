"""A purge: a unit's words gone for good from every column, and the turns it was drawn from, which a
replay of its session must not draw a unit from again."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import MemoryEmbedding, MemoryEntity, MemoryUnit, Relation


async def purged_turns(db: AsyncSession, bank_id: str, session_id: str) -> set[int]:
    """The seqs of the session's turns purged units were drawn from (a purge keeps sources, not words)."""
    of_session = (MemoryUnit.bank_id == bank_id) & (MemoryUnit.session_id == session_id)
    rows = await db.scalars(
        select(MemoryUnit.source_seqs).where(of_session, MemoryUnit.metadata_.has_key("purged_at"))
    )
    return {seq for seqs in rows for seq in seqs}


async def erase(db: AsyncSession, unit: MemoryUnit) -> None:
    """Purge: the unit's text, claims, vectors, entity links and relations are gone for good, and so are the
    entities only it named (their names are its words); the identity key, a digest of its content, too."""
    await db.execute(delete(MemoryEmbedding).where(MemoryEmbedding.memory_id == unit.id))
    linked = (
        await db.scalars(
            delete(MemoryEntity).where(MemoryEntity.memory_id == unit.id).returning(MemoryEntity.entity_id)
        )
    ).all()
    await db.execute(delete(Relation).where(Relation.memory_id == unit.id))
    if linked:
        await db.execute(
            text(
                "DELETE FROM entities e WHERE e.id = ANY(:ids)"
                " AND NOT EXISTS (SELECT 1 FROM memory_entities m WHERE m.entity_id = e.id)"
                " AND NOT EXISTS (SELECT 1 FROM relations r WHERE e.id IN (r.subject_id, r.object_id))"
            ),
            {"ids": list(linked)},
        )
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == unit.id)
        .values(
            content="",
            search_text="",
            identity_key=None,
            claims=[],  # a claim holds the unit's words (its value, its clause)
            claim_subject=None,
            claim_attribute=None,
            metadata_={"purged_at": datetime.now(UTC).isoformat()},
        )
    )
