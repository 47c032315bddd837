"""Memory units as users see them: direct writes, reads with provenance and lineage, updates (a new
unit superseding the old), forgetting by the bank's policy, restore and purge."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.db.models import MemoryUnit
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import events as events_repo
from app.db.repositories import graph as graph_repo
from app.db.repositories import history as history_repo
from app.db.repositories import jobs as jobs_repo
from app.db.repositories import units as units_repo
from app.errors import Conflict, NotFound
from app.events.service import as_aware
from app.memory.graph import EntityOut, store_graph
from app.providers.embeddings import Embedder
from app.redact import is_redacted, redact
from app.resolve.service import lock_bank, resolve_pending, supersede
from app.schemas.memories import (
    EntityRef,
    HistoryAction,
    MemoryBrief,
    MemoryCreate,
    MemoryHistoryRead,
    MemoryPatch,
    MemoryRead,
    Source,
    SourceEvent,
)
from app.text import search_text

DOWNWEIGHT_FACTOR = 0.2  # what "forget" does to importance in a `downweight` bank


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
        MemoryRead(
            id=u.id,
            bank_id=u.bank_id,
            content=u.content,
            tags=list(u.tags),
            confidence=u.confidence,
            importance=u.importance,
            status=u.status,
            layer=u.layer,
            entities=[EntityRef.model_validate(e) for e in entities.get(u.id, [])],
            source=Source(
                session_id=u.session_id,
                seqs=list(u.source_seqs),
                event_ids=list(u.source_event_ids),
                events=[SourceEvent.model_validate(events[i]) for i in u.source_event_ids if i in events]
                if with_events
                else None,
            ),
            supersedes=u.supersedes,
            superseded_by=u.superseded_by,
            merged_from=list(u.merged_from),
            merged_into=u.merged_into,
            valid_from=u.valid_from,
            valid_to=u.valid_to,
            created_at=u.created_at,
            updated_at=u.updated_at,
            status_changed_at=u.status_changed_at,
            expires_at=u.expires_at,
            last_accessed_at=u.last_accessed_at,
            access_count=u.access_count,
            distiller=u.distiller,
            embedding_model=u.embedding_model,
            metadata=dict(u.metadata_),
        )
        for u in units
    ]


async def read_model(db: AsyncSession, unit: MemoryUnit, *, with_events: bool = False) -> MemoryRead:
    [model] = await read_models(db, [unit], with_events=with_events)
    return model


async def get(
    db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, *, for_update: bool = False
) -> MemoryUnit:
    unit = await units_repo.get_unit(db, memory_id, for_update=for_update)
    if unit is None or unit.bank_id != bank.id:
        raise NotFound(f"Memory {memory_id} not found.")
    return unit


async def _insert(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    *,
    content: str,
    tags: list[str],
    confidence: float,
    importance: float,
    valid_from: datetime,
    session_id: str | None,
    metadata: dict[str, Any],
    entities: list[EntityOut],
    actor: str,
    status: str,
) -> MemoryUnit:
    """A unit written through the API (not distilled), with its vector, entities and a history row.
    Secrets are masked first when the bank redacts (the default), so no vector or index sees them."""
    if bank.config.redact:
        content = redact(content)
        entities = [e.model_copy(update={"name": redact(e.name)}) for e in entities]
        entities = [e for e in entities if not is_redacted(e.name)]
    unit_id = uuid.uuid4()
    [vector] = await embedder.embed([content])
    await units_repo.insert_units(
        db,
        [
            {
                "id": unit_id,
                "bank_id": bank.id,
                "content": content,
                "search_text": search_text(content),
                "tags": tags,
                "confidence": confidence,
                "importance": importance,
                "status": status,
                "session_id": session_id,
                "valid_from": valid_from,
                "distiller": "api",
                "embedding_model": embedder.model,
                "metadata": metadata,
            }
        ],
    )
    await embeddings_repo.insert_embeddings(db, bank.id, embedder.model, {unit_id: vector})
    await store_graph(db, bank.id, [(unit_id, entities, [], confidence)])
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": bank.id,
                "memory_id": unit_id,
                "action": "created",
                "actor": actor,
                "details": {"to": status},
            }
        ],
    )
    unit = await units_repo.get_unit(db, unit_id)
    assert unit is not None
    return unit


async def create(
    db: AsyncSession, embedder: Embedder, bank: ConfiguredBank, body: MemoryCreate, actor: str
) -> MemoryUnit:
    """A direct write: inserted `pending`; resolution decides what becomes of it."""
    tz = bank.timezone
    return await _insert(
        db,
        embedder,
        bank,
        content=body.content,
        tags=body.tags,
        confidence=body.confidence,
        importance=body.importance,
        valid_from=as_aware(body.occurred_at, tz) if body.occurred_at else datetime.now(UTC),
        session_id=body.session_id,
        metadata=body.metadata,
        entities=[EntityOut(name=e.name, type=e.type) for e in body.entities],
        actor=actor,
        status="pending",
    )


async def update(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    memory_id: uuid.UUID,
    body: MemoryPatch,
    actor: str,
) -> MemoryUnit:
    """A new unit with the changes supersedes the old one (history action `updated`). Only the
    chain's active head can be updated."""
    await lock_bank(db, bank.id)
    old = await get(db, bank, memory_id, for_update=True)
    if old.status != "active":
        raise Conflict(f"Memory {memory_id} is {old.status}; only an active unit can be updated.")
    entities = await graph_repo.entities_of(db, [old.id])
    new = await _insert(
        db,
        embedder,
        bank,
        content=body.content if body.content is not None else old.content,
        tags=body.tags if body.tags is not None else list(old.tags),
        confidence=body.confidence if body.confidence is not None else old.confidence,
        importance=body.importance if body.importance is not None else old.importance,
        valid_from=datetime.now(UTC),
        session_id=old.session_id,
        metadata=dict(old.metadata_),
        entities=[EntityOut(name=e["name"], type=e["type"]) for e in entities.get(old.id, [])],
        actor=actor,
        status="pending",
    )
    await units_repo.copy_sources(db, old, new)
    await supersede(db, old, new, reason="update", actor=actor, action="updated")
    await db.refresh(new)
    return new


async def forget(db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, actor: str) -> MemoryUnit:
    """Soft delete by the bank's forgetting policy: `delete` → `deleted` (restorable), `downweight` →
    still active at a fifth of its importance, `never` → refused (only a purge erases)."""
    policy = bank.config.forgetting_policy
    unit = await get(db, bank, memory_id, for_update=True)
    if policy == "never":
        raise Conflict("This bank's forgetting policy is 'never': units are kept; an admin purge erases one.")
    if unit.status == "deleted" or unit.metadata_.get("downweighted_from") is not None:
        return unit  # forgetting twice changes nothing
    if policy == "downweight":
        await units_repo.downweight(db, unit, DOWNWEIGHT_FACTOR)
        await history_repo.add_history(
            db,
            [
                {
                    "bank_id": bank.id,
                    "memory_id": unit.id,
                    "action": "downweighted",
                    "actor": actor,
                    "details": {
                        "importance": unit.importance * DOWNWEIGHT_FACTOR,
                        "from": unit.status,
                        "to": unit.status,
                    },
                }
            ],
        )
    else:
        await history_repo.transition(
            db, bank.id, [(unit.id, unit.status, "deleted")], action="deleted", actor=actor
        )
    await db.refresh(unit)
    return unit


async def restore(
    db: AsyncSession, embedder: Embedder, bank: ConfiguredBank, memory_id: uuid.UUID, actor: str
) -> MemoryUnit:
    """Undo a forget: back to the status it had (or its importance); a unit that was in force goes
    through resolution again."""
    unit = await get(db, bank, memory_id, for_update=True)
    if unit.metadata_.get("purged_at"):
        raise Conflict(f"Memory {memory_id} was purged; nothing is left to restore.")
    if unit.metadata_.get("downweighted_from") is not None:
        await units_repo.undo_downweight(db, unit)
        await history_repo.add_history(
            db,
            [
                {
                    "bank_id": bank.id,
                    "memory_id": unit.id,
                    "action": "restored",
                    "actor": actor,
                    "details": {"from": unit.status, "to": unit.status},
                }
            ],
        )
    elif unit.status == "deleted":
        back = unit.previous_status or "active"
        if back not in ("active", "pending"):
            await history_repo.transition(
                db, bank.id, [(unit.id, "deleted", back)], action="restored", actor=actor
            )
        else:
            # The bank may have learned a newer value meanwhile: a unit coming back to life is resolved
            # again (it supersedes, becomes history, merges or activates), never simply re-activated.
            await history_repo.transition(
                db, bank.id, [(unit.id, "deleted", "pending")], action="restored", actor=actor
            )
            await resolve_pending(
                db, bank.id, embedder=embedder, only=[unit.id], actor_details={"restored": True}
            )
    else:
        raise Conflict(f"Memory {memory_id} is {unit.status}, not deleted.")
    await db.refresh(unit)
    return unit


async def purge(db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, actor: str) -> MemoryUnit:
    """Erase content, vectors and graph links for good; the history keeps a tombstone."""
    unit = await get(db, bank, memory_id, for_update=True)
    await jobs_repo.scrub_results(db, bank.id, unit.content)  # a redistill diff lists unit contents
    await units_repo.erase(db, unit)
    await history_repo.transition(
        db,
        bank.id,
        [(unit.id, unit.status, "deleted")],
        action="purged",
        actor=actor,
        details={unit.id: {"tombstone": True}},
    )
    await db.refresh(unit)
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
