"""Memory units and what hangs off them: embeddings, entities, relations, history."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Entity, MemoryEmbedding, MemoryEntity, MemoryHistory, MemoryUnit, Relation


def canonical(name: str) -> str:
    return " ".join(name.split()).casefold()


async def insert_units(db: AsyncSession, rows: list[dict[str, Any]]) -> dict[str, uuid.UUID]:
    """Insert units; a row whose (bank, identity_key) exists already is skipped, so re-running a
    distillation adds nothing. Returns {identity_key: id} of the rows inserted now."""
    if not rows:
        return {}
    stmt = (
        insert(MemoryUnit)
        .values(rows)
        .on_conflict_do_nothing(constraint="uq_memory_units_bank_identity_key")
        .returning(MemoryUnit.identity_key, MemoryUnit.id)
    )
    return {key: id_ for key, id_ in (await db.execute(stmt)).all() if key is not None}


async def insert_embeddings(
    db: AsyncSession, bank_id: str, model: str, vectors: dict[uuid.UUID, list[float]]
) -> None:
    if not vectors:
        return
    rows = [
        {"memory_id": mid, "model": model, "bank_id": bank_id, "dim": len(vec), "embedding": vec}
        for mid, vec in vectors.items()
    ]
    await db.execute(insert(MemoryEmbedding).values(rows).on_conflict_do_nothing())


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
    stmt = (
        insert(Entity)
        .values(rows)
        .on_conflict_do_update(constraint="uq_entities_bank_name_type", set_={"updated_at": func.now()})
        .returning(Entity.canonical_name, Entity.type, Entity.id)
    )
    return {(key, kind): id_ for key, kind, id_ in (await db.execute(stmt)).all()}


async def link_entities(db: AsyncSession, bank_id: str, links: list[tuple[uuid.UUID, uuid.UUID]]) -> None:
    if links:
        rows = [{"memory_id": m, "entity_id": e, "bank_id": bank_id} for m, e in sorted(set(links))]
        await db.execute(insert(MemoryEntity).values(rows).on_conflict_do_nothing())


async def insert_relations(db: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await db.execute(
            insert(Relation).values(rows).on_conflict_do_nothing(constraint="uq_relations_triple")
        )


async def add_history(db: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await db.execute(insert(MemoryHistory).values(rows))


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
    db: AsyncSession, bank_id: str, session_id: str, statuses: tuple[str, ...]
) -> list[MemoryUnit]:
    """Units distilled from a session (not direct writes), in creation order."""
    stmt = (
        select(MemoryUnit)
        .where(
            MemoryUnit.bank_id == bank_id,
            MemoryUnit.session_id == session_id,
            MemoryUnit.status.in_(statuses),
            MemoryUnit.identity_key.is_not(None),
        )
        .order_by(MemoryUnit.created_at, MemoryUnit.id)
    )
    return list((await db.scalars(stmt)).all())


async def lock_pending(db: AsyncSession, bank_id: str, limit: int) -> list[MemoryUnit]:
    stmt = (
        select(MemoryUnit)
        .where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "pending")
        .order_by(MemoryUnit.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list((await db.scalars(stmt)).all())


async def set_status(db: AsyncSession, ids: list[uuid.UUID], status: str) -> None:
    if ids:
        await db.execute(
            update(MemoryUnit)
            .where(MemoryUnit.id.in_(ids))
            .values(previous_status=MemoryUnit.status, status=status, status_changed_at=func.now())
        )


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
