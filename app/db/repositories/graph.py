"""The entity graph as units write and read it: entities, the units' links to them, relations."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import Entity, MemoryEmbedding, MemoryEntity, MemoryUnit, Relation
from app.db.models.base import table_of


def canonical(name: str) -> str:
    return " ".join(name.split()).casefold()


async def upsert_entities(
    db: AsyncSession, bank_id: str, entities: list[tuple[str, str]]
) -> dict[tuple[str, str], uuid.UUID]:
    """(name, type) pairs → ids, creating the entities that are new. Keyed by (canonical, type)."""
    unique = {(canonical(name), kind): name for name, kind in entities}
    if not unique:
        return {}
    rows = [
        {"id": uuid.uuid4(), "bank_id": bank_id, "name": name, "canonical_name": key, "type": kind}
        for (key, kind), name in sorted(unique.items())  # a stable order avoids deadlocks
    ]
    table = table_of(Entity)
    stmt = (
        insert(table)
        .on_conflict_do_update(constraint="uq_entities_bank_name_type", set_={"updated_at": func.now()})
        .returning(table.c.canonical_name, table.c.type, table.c.id)
    )
    return {(key, kind): id_ for key, kind, id_ in (await db.execute(stmt, rows)).all()}


async def link_entities(db: AsyncSession, bank_id: str, links: list[tuple[uuid.UUID, uuid.UUID]]) -> None:
    if links:
        rows = [{"memory_id": m, "entity_id": e, "bank_id": bank_id} for m, e in sorted(set(links))]
        await db.execute(insert(table_of(MemoryEntity)).on_conflict_do_nothing(), rows)


async def insert_relations(db: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await db.execute(
            insert(table_of(Relation)).on_conflict_do_nothing(constraint="uq_relations_triple"), rows
        )


# Built once: resolution reads the facts of a unit and its candidates for every unit it resolves.
_UNIT_ENTITIES = (
    select(MemoryEntity.memory_id, Entity.id, Entity.type)
    .join(Entity, Entity.id == MemoryEntity.entity_id)
    .where(MemoryEntity.memory_id.in_(bindparam("ids", expanding=True)))
)
_UNIT_RELATIONS = select(
    Relation.memory_id, Relation.subject_id, Relation.relation, Relation.object_id
).where(Relation.memory_id.in_(bindparam("ids", expanding=True)))


async def unit_entities(db: AsyncSession, ids: list[uuid.UUID]) -> list[tuple[uuid.UUID, uuid.UUID, str]]:
    return [(m, e, t) for m, e, t in (await db.execute(_UNIT_ENTITIES, {"ids": ids})).all()]


async def unit_relations(
    db: AsyncSession, ids: list[uuid.UUID]
) -> list[tuple[uuid.UUID, uuid.UUID, str, uuid.UUID]]:
    rows = (await db.execute(_UNIT_RELATIONS, {"ids": ids})).all()
    return [(m, s, r, o) for m, s, r, o in rows if m is not None]


async def entities_of(db: AsyncSession, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[dict[str, Any]]]:
    if not ids:
        return {}
    stmt = (
        select(MemoryEntity.memory_id, Entity.id, Entity.name, Entity.type)
        .join(Entity, Entity.id == MemoryEntity.entity_id)
        .where(MemoryEntity.memory_id.in_(ids))
        .order_by(Entity.name)
    )
    found: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for memory_id, entity_id, name, kind in (await db.execute(stmt)).all():
        found.setdefault(memory_id, []).append({"id": entity_id, "name": name, "type": kind})
    return found


def _related_statement(with_tag: bool) -> Select[MemoryUnit, float]:
    """`active_related`'s statement, built once per shape: building it (two pairs of aliases) cost
    more CPU per resolved unit than running it."""
    mine, theirs = aliased(Relation), aliased(Relation)
    unit_id = bindparam("unit_id", type_=MemoryUnit.id.type)
    model = bindparam("model", type_=MemoryEmbedding.model.type)
    by_relation = (
        select(theirs.memory_id)
        .join(mine, (mine.subject_id == theirs.subject_id) & (mine.relation == theirs.relation))
        .where(
            mine.memory_id == unit_id,
            mine.relation.in_(bindparam("relations", expanding=True)),
            theirs.memory_id.is_not(None),
        )
    )
    match: ColumnElement[bool] = MemoryUnit.id.in_(by_relation)
    if with_tag:
        match = match | MemoryUnit.tags.contains(bindparam("tags", type_=MemoryUnit.tags.type))
    a, b = aliased(MemoryEmbedding), aliased(MemoryEmbedding)
    similarity = func.coalesce(1 - a.embedding.cosine_distance(b.embedding), 0.0)
    return (
        select(MemoryUnit, similarity)
        .outerjoin(a, (a.memory_id == MemoryUnit.id) & (a.model == model))
        .outerjoin(b, (b.memory_id == unit_id) & (b.model == model))
        .where(
            MemoryUnit.bank_id == bindparam("bank_id", type_=MemoryUnit.bank_id.type),
            MemoryUnit.status == "active",
            MemoryUnit.id != unit_id,
            MemoryUnit.id.not_in(bindparam("exclude", expanding=True)),
            match,
        )
        .order_by(MemoryUnit.created_at.desc())
        .limit(20)
    )


_RELATED = {with_tag: _related_statement(with_tag) for with_tag in (False, True)}


async def active_related(
    db: AsyncSession, unit: MemoryUnit, tag: str | None, relations: list[str], *, exclude: list[uuid.UUID]
) -> list[tuple[MemoryUnit, float]]:
    """Active units with the same key tag, or sharing a (subject, relation) with `unit` — newest
    first, with their similarity to `unit` (0 when one has no vector)."""
    params: dict[str, Any] = {
        "unit_id": unit.id,
        "model": unit.embedding_model,
        "relations": relations,
        "exclude": exclude,
        "bank_id": unit.bank_id,
    }
    if tag is not None:
        params["tags"] = [tag]
    rows = await db.execute(_RELATED[tag is not None], params)
    return [(u, float(sim)) for u, sim in rows.all()]
