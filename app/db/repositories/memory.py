"""Memory units and what hangs off them: embeddings, entities, relations, history."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, any_, bindparam, delete, func, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import ARRAY, UUID, aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, defer

from app.db.models import (
    Bank,
    Entity,
    Event,
    MemoryEmbedding,
    MemoryEntity,
    MemoryHistory,
    MemoryUnit,
    Relation,
)


def canonical(name: str) -> str:
    return " ".join(name.split()).casefold()


def _table(model: type[Any]) -> Table:
    """The model's table. The many-row writes are Core inserts executed with a list of rows (compiled
    once, sent as multi-row VALUES), the rows keyed by column name (`metadata`, not `metadata_`)."""
    return cast(Table, model.__table__)


async def insert_units(db: AsyncSession, rows: list[dict[str, Any]]) -> dict[str, uuid.UUID]:
    """Insert units; a row whose (bank, identity_key) exists already is skipped, so re-running a
    distillation adds nothing. Returns {identity_key: id} of the rows inserted now."""
    if not rows:
        return {}
    units = _table(MemoryUnit)
    stmt = (
        insert(units)
        .on_conflict_do_nothing(constraint="uq_memory_units_bank_identity_key")
        .returning(units.c.identity_key, units.c.id)
    )
    return {key: id_ for key, id_ in (await db.execute(stmt, rows)).all() if key is not None}


async def insert_embeddings(
    db: AsyncSession, bank_id: str, model: str, vectors: dict[uuid.UUID, list[float]]
) -> None:
    if not vectors:
        return
    rows = [
        {"memory_id": mid, "model": model, "bank_id": bank_id, "dim": len(vec), "embedding": vec}
        for mid, vec in vectors.items()
    ]
    await db.execute(insert(_table(MemoryEmbedding)).on_conflict_do_nothing(), rows)


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
    table = _table(Entity)
    stmt = (
        insert(table)
        .on_conflict_do_update(constraint="uq_entities_bank_name_type", set_={"updated_at": func.now()})
        .returning(table.c.canonical_name, table.c.type, table.c.id)
    )
    return {(key, kind): id_ for key, kind, id_ in (await db.execute(stmt, rows)).all()}


async def link_entities(db: AsyncSession, bank_id: str, links: list[tuple[uuid.UUID, uuid.UUID]]) -> None:
    if links:
        rows = [{"memory_id": m, "entity_id": e, "bank_id": bank_id} for m, e in sorted(set(links))]
        await db.execute(insert(_table(MemoryEntity)).on_conflict_do_nothing(), rows)


async def insert_relations(db: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await db.execute(
            insert(_table(Relation)).on_conflict_do_nothing(constraint="uq_relations_triple"), rows
        )


async def add_history(db: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await db.execute(insert(_table(MemoryHistory)), rows)


async def related_active_units(
    db: AsyncSession, bank_id: str, model: str, vector: list[float], limit: int
) -> list[MemoryUnit]:
    """The bank's active units nearest to `vector` (what a new batch of turns may update)."""
    distance = MemoryEmbedding.embedding.cosine_distance(vector)
    stmt = (
        select(MemoryUnit)
        .join(MemoryEmbedding, MemoryEmbedding.memory_id == MemoryUnit.id)
        .where(
            MemoryUnit.bank_id == bank_id,
            MemoryUnit.status == "active",
            MemoryEmbedding.model == model,
            MemoryEmbedding.bank_id == bank_id,
        )
        .order_by(distance)
        .limit(limit)
    )
    return list((await db.scalars(stmt)).all())


async def session_units(
    db: AsyncSession, bank_id: str, session_id: str, statuses: tuple[str, ...] | None = None
) -> list[MemoryUnit]:
    """Units distilled from a session (not direct writes), in creation order; without `statuses`,
    every unit the session's distillations stand by: all but those a replay retired (deleted with
    `redistilled` as their latest history action)."""
    stmt = (
        select(MemoryUnit)
        .where(
            MemoryUnit.bank_id == bank_id,
            MemoryUnit.session_id == session_id,
            MemoryUnit.identity_key.is_not(None),
        )
        .order_by(MemoryUnit.created_at, MemoryUnit.id)
    )
    if statuses is not None:
        stmt = stmt.where(MemoryUnit.status.in_(statuses))
    else:
        latest = (
            select(MemoryHistory.action)
            .where(MemoryHistory.memory_id == MemoryUnit.id)
            .order_by(MemoryHistory.at.desc(), MemoryHistory.id.desc())
            .limit(1)
            .scalar_subquery()
        )
        stmt = stmt.where((MemoryUnit.status != "deleted") | (func.coalesce(latest, "") != "redistilled"))
    return list((await db.scalars(stmt)).all())


async def lock_pending(
    db: AsyncSession, bank_id: str, limit: int, *, only: list[uuid.UUID] | None = None
) -> list[MemoryUnit]:
    stmt = (
        select(MemoryUnit)
        .where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "pending")
        # in the order things were said: valid time, then the order of the turns
        .order_by(MemoryUnit.valid_from, MemoryUnit.created_at, MemoryUnit.source_seqs, MemoryUnit.id)
        .limit(limit)
        .with_for_update()
    )
    if only is not None:
        stmt = stmt.where(MemoryUnit.id.in_(only))
    return list((await db.scalars(stmt)).all())


async def bank_config(db: AsyncSession, bank_id: str) -> dict[str, Any] | None:
    config: dict[str, Any] | None = await db.scalar(select(Bank.config).where(Bank.id == bank_id))
    return config


async def without_embedding(db: AsyncSession, ids: list[uuid.UUID], model: str) -> set[uuid.UUID]:
    have = select(MemoryEmbedding.memory_id).where(
        MemoryEmbedding.memory_id.in_(ids), MemoryEmbedding.model == model
    )
    return set(ids) - set((await db.scalars(have)).all())


async def chain_head(db: AsyncSession, memory_id: uuid.UUID) -> MemoryUnit | None:
    """The newest unit of the supersede chain `memory_id` belongs to."""
    unit = await db.get(MemoryUnit, memory_id)
    seen: set[uuid.UUID] = set()
    while unit is not None and unit.superseded_by is not None and unit.id not in seen:
        seen.add(unit.id)
        unit = await db.get(MemoryUnit, unit.superseded_by)
    return unit


async def neighbours(
    db: AsyncSession, unit: MemoryUnit, model: str, limit: int
) -> list[tuple[MemoryUnit, float]]:
    """The bank's active units nearest to `unit` (cosine similarity), excluding itself."""
    mine = (
        select(MemoryEmbedding.embedding)
        .where(MemoryEmbedding.memory_id == unit.id, MemoryEmbedding.model == model)
        .scalar_subquery()
    )
    distance = MemoryEmbedding.embedding.cosine_distance(mine)
    stmt = (
        select(MemoryUnit, (1 - distance).label("similarity"))
        .join(MemoryEmbedding, MemoryEmbedding.memory_id == MemoryUnit.id)
        .where(
            MemoryEmbedding.bank_id == unit.bank_id,
            MemoryEmbedding.model == model,
            MemoryUnit.status == "active",
            MemoryUnit.id != unit.id,
        )
        .order_by(distance)
        .limit(limit)
    )
    return [(u, float(sim)) for u, sim in (await db.execute(stmt)).all()]


async def active_related(
    db: AsyncSession, unit: MemoryUnit, tag: str | None, relations: list[str], *, exclude: list[uuid.UUID]
) -> list[tuple[MemoryUnit, float]]:
    """Active units with the same key tag, or sharing a (subject, relation) with `unit` — newest
    first, with their similarity to `unit` (0 when one has no vector)."""
    mine = aliased(Relation)
    theirs = aliased(Relation)
    by_relation = (
        select(theirs.memory_id)
        .join(mine, (mine.subject_id == theirs.subject_id) & (mine.relation == theirs.relation))
        .where(mine.memory_id == unit.id, mine.relation.in_(relations), theirs.memory_id.is_not(None))
    )
    match: ColumnElement[bool] = MemoryUnit.id.in_(by_relation)
    if tag is not None:
        match = match | MemoryUnit.tags.contains([tag])
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
            match,
        )
        .order_by(MemoryUnit.created_at.desc())
        .limit(20)
    )
    return [(u, float(sim)) for u, sim in (await db.execute(stmt)).all()]


async def unit_entities(db: AsyncSession, ids: list[uuid.UUID]) -> list[tuple[uuid.UUID, uuid.UUID, str]]:
    stmt = (
        select(MemoryEntity.memory_id, Entity.id, Entity.type)
        .join(Entity, Entity.id == MemoryEntity.entity_id)
        .where(MemoryEntity.memory_id.in_(ids))
    )
    return [(m, e, t) for m, e, t in (await db.execute(stmt)).all()]


async def unit_relations(
    db: AsyncSession, ids: list[uuid.UUID]
) -> list[tuple[uuid.UUID, uuid.UUID, str, uuid.UUID]]:
    stmt = select(Relation.memory_id, Relation.subject_id, Relation.relation, Relation.object_id).where(
        Relation.memory_id.in_(ids)
    )
    return [(m, s, r, o) for m, s, r, o in (await db.execute(stmt)).all() if m is not None]


async def link_supersede(db: AsyncSession, old_id: uuid.UUID, new_id: uuid.UUID) -> None:
    """Store both directions; the old unit's valid time ends where the new one's begins."""
    new_valid_from = select(MemoryUnit.valid_from).where(MemoryUnit.id == new_id).scalar_subquery()
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == old_id)
        .values(
            superseded_by=new_id,
            valid_to=func.greatest(func.coalesce(new_valid_from, func.now()), MemoryUnit.valid_from),
        )
    )
    await db.execute(update(MemoryUnit).where(MemoryUnit.id == new_id).values(supersedes=old_id))


async def absorb(db: AsyncSession, survivor: MemoryUnit, unit: MemoryUnit, *, confidence: float) -> None:
    """`survivor` takes `unit`'s sources (seqs only within one session), importance and confidence."""
    same_session = survivor.session_id == unit.session_id
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == survivor.id)
        .values(
            confidence=confidence,
            importance=func.greatest(MemoryUnit.importance, unit.importance),
            source_event_ids=sorted({*survivor.source_event_ids, *unit.source_event_ids}),
            source_seqs=sorted({*survivor.source_seqs, *unit.source_seqs})
            if same_session
            else survivor.source_seqs,
            merged_from=[*survivor.merged_from, unit.id],
        )
    )
    await db.execute(update(MemoryUnit).where(MemoryUnit.id == unit.id).values(merged_into=survivor.id))


async def transition(
    db: AsyncSession,
    bank_id: str,
    changes: list[tuple[uuid.UUID, str, str]],
    *,
    action: str,
    actor: str,
    details: dict[uuid.UUID, dict[str, Any]] | None = None,
) -> None:
    """Move units to new statuses and write one history row each, in the caller's transaction.

    `changes` are (memory id, from status, to status); every history row's details carry `from`
    and `to`, which is what "what was active at T" is read from.
    """
    if not changes:
        return
    by_status: dict[str, list[uuid.UUID]] = {}
    for memory_id, _, to in changes:
        by_status.setdefault(to, []).append(memory_id)
    for to, ids in by_status.items():
        await db.execute(
            update(MemoryUnit)
            .where(MemoryUnit.id.in_(ids))
            .values(previous_status=MemoryUnit.status, status=to, status_changed_at=func.now())
        )
    extra = details or {}
    await add_history(
        db,
        [
            {
                "bank_id": bank_id,
                "memory_id": memory_id,
                "action": action,
                "actor": actor,
                "details": {**extra.get(memory_id, {}), "from": frm, "to": to},
            }
            for memory_id, frm, to in changes
        ],
    )


async def active_after(
    db: AsyncSession, bank_id: str, after: uuid.UUID | None, limit: int
) -> list[MemoryUnit]:
    stmt = select(MemoryUnit).where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "active")
    if after is not None:
        stmt = stmt.where(MemoryUnit.id > after)
    return list((await db.scalars(stmt.order_by(MemoryUnit.id).limit(limit))).all())


async def without_vector(
    db: AsyncSession, model: str, limit: int, *, bank_id: str | None = None
) -> list[tuple[uuid.UUID, str, str]]:
    """Units (not purged) with no vector of `model` yet: (id, bank, content), locked for this batch."""
    rows = await db.execute(
        text("""
            SELECT m.id, m.bank_id, m.content FROM memory_units m
            WHERE m.content <> '' AND (CAST(:bank AS text) IS NULL OR m.bank_id = :bank)
              AND NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id AND e.model = :model)
            ORDER BY m.id LIMIT :limit FOR UPDATE OF m SKIP LOCKED
        """),
        {"model": model, "limit": limit, "bank": bank_id},
    )
    return [(r[0], r[1], r[2]) for r in rows]


async def any_without_vector(db: AsyncSession, model: str) -> bool:
    found = await db.scalar(
        text("""
            SELECT 1 FROM memory_units m WHERE m.content <> '' AND NOT EXISTS
              (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id AND e.model = :model) LIMIT 1
        """),
        {"model": model},
    )
    return found is not None


async def set_embedding_model(db: AsyncSession, ids: list[uuid.UUID], model: str) -> None:
    if ids:
        await db.execute(update(MemoryUnit).where(MemoryUnit.id.in_(ids)).values(embedding_model=model))


async def rewrite(
    db: AsyncSession, unit: MemoryUnit, content: str, search: str, model: str, vector: list[float]
) -> None:
    """New text for a unit (a merge summary), with its vector of `model` replaced."""
    await db.execute(
        update(MemoryUnit).where(MemoryUnit.id == unit.id).values(content=content, search_text=search)
    )
    await db.execute(
        delete(MemoryEmbedding).where(MemoryEmbedding.memory_id == unit.id, MemoryEmbedding.model == model)
    )
    await insert_embeddings(db, unit.bank_id, model, {unit.id: vector})


async def set_layer(db: AsyncSession, ids: list[uuid.UUID], layer: str) -> None:
    if ids:
        await db.execute(update(MemoryUnit).where(MemoryUnit.id.in_(ids)).values(layer=layer))


async def banks_with_stale_pending(db: AsyncSession, older_than_seconds: int, limit: int) -> list[str]:
    rows = await db.execute(
        text("""
            SELECT DISTINCT bank_id FROM memory_units
            WHERE status = 'pending' AND created_at < now() - make_interval(secs => :secs)
            LIMIT :limit
        """),
        {"secs": older_than_seconds, "limit": limit},
    )
    return [row[0] for row in rows]


async def get_unit(db: AsyncSession, memory_id: uuid.UUID, *, for_update: bool = False) -> MemoryUnit | None:
    return await db.get(MemoryUnit, memory_id, with_for_update=for_update, populate_existing=for_update)


async def get_units(db: AsyncSession, ids: list[uuid.UUID]) -> list[MemoryUnit]:
    if not ids:
        return []
    stmt = select(MemoryUnit).where(MemoryUnit.id.in_(ids)).order_by(MemoryUnit.created_at, MemoryUnit.id)
    return list((await db.scalars(stmt)).all())


async def get_units_with_entities(
    db: AsyncSession, ids: list[uuid.UUID]
) -> tuple[list[MemoryUnit], dict[uuid.UUID, list[dict[str, Any]]]]:
    """`get_units` and `entities_of` in one round trip (the query path reads both)."""
    if not ids:
        return [], {}
    linked = (
        select(
            func.json_agg(
                aggregate_order_by(
                    func.json_build_object("id", Entity.id, "name", Entity.name, "type", Entity.type),
                    Entity.name,
                )
            )
        )
        .select_from(MemoryEntity)
        .join(Entity, Entity.id == MemoryEntity.entity_id)
        .where(MemoryEntity.memory_id == MemoryUnit.id)
        .scalar_subquery()
    )
    stmt = (
        select(MemoryUnit, linked)
        .options(defer(MemoryUnit.search), defer(MemoryUnit.search_text), defer(MemoryUnit.tag_paths))
        .where(MemoryUnit.id == any_(bindparam("ids", ids, type_=ARRAY(UUID(as_uuid=True)))))
        .order_by(MemoryUnit.created_at, MemoryUnit.id)
    )
    rows = (await db.execute(stmt)).all()
    return [unit for unit, _ in rows], {unit.id: entities for unit, entities in rows if entities}


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


async def events_by_id(db: AsyncSession, ids: list[int]) -> dict[int, Event]:
    if not ids:
        return {}
    return {e.id: e for e in (await db.scalars(select(Event).where(Event.id.in_(ids)))).all()}


async def copy_sources(db: AsyncSession, old: MemoryUnit, new: MemoryUnit) -> None:
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == new.id)
        .values(source_seqs=old.source_seqs, source_event_ids=old.source_event_ids, valid_from=old.valid_from)
    )


async def downweight(db: AsyncSession, unit: MemoryUnit, factor: float) -> None:
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == unit.id)
        .values(
            importance=unit.importance * factor,
            metadata_={**unit.metadata_, "downweighted_from": unit.importance},
        )
    )


async def undo_downweight(db: AsyncSession, unit: MemoryUnit) -> None:
    metadata = dict(unit.metadata_)
    importance = float(metadata.pop("downweighted_from"))
    await db.execute(
        update(MemoryUnit).where(MemoryUnit.id == unit.id).values(importance=importance, metadata_=metadata)
    )


async def erase(db: AsyncSession, unit: MemoryUnit) -> None:
    """Purge: the unit's text, vectors, entity links and relations are gone for good, and so are the
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
            metadata_={"purged_at": datetime.now(UTC).isoformat()},
        )
    )


async def supersede_chain(db: AsyncSession, unit: MemoryUnit) -> list[MemoryUnit]:
    """The whole chain `unit` is part of, oldest first (one recursive query each way)."""
    chain = text("""
        WITH RECURSIVE back(id, depth) AS (
            SELECT supersedes, 1 FROM memory_units WHERE id = :id AND supersedes IS NOT NULL
            UNION ALL
            SELECT m.supersedes, b.depth + 1 FROM memory_units m JOIN back b ON m.id = b.id
            WHERE m.supersedes IS NOT NULL AND b.depth < 1000
        ), fwd(id, depth) AS (
            SELECT superseded_by, 1 FROM memory_units WHERE id = :id AND superseded_by IS NOT NULL
            UNION ALL
            SELECT m.superseded_by, f.depth + 1 FROM memory_units m JOIN fwd f ON m.id = f.id
            WHERE m.superseded_by IS NOT NULL AND f.depth < 1000
        )
        SELECT id, -depth AS pos FROM back UNION ALL SELECT :id, 0 UNION ALL SELECT id, depth FROM fwd
    """)
    rows = (await db.execute(chain, {"id": unit.id})).all()
    order = {row[0]: row[1] for row in rows}
    units = await get_units(db, list(order))
    return sorted(units, key=lambda u: order[u.id])


async def history_of(db: AsyncSession, ids: list[uuid.UUID]) -> list[MemoryHistory]:
    stmt = (
        select(MemoryHistory)
        .where(MemoryHistory.memory_id.in_(ids))
        .order_by(MemoryHistory.at, MemoryHistory.id)
    )
    return list((await db.scalars(stmt)).all())


def tag_prefix_sql(alias: str, name: str, tags: list[str]) -> tuple[str, dict[str, Any]]:
    """SQL for "unit `alias` carries one of `tags` or a tag under one" ("constraint" covers
    "constraint.budget"), with its bind parameter named `name`. The stored column `tag_paths` lists
    every tag with its dotted prefixes; a GIN index over it answers the overlap."""
    return f"{alias}.tag_paths && CAST(:{name} AS text[])", {name: tags}


def tag_filter(tags: list[str]) -> ColumnElement[bool]:
    sql, params = tag_prefix_sql("memory_units", "tag", tags)
    return text(sql).bindparams(**params)  # type: ignore[return-value]


def active_as_of(bank_id: str, at: datetime) -> Any:
    """Ids of the bank's units that were active at `at` (system time), read from their history:
    each unit's last transition at or before `at` says what it was then."""
    last = (
        select(
            MemoryHistory.memory_id,
            MemoryHistory.details["to"].astext.label("status"),
            func.row_number()
            .over(
                partition_by=MemoryHistory.memory_id,
                order_by=(MemoryHistory.at.desc(), MemoryHistory.id.desc()),
            )
            .label("n"),
        )
        .where(
            MemoryHistory.bank_id == bank_id,
            MemoryHistory.at <= at,
            MemoryHistory.details.has_key("to"),
        )
        .subquery()
    )
    return select(last.c.memory_id).where(last.c.n == 1, last.c.status == "active")


async def list_units(
    db: AsyncSession,
    bank_id: str,
    *,
    statuses: list[str] | None,
    tag: str | None,
    entity: str | None,
    session_id: str | None,
    since: datetime | None,
    until: datetime | None,
    as_of: datetime | None,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[MemoryUnit]:
    """Newest first, keyset-paginated on (created_at, id)."""
    stmt = select(MemoryUnit).where(MemoryUnit.bank_id == bank_id)
    if statuses:
        stmt = stmt.where(MemoryUnit.status.in_(statuses))
    if tag:  # a tag and everything under it
        stmt = stmt.where(tag_filter([tag]))
    if entity:
        stmt = stmt.where(
            MemoryUnit.id.in_(
                select(MemoryEntity.memory_id)
                .join(Entity, Entity.id == MemoryEntity.entity_id)
                .where(Entity.bank_id == bank_id, Entity.canonical_name == canonical(entity))
            )
        )
    if session_id:
        stmt = stmt.where(MemoryUnit.session_id == session_id)
    if since:
        stmt = stmt.where(MemoryUnit.created_at >= since)
    if until:
        stmt = stmt.where(MemoryUnit.created_at < until)
    if as_of:
        stmt = stmt.where(MemoryUnit.created_at <= as_of, MemoryUnit.id.in_(active_as_of(bank_id, as_of)))
    if after:
        stmt = stmt.where(tuple_(MemoryUnit.created_at, MemoryUnit.id) < tuple_(*after))
    stmt = stmt.order_by(MemoryUnit.created_at.desc(), MemoryUnit.id.desc()).limit(limit)
    return list((await db.scalars(stmt)).all())
