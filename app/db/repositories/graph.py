"""The entity graph as units write and read it: entities, the units' links to them, relations."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import Entity, MemoryEmbedding, MemoryEntity, MemoryUnit, Relation
from app.db.models.base import table_of
from app.db.models.memory import is_active


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
    """Relations of new units; a triple a unit no longer live stated (superseded, retired by a replay,
    forgotten) moves to the new unit stating it, else the entity channel would drop it."""
    # (one row a triple: a statement may update a row once)
    unique = list({(r["subject_id"], r["relation"], r["object_id"]): r for r in reversed(rows)}.values())
    if unique:
        stmt = insert(table_of(Relation))
        moved = {"memory_id": stmt.excluded.memory_id}
        await db.execute(
            stmt.on_conflict_do_update(constraint="uq_relations_triple", set_=moved, where=_OWNER_GONE),
            unique,
        )


# The unit holding a triple is no longer live (written out: SQLAlchemy does not correlate a subquery with
# the row ON CONFLICT updates, and a statement run for many rows takes no expanding parameter)
_OWNER_GONE = text(
    "NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = relations.memory_id"
    " AND u.status IN ('pending', 'active'))"
)


# A unit's and its candidates' facts, read for every unit resolution takes: their entities (id, type) and
# their relations (subject, relation, object), in one round trip.
_UNIT_FACTS = text("""
    SELECT me.memory_id, e.id AS entity_id, e.type AS kind,
           NULL::uuid AS subject_id, NULL::text AS relation, NULL::uuid AS object_id
    FROM memory_entities me JOIN entities e ON e.id = me.entity_id
    WHERE me.memory_id = ANY(CAST(:ids AS uuid[]))
    UNION ALL
    SELECT r.memory_id, NULL, NULL, r.subject_id, r.relation, r.object_id
    FROM relations r
    WHERE r.memory_id = ANY(CAST(:ids AS uuid[]))
""")


async def unit_facts(
    db: AsyncSession, ids: list[uuid.UUID]
) -> tuple[list[tuple[uuid.UUID, uuid.UUID, str]], list[tuple[uuid.UUID, uuid.UUID, str, uuid.UUID]]]:
    """The units' entity links (memory, entity, type) and relations (memory, subject, relation, object)."""
    entities, relations = [], []
    for row in (await db.execute(_UNIT_FACTS, {"ids": ids})).all():
        if row.entity_id is not None:
            entities.append((row.memory_id, row.entity_id, row.kind))
        else:
            relations.append((row.memory_id, row.subject_id, row.relation, row.object_id))
    return entities, relations


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


def _related_statement(with_tag: bool) -> Select[uuid.UUID, float]:
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
        select(MemoryUnit.id, similarity)
        .outerjoin(a, (a.memory_id == MemoryUnit.id) & (a.model == model))
        .outerjoin(b, (b.memory_id == unit_id) & (b.model == model))
        .where(
            MemoryUnit.bank_id == bindparam("bank_id", type_=MemoryUnit.bank_id.type),
            is_active(),
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
) -> list[tuple[uuid.UUID, float]]:
    """The ids of the active units with the same key tag, or sharing a (subject, relation) with `unit` —
    newest first, with their similarity to `unit` (0 when one has no vector)."""
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
    return [(uid, float(sim)) for uid, sim in rows.all()]
