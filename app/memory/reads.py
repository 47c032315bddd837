"""Memory units as users see them: with their entities, provenance (the source turns) and lineage
(supersede chain, merges, every action), one at a time or a filtered page."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Unpack

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.claims.stored import contract_claim
from app.db.models import MemoryUnit
from app.db.repositories import events as events_repo
from app.db.repositories import graph as graph_repo
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.db.repositories.units import UnitFilters
from app.errors import NotFound
from app.memory.why import explain
from app.schemas.common import as_aware, cursor_after
from app.schemas.memories import (
    EntityRef,
    HistoryAction,
    MemoryBrief,
    MemoryHistoryRead,
    MemoryPage,
    MemoryRead,
    Source,
    SourceEvent,
)


async def read_models(
    db: AsyncSession,
    units: list[MemoryUnit],
    *,
    with_events: bool = False,
    entities: dict[uuid.UUID, list[dict[str, Any]]] | None = None,
) -> list[MemoryRead]:
    """Units with their entities (one query, unless the caller read them with the units) and, for
    single reads, their source turns."""
    if entities is None:
        entities = await graph_repo.entities_of(db, [u.id for u in units])
    events = (
        await events_repo.events_by_id(db, [i for u in units for i in u.source_event_ids])
        if with_events
        else {}
    )
    return [
        MemoryRead.of(
            u,
            entities=[EntityRef.model_validate(e) for e in entities.get(u.id, [])],
            source=Source(
                session_id=u.session_id,
                seqs=list(u.source_seqs),
                event_ids=list(u.source_event_ids),
                events=[SourceEvent.model_validate(events[i]) for i in u.source_event_ids if i in events]
                if with_events
                else None,
            ),
            metadata=dict(u.metadata_),
            claim=contract_claim(u.claims),
            why=None,  # filled for query results and single reads (app.memory.why)
        )
        for u in units
    ]


async def read_model(db: AsyncSession, unit: MemoryUnit, *, with_events: bool = False) -> MemoryRead:
    [model] = await read_models(db, [unit], with_events=with_events)
    return model


async def read_one(db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID) -> MemoryRead:
    """Read one unit, with the text of the turns it was distilled from and its `why`."""
    model = await read_model(db, await get(db, bank, memory_id), with_events=True)
    whys = await explain(db, [model], bank.timezone, bank.config)
    return model.model_copy(update={"why": whys.get(model.id)})


async def list_page(
    db: AsyncSession,
    bank: ConfiguredBank,
    *,
    limit: int,
    after: tuple[datetime, uuid.UUID] | None = None,
    **filters: Unpack[UnitFilters],
) -> MemoryPage:
    """List the bank's units, newest first, filtered, a page at a time; a time without an offset is read
    in the bank's timezone."""
    for key in ("since", "until", "as_of"):
        at = filters.get(key)
        if isinstance(at, datetime):
            filters[key] = as_aware(at, bank.timezone)
    units = await units_repo.list_units(db, bank.id, after=after, limit=limit, **filters)
    return MemoryPage(
        memories=await read_models(db, units),
        next_cursor=cursor_after(
            units, limit, "pos", lambda last: f"{last.created_at.isoformat()}|{last.id}"
        ),
    )


async def get(
    db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, *, for_update: bool = False
) -> MemoryUnit:
    unit = await units_repo.get_unit(db, memory_id, for_update=for_update)
    if unit is None or unit.bank_id != bank.id:
        raise NotFound(f"Memory {memory_id} not found.")
    return unit


async def history(db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID) -> MemoryHistoryRead:
    unit = await get(db, bank, memory_id)
    chain = await history_repo.supersede_chain(db, unit)
    merged_from = await units_repo.get_units(db, list(unit.merged_from))
    merged_into = await units_repo.get_unit(db, unit.merged_into) if unit.merged_into else None
    actions = await history_repo.history_of(db, [unit.id])
    return MemoryHistoryRead(
        memory=await read_model(db, unit),
        chain=[MemoryBrief.model_validate(u) for u in chain],
        merged_from=[MemoryBrief.model_validate(u) for u in merged_from],
        merged_into=MemoryBrief.model_validate(merged_into) if merged_into else None,
        actions=[HistoryAction.model_validate(a) for a in actions],
    )
