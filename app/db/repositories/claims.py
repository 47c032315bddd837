"""Units by their claims: the active holders of an attribute, the units stating a value a change names as
replaced, and the claim columns written once a unit's claims are read."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, false, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from sqlalchemy.orm.attributes import set_committed_value

from app.db.models import Entity, MemoryEmbedding, MemoryEntity, MemoryUnit, Relation

HOLDERS = 20  # the newest active units per lookup: an attribute's history is short, its head newest


async def set_claims(db: AsyncSession, unit: MemoryUnit, columns: dict[str, Any]) -> None:
    """Store a unit's claims (`claims`, `claim_subject`, `claim_attribute`), on the loaded `unit` too."""
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == unit.id)
        .values(**columns)
        .execution_options(synchronize_session=False)
    )
    for name, value in columns.items():  # the row says so now: nothing for a flush to write again
        set_committed_value(unit, name, value)


async def holding(
    db: AsyncSession, bank_id: str, keys: list[dict[str, str]], statuses: list[str]
) -> set[uuid.UUID]:
    """The ids of the bank's units (of `statuses`) whose claims hold one of `keys` (subject and head),
    newest first, at most HOLDERS (on the GIN index of `claims`)."""
    if not keys:
        return set()
    stmt = (
        select(MemoryUnit.id)
        .where(
            MemoryUnit.bank_id == bank_id,
            MemoryUnit.status.in_(statuses),
            or_(*(MemoryUnit.claims.contains([key]) for key in keys)),
        )
        .order_by(MemoryUnit.created_at.desc())
        .limit(HOLDERS)
    )
    return set((await db.scalars(stmt)).all())


async def active_holders(
    db: AsyncSession,
    unit: MemoryUnit,
    *,
    keys: list[dict[str, str]],
    attributes: list[tuple[str, str]],
    old_values: list[str],
    exclude: list[uuid.UUID],
) -> list[tuple[MemoryUnit, float]]:
    """The bank's active units holding one of `keys` in their claims (subject and head or attribute),
    whose main claim is one of `attributes` (subject, attribute), or whose content states one of
    `old_values` — newest first, with their similarity to `unit` (0 when one has no vector)."""
    match: ColumnElement[bool] = false()
    for key in keys:
        match = match | MemoryUnit.claims.contains([key])
    for subject, attribute in attributes:
        match = match | ((MemoryUnit.claim_subject == subject) & (MemoryUnit.claim_attribute == attribute))
    for value in old_values:
        match = match | (func.strpos(func.lower(MemoryUnit.content), value.lower()) > 0)
    if not (keys or attributes or old_values):
        return []
    a, b = aliased(MemoryEmbedding), aliased(MemoryEmbedding)
    similarity = func.coalesce(1 - a.embedding.cosine_distance(b.embedding), 0.0)
    stmt = (
        select(MemoryUnit, similarity)
        .outerjoin(a, (a.memory_id == MemoryUnit.id) & (a.model == unit.embedding_model))
        .outerjoin(b, (b.memory_id == unit.id) & (b.model == unit.embedding_model))
        .where(
            MemoryUnit.bank_id == unit.bank_id,
            MemoryUnit.status == "active",
            MemoryUnit.id != unit.id,
            MemoryUnit.id.not_in(exclude),
            or_(match),
        )
        .order_by(MemoryUnit.created_at.desc())
        .limit(HOLDERS)
    )
    return [(u, float(sim)) for u, sim in (await db.execute(stmt)).all()]


async def copy_graph(
    db: AsyncSession, bank_id: str, old_id: uuid.UUID, new_id: uuid.UUID, names: str
) -> None:
    """Give `new_id` the entity links of `old_id` whose entity `names` mentions (case-folded), and the
    relations of `old_id` between two such entities."""
    kept = (
        select(MemoryEntity.entity_id)
        .join(Entity, Entity.id == MemoryEntity.entity_id)
        .where(MemoryEntity.memory_id == old_id, func.strpos(names.lower(), func.lower(Entity.name)) > 0)
    )
    ids = list((await db.scalars(kept)).all())
    if not ids:
        return
    await db.execute(
        insert(MemoryEntity).values([{"memory_id": new_id, "entity_id": e, "bank_id": bank_id} for e in ids])
    )
    relations = select(Relation).where(
        Relation.memory_id == old_id, Relation.subject_id.in_(ids), Relation.object_id.in_(ids)
    )
    rows = [
        {
            "bank_id": bank_id,
            "subject_id": r.subject_id,
            "relation": r.relation,
            "object_id": r.object_id,
            "memory_id": new_id,
            "confidence": r.confidence,
        }
        for r in (await db.scalars(relations)).all()
    ]
    if rows:
        await db.execute(insert(Relation).values(rows))
