"""Memory units: the rows of `memory_units`, written, read, listed, changed and purged."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, TypedDict, Unpack

from sqlalchemy import ColumnElement, any_, bindparam, delete, func, select, text, tuple_, update
from sqlalchemy.dialects.postgresql import ARRAY, UUID, aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from app.db.models import Entity, MemoryEmbedding, MemoryEntity, MemoryHistory, MemoryUnit
from app.db.models.base import table_of
from app.db.repositories.embeddings import insert_embeddings
from app.db.repositories.graph import canonical
from app.db.repositories.history import active_as_of


async def insert_units(db: AsyncSession, rows: list[dict[str, Any]]) -> dict[str, uuid.UUID]:
    """Insert units; a row whose (bank, identity_key) exists already is skipped, so re-running a
    distillation adds nothing. Returns {identity_key: id} of the rows inserted now."""
    if not rows:
        return {}
    units = table_of(MemoryUnit)
    stmt = (
        insert(units)
        .on_conflict_do_nothing(constraint="uq_memory_units_bank_identity_key")
        .returning(units.c.identity_key, units.c.id)
    )
    return {key: id_ for key, id_ in (await db.execute(stmt, rows)).all() if key is not None}


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


async def session_has_pending(db: AsyncSession, bank_id: str, session_id: str, created_by: datetime) -> bool:
    """Whether a unit of the session written no later than `created_by` still waits for resolution
    (the partial index of pending units)."""
    stmt = select(
        select(MemoryUnit.id)
        .where(
            MemoryUnit.bank_id == bank_id,
            MemoryUnit.status == "pending",
            MemoryUnit.created_at <= created_by,
            MemoryUnit.session_id == session_id,
        )
        .exists()
    )
    return bool(await db.scalar(stmt))


async def lock_pending(
    db: AsyncSession, bank_id: str, limit: int, *, only: list[uuid.UUID] | None = None
) -> list[MemoryUnit]:
    stmt = (
        select(MemoryUnit)
        .where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "pending")
        # in the order things were said: by the order of the turns within what was stored together (a
        # later turn may name an earlier day: "we upgraded it yesterday"), then by valid time
        .order_by(
            MemoryUnit.created_at,
            MemoryUnit.session_id,
            MemoryUnit.source_seqs,
            MemoryUnit.valid_from,
            MemoryUnit.id,
        )
        .limit(limit)
        .with_for_update()
    )
    if only is not None:
        stmt = stmt.where(MemoryUnit.id.in_(only))
    return list((await db.scalars(stmt)).all())


async def get_unit(db: AsyncSession, memory_id: uuid.UUID, *, for_update: bool = False) -> MemoryUnit | None:
    return await db.get(MemoryUnit, memory_id, with_for_update=for_update, populate_existing=for_update)


async def lock_units(db: AsyncSession, ids: list[uuid.UUID]) -> list[MemoryUnit]:
    """Units locked for this transaction in id order (the one order status writers take rows in),
    re-read as they are now: a status seen before the lock may have changed while waiting."""
    if not ids:
        return []
    return list((await db.scalars(_LOCK_UNITS, {"ids": ids})).all())


_LOCK_UNITS = (  # built once: resolution locks a unit's candidates for every unit it resolves
    select(MemoryUnit)
    .where(MemoryUnit.id.in_(bindparam("ids", expanding=True)))
    .order_by(MemoryUnit.id)
    .with_for_update()
    .execution_options(populate_existing=True)
)


async def turn_siblings(db: AsyncSession, unit: MemoryUnit) -> list[MemoryUnit]:
    """The other active units distilled from the turn `unit` came from (its last source turn), locked."""
    if not unit.session_id or not unit.source_seqs:
        return []
    stmt = (
        select(MemoryUnit)
        .where(
            MemoryUnit.bank_id == unit.bank_id,
            MemoryUnit.session_id == unit.session_id,
            MemoryUnit.status == "active",
            MemoryUnit.id != unit.id,
            MemoryUnit.source_seqs.contains([max(unit.source_seqs)]),
        )
        .order_by(MemoryUnit.id)
        .with_for_update()
    )
    return list((await db.scalars(stmt)).all())


async def get_units(db: AsyncSession, ids: list[uuid.UUID]) -> list[MemoryUnit]:
    if not ids:
        return []
    stmt = select(MemoryUnit).where(MemoryUnit.id.in_(ids)).order_by(MemoryUnit.created_at, MemoryUnit.id)
    return list((await db.scalars(stmt)).all())


async def successors(db: AsyncSession, ids: list[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """Each of `ids` that a newer unit superseded (or merged into another) → that unit."""
    if not ids:
        return {}
    head = func.coalesce(MemoryUnit.superseded_by, MemoryUnit.merged_into)
    rows = await db.execute(select(MemoryUnit.id, head).where(MemoryUnit.id.in_(ids), head.is_not(None)))
    return dict(rows.all())


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


async def active_after(
    db: AsyncSession, bank_id: str, after: uuid.UUID | None, limit: int
) -> list[MemoryUnit]:
    stmt = select(MemoryUnit).where(MemoryUnit.bank_id == bank_id, MemoryUnit.status == "active")
    if after is not None:
        stmt = stmt.where(MemoryUnit.id > after)
    return list((await db.scalars(stmt.order_by(MemoryUnit.id).limit(limit))).all())


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
            confirmed_at=func.now(),  # said again: the bank's clock of forgetting starts over
        )
    )
    await db.execute(update(MemoryUnit).where(MemoryUnit.id == unit.id).values(merged_into=survivor.id))


# What a successor keeps of its predecessors' searchable words: a few statements' worth, so a chain's
# words never grow without bound.
INHERITED_SEARCH_CHARS = 2_000


async def inherit_search_text(db: AsyncSession, successor_id: uuid.UUID, predecessor_id: uuid.UUID) -> None:
    """Append the predecessor's searchable words to its successor's: a later value said elliptically
    ("no, it's 18 Elm Road", "换成小米14了") is found by the words of the attribute it replaced."""
    predecessor = select(MemoryUnit.search_text).where(MemoryUnit.id == predecessor_id).scalar_subquery()
    joined = MemoryUnit.search_text + " " + func.coalesce(predecessor, "")
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == successor_id)
        .values(search_text=func.left(joined, func.length(MemoryUnit.search_text) + INHERITED_SEARCH_CHARS))
    )


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


async def stamp_valid_from(db: AsyncSession, unit: MemoryUnit) -> None:
    """A unit with no valid time of its own (a proposal that named none) holds from now."""
    await db.execute(
        update(MemoryUnit)
        .where(MemoryUnit.id == unit.id, MemoryUnit.valid_from.is_(None))
        .values(valid_from=func.clock_timestamp())
    )


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


async def confirm(db: AsyncSession, unit_id: uuid.UUID) -> None:
    """A user brought the unit back: the bank's clock of forgetting starts over, as when it is said again."""
    await db.execute(update(MemoryUnit).where(MemoryUnit.id == unit_id).values(confirmed_at=func.now()))


async def undo_downweight(db: AsyncSession, unit: MemoryUnit) -> None:
    metadata = dict(unit.metadata_)
    importance = float(metadata.pop("downweighted_from"))
    await db.execute(
        update(MemoryUnit).where(MemoryUnit.id == unit.id).values(importance=importance, metadata_=metadata)
    )


def tag_prefix_sql(alias: str, name: str, tags: list[str]) -> tuple[str, dict[str, Any]]:
    """SQL for "unit `alias` carries one of `tags` or a tag under one" ("constraint" covers
    "constraint.budget"), with its bind parameter named `name`. The stored column `tag_paths` lists
    every tag with its dotted prefixes; a GIN index over it answers the overlap."""
    return f"{alias}.tag_paths && CAST(:{name} AS text[])", {name: tags}


def tag_filter(tags: list[str]) -> ColumnElement[bool]:
    sql, params = tag_prefix_sql("memory_units", "tag", tags)
    return text(sql).bindparams(**params)  # type: ignore[return-value]


class UnitFilters(TypedDict, total=False):
    """Which of the bank's units a listing returns (None or left out: no condition)."""

    statuses: list[str] | None
    tag: str | None  # the tag and everything under it
    entity: str | None
    session_id: str | None
    since: datetime | None
    until: datetime | None
    as_of: datetime | None  # only units active at that instant
    agent_id: str | None  # only units this agent wrote


async def list_units(
    db: AsyncSession,
    bank_id: str,
    *,
    limit: int,
    after: tuple[datetime, uuid.UUID] | None = None,
    **filters: Unpack[UnitFilters],
) -> list[MemoryUnit]:
    """Newest first, keyset-paginated on (created_at, id)."""
    stmt = select(MemoryUnit).where(MemoryUnit.bank_id == bank_id)
    if statuses := filters.get("statuses"):
        stmt = stmt.where(MemoryUnit.status.in_(statuses))
    if tag := filters.get("tag"):
        stmt = stmt.where(tag_filter([tag]))
    if entity := filters.get("entity"):
        stmt = stmt.where(
            MemoryUnit.id.in_(
                select(MemoryEntity.memory_id)
                .join(Entity, Entity.id == MemoryEntity.entity_id)
                .where(Entity.bank_id == bank_id, Entity.canonical_name == canonical(entity))
            )
        )
    if session_id := filters.get("session_id"):
        stmt = stmt.where(MemoryUnit.session_id == session_id)
    if agent_id := filters.get("agent_id"):
        stmt = stmt.where(MemoryUnit.agent_id == agent_id)
    if since := filters.get("since"):
        stmt = stmt.where(MemoryUnit.created_at >= since)
    if until := filters.get("until"):
        stmt = stmt.where(MemoryUnit.created_at < until)
    if as_of := filters.get("as_of"):
        stmt = stmt.where(MemoryUnit.created_at <= as_of, MemoryUnit.id.in_(active_as_of(bank_id, as_of)))
    if after:
        stmt = stmt.where(tuple_(MemoryUnit.created_at, MemoryUnit.id) < tuple_(*after))
    stmt = stmt.order_by(MemoryUnit.created_at.desc(), MemoryUnit.id.desc()).limit(limit)
    return list((await db.scalars(stmt)).all())
