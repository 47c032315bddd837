"""Reading the entity graph: entities, the relations between them and the units that mention them."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import TypedDict, Unpack

from sqlalchemy import Select, func, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import Entity, MemoryEntity, MemoryUnit, Relation
from app.db.repositories.graph import canonical


@dataclass(frozen=True)
class EntityRow:
    entity: Entity
    mentions: int  # units linked to the entity, whatever their status


@dataclass(frozen=True)
class RelationRow:
    relation: Relation
    subject: Entity
    object: Entity


@dataclass(frozen=True)
class EntityDetail:
    entity: EntityRow
    relations: list[RelationRow]
    memories: list[MemoryUnit]


def _with_mentions() -> Select[Entity, int]:
    mentions = (
        select(func.count())
        .select_from(MemoryEntity)
        .where(MemoryEntity.entity_id == Entity.id)
        .correlate(Entity)
        .scalar_subquery()
    )
    return select(Entity, mentions.label("mentions"))


class EntitySearch(TypedDict):
    """Which of the bank's entities a listing returns, from where (None: no condition)."""

    q: str | None  # a case-insensitive part of the name
    type_: str | None
    after: tuple[str, uuid.UUID] | None  # the (canonical name, id) of the previous page's last entity


async def list_entities(
    db: AsyncSession, bank_id: str, *, limit: int, **search: Unpack[EntitySearch]
) -> list[EntityRow]:
    """Entities ordered by canonical (case-folded) name, then id; `q` is a case-insensitive
    substring of the name, matched the way names are canonicalised (whitespace collapsed)."""
    q, type_, after = search["q"], search["type_"], search["after"]
    stmt = _with_mentions().where(Entity.bank_id == bank_id)
    if q:
        stmt = stmt.where(Entity.canonical_name.contains(canonical(q), autoescape=True))
    if type_ is not None:
        stmt = stmt.where(Entity.type == type_)
    if after is not None:
        stmt = stmt.where(tuple_(Entity.canonical_name, Entity.id) > tuple_(*after))
    stmt = stmt.order_by(Entity.canonical_name, Entity.id).limit(limit)
    return [EntityRow(entity, mentions) for entity, mentions in (await db.execute(stmt)).all()]


async def entity_detail(
    db: AsyncSession,
    bank_id: str,
    entity_id: uuid.UUID,
    *,
    statuses: Collection[str],
    limit: int,
) -> EntityDetail | None:
    """The entity, its newest `limit` relations (as subject or object) and the newest `limit`
    units in `statuses` that mention it; None when the bank has no such entity."""
    found = (
        await db.execute(_with_mentions().where(Entity.id == entity_id, Entity.bank_id == bank_id))
    ).first()
    if found is None:
        return None
    subject, obj = aliased(Entity), aliased(Entity)
    relations = await db.execute(
        select(Relation, subject, obj)
        .join(subject, subject.id == Relation.subject_id)
        .join(obj, obj.id == Relation.object_id)
        .where(
            Relation.bank_id == bank_id,
            or_(Relation.subject_id == entity_id, Relation.object_id == entity_id),
        )
        .order_by(Relation.created_at.desc(), Relation.id)
        .limit(limit)
    )
    memories = await db.scalars(
        select(MemoryUnit)
        .join(MemoryEntity, MemoryEntity.memory_id == MemoryUnit.id)
        .where(
            MemoryEntity.entity_id == entity_id,
            MemoryUnit.bank_id == bank_id,
            MemoryUnit.status.in_(statuses),
        )
        .order_by(MemoryUnit.created_at.desc(), MemoryUnit.id)
        .limit(limit)
    )
    return EntityDetail(
        entity=EntityRow(found[0], found[1]),
        relations=[RelationRow(r, s, o) for r, s, o in relations.all()],
        memories=list(memories.all()),
    )
