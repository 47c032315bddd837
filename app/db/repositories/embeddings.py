"""Vectors of memory units (`memory_embeddings`, keyed by model) and the nearest-unit searches."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import BindParameter, Row, Select, bindparam, cast, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import MemoryEmbedding, MemoryUnit
from app.db.models.base import table_of

_MODEL_NAME = re.compile(r"[\w./:-]+")


def check_model_name(model: str) -> str:
    """`model`, which statements write as a literal (partial indexes match literals only), if it is a
    plain name."""
    if not _MODEL_NAME.fullmatch(model):
        raise ValueError(f"unexpected embedding model name {model!r}")
    return model


def index_name(model: str, dim: int) -> str:
    return f"ix_memory_embeddings_hnsw_{dim}_" + re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:40]


async def ensure_hnsw_index(db: AsyncSession, model: str, dim: int) -> None:
    """The model's partial HNSW index on `embedding::vector(dim)`, built CONCURRENTLY (writes go on
    meanwhile), outside any transaction (on the session's connection in autocommit)."""
    check_model_name(model)
    conn = await db.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    exists = await conn.scalar(
        text("SELECT 1 FROM pg_indexes WHERE tablename = 'memory_embeddings' AND indexdef LIKE :pattern"),
        {"pattern": f"%vector({dim})%model = '{model}'::text%"},
    )
    if not exists:
        await conn.execute(
            text(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index_name(model, dim)} ON memory_embeddings "
                f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE model = '{model}'"
            )
        )


async def insert_embeddings(
    db: AsyncSession, bank_id: str, model: str, vectors: dict[uuid.UUID, list[float]]
) -> None:
    if not vectors:
        return
    rows = [
        {"memory_id": mid, "model": model, "bank_id": bank_id, "dim": len(vec), "embedding": vec}
        for mid, vec in vectors.items()
    ]
    await db.execute(insert(table_of(MemoryEmbedding)).on_conflict_do_nothing(), rows)


async def without_embedding(db: AsyncSession, ids: list[uuid.UUID], model: str) -> set[uuid.UUID]:
    have = select(MemoryEmbedding.memory_id).where(
        MemoryEmbedding.memory_id.in_(ids), MemoryEmbedding.model == model
    )
    return set(ids) - set((await db.scalars(have)).all())


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


@lru_cache(maxsize=16)
def _neighbours_statement(dim: int | None, ids_only: bool = False) -> Select[Any, float]:
    """`neighbours`' statement, built once per dimension (per unit, building it cost about what running
    it did). With the dimension, the distance is the model's partial HNSW index's own expression
    (`embedding::vector(dim)`, the model a literal, as the query's semantic channel has it), so the
    nearest units come from the index, not from a scan of every vector of the bank."""
    model: BindParameter[str] = bindparam("model", literal_execute=dim is not None)
    mine_row = aliased(MemoryEmbedding)
    vector = cast(MemoryEmbedding.embedding, Vector(dim)) if dim else MemoryEmbedding.embedding
    mine = cast(mine_row.embedding, Vector(dim)) if dim else mine_row.embedding
    query = select(mine).where(mine_row.memory_id == bindparam("unit_id"), mine_row.model == model)
    distance = vector.cosine_distance(query.scalar_subquery())
    return (
        select(MemoryUnit.id if ids_only else MemoryUnit, (1 - distance).label("similarity"))
        .join(MemoryEmbedding, MemoryEmbedding.memory_id == MemoryUnit.id)
        .where(
            MemoryEmbedding.bank_id == bindparam("bank_id"),
            MemoryEmbedding.model == model,
            MemoryUnit.status == bindparam("status"),
            MemoryUnit.id != bindparam("unit_id"),
        )
        .order_by(distance)
        .limit(bindparam("limit"))
    )


async def neighbours(
    db: AsyncSession, unit: MemoryUnit, model: str, limit: int, status: str = "active", dim: int | None = None
) -> list[tuple[MemoryUnit, float]]:
    """The bank's units of `status` nearest to `unit` (cosine similarity), excluding itself. With the
    model's dimension `dim` and the `active` status, from the model's HNSW index (approximate, as the
    query's); else by exact distance (a few superseded units are better found so)."""
    stmt = _neighbours_statement(dim if status == "active" else None)
    return [(u, float(sim)) for u, sim in await _nearest(db, stmt, unit, model, limit, status)]


async def active_neighbour_ids(
    db: AsyncSession, unit: MemoryUnit, model: str, limit: int, dim: int
) -> list[tuple[uuid.UUID, float]]:
    """`neighbours` among the active units, as ids (whose rows the caller reads once, locked)."""
    stmt = _neighbours_statement(dim, ids_only=True)
    return [(uid, float(sim)) for uid, sim in await _nearest(db, stmt, unit, model, limit, "active")]


async def _nearest(
    db: AsyncSession, stmt: Select[Any, float], unit: MemoryUnit, model: str, limit: int, status: str
) -> Sequence[Row[Any, float]]:
    params = {"unit_id": unit.id, "model": model, "bank_id": unit.bank_id, "status": status, "limit": limit}
    rows: Sequence[Row[Any, float]] = (await db.execute(stmt, params)).all()
    return rows


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
        # A new vector is not a change of the unit: `updated_at` (whose ORM default would move) stays.
        await db.execute(
            update(MemoryUnit)
            .where(MemoryUnit.id.in_(ids))
            .values(embedding_model=model, updated_at=MemoryUnit.updated_at)
        )
