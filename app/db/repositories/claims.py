"""Units by their claims: the active holders of an attribute, the units stating a value a change names as
replaced, and the claim columns written once a unit's claims are read."""

from __future__ import annotations

import json
import uuid
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Select,
    bindparam,
    false,
    func,
    insert,
    or_,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from sqlalchemy.orm.attributes import set_committed_value

from app.db.models import Entity, MemoryEmbedding, MemoryEntity, MemoryUnit, Relation
from app.db.models.memory import is_active

HOLDERS = 20  # the newest active units per lookup: an attribute's history is short, its head newest


async def set_claims(db: AsyncSession, unit: MemoryUnit, columns: dict[str, Any]) -> None:
    """Store a unit's claims (`claims`, `claim_subject`, `claim_attribute`), on the loaded `unit` too."""
    await set_claims_many(db, [(unit, columns)])


_SET_CLAIMS = text("""
    UPDATE memory_units m
    SET claims = CAST(v.claims AS jsonb), claim_subject = v.subject, claim_attribute = v.attribute,
        updated_at = now()
    FROM unnest(CAST(:ids AS uuid[]), CAST(:claims AS text[]), CAST(:subjects AS text[]),
                CAST(:attributes AS text[])) AS v(id, claims, subject, attribute)
    WHERE m.id = v.id
""")


async def set_claims_many(db: AsyncSession, rows: list[tuple[MemoryUnit, dict[str, Any]]]) -> None:
    """`set_claims` of many units in one statement (resolution reads a whole batch's claims at once)."""
    if not rows:
        return
    await db.execute(
        _SET_CLAIMS,
        {
            "ids": [unit.id for unit, _ in rows],
            "claims": [json.dumps(columns["claims"]) for _, columns in rows],
            "subjects": [columns["claim_subject"] for _, columns in rows],
            "attributes": [columns["claim_attribute"] for _, columns in rows],
        },
    )
    for unit, columns in rows:  # the row says so now: nothing for a flush to write again
        for name, value in columns.items():
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


async def unchanged_beside(db: AsyncSession, unit: MemoryUnit) -> list[Any]:
    """The stored claims of the units said together with `unit` (its session's same turns, pending or
    active) that hold a claim saying a thing is unchanged ("…; the hotel stays as it is")."""
    if unit.session_id is None or not unit.source_seqs:
        return []
    stmt = select(MemoryUnit.claims).where(
        MemoryUnit.bank_id == unit.bank_id,
        MemoryUnit.session_id == unit.session_id,
        MemoryUnit.source_seqs == unit.source_seqs,
        MemoryUnit.id != unit.id,
        MemoryUnit.status.in_(("pending", "active")),
        MemoryUnit.claims.contains([{"unchanged": True}]),
    )
    return list((await db.scalars(stmt)).all())


@lru_cache(maxsize=512)
def _holders_statement(keys: int, attributes: int, values: int) -> Select[uuid.UUID, float]:
    """`active_holders`' statement for so many keys, attributes and values, built once (building it
    per unit cost more CPU than running it); its parameters are named k0…, s0…/a0…, v0…."""
    match: ColumnElement[bool] = false()
    for k in range(keys):
        match = match | MemoryUnit.claims.contains(bindparam(f"k{k}", type_=JSONB))
    for n in range(attributes):
        match = match | (
            (MemoryUnit.claim_subject == bindparam(f"s{n}"))
            & (MemoryUnit.claim_attribute == bindparam(f"a{n}"))
        )
    for v in range(values):
        match = match | (func.strpos(func.lower(MemoryUnit.content), bindparam(f"v{v}")) > 0)
    a, b = aliased(MemoryEmbedding), aliased(MemoryEmbedding)
    similarity = func.coalesce(1 - a.embedding.cosine_distance(b.embedding), 0.0)
    unit_id: BindParameter[uuid.UUID] = bindparam("unit_id")
    model: BindParameter[str] = bindparam("model")
    return (
        select(MemoryUnit.id, similarity)
        .outerjoin(a, (a.memory_id == MemoryUnit.id) & (a.model == model))
        .outerjoin(b, (b.memory_id == unit_id) & (b.model == model))
        .where(
            MemoryUnit.bank_id == bindparam("bank_id"),
            is_active(),
            MemoryUnit.id != unit_id,
            MemoryUnit.id.not_in(bindparam("exclude", expanding=True)),
            or_(match),
        )
        .order_by(MemoryUnit.created_at.desc())
        .limit(HOLDERS)
    )


async def active_holders(
    db: AsyncSession,
    unit: MemoryUnit,
    *,
    keys: list[dict[str, str]],
    attributes: list[tuple[str, str]],
    old_values: list[str],
    exclude: list[uuid.UUID],
) -> list[tuple[uuid.UUID, float]]:
    """The ids of the bank's active units holding one of `keys` in their claims (subject and head or
    attribute), whose main claim is one of `attributes` (subject, attribute), or whose content states one
    of `old_values` — newest first, with their similarity to `unit` (0 when one has no vector)."""
    if not (keys or attributes or old_values):
        return []
    params: dict[str, Any] = {
        "bank_id": unit.bank_id,
        "unit_id": unit.id,
        "model": unit.embedding_model,
        "exclude": exclude,
        **{f"k{k}": [key] for k, key in enumerate(keys)},
        **{f"s{n}": subject for n, (subject, _) in enumerate(attributes)},
        **{f"a{n}": attribute for n, (_, attribute) in enumerate(attributes)},
        **{f"v{v}": value.lower() for v, value in enumerate(old_values)},
    }
    stmt = _holders_statement(len(keys), len(attributes), len(old_values))
    return [(uid, float(sim)) for uid, sim in (await db.execute(stmt, params)).all()]


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
