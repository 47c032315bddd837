"""Changing memory units: direct writes (resolved in the background or at once), updates (a new unit
superseding the old), forgetting by the bank's policy, restore and purge. Reads are in `reads`."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.claims.stored import columns as claim_columns
from app.claims.stored import read_claims
from app.config import Settings
from app.db.models import Job, MemoryUnit
from app.db.repositories import embeddings as embeddings_repo
from app.db.repositories import graph as graph_repo
from app.db.repositories import history as history_repo
from app.db.repositories import jobs as jobs_repo
from app.db.repositories import units as units_repo
from app.distill.entry import statement_graph
from app.entities.types import EntityOut, RelationOut
from app.errors import Conflict
from app.jobs.schedule import schedule_resolve
from app.memory.graph import store_graph
from app.memory.reads import get
from app.providers.embeddings import Embedder
from app.redact import is_redacted, redact
from app.resolve.judge import judge_for
from app.resolve.service import lock_bank, resolve_pending, supersede
from app.schemas.common import as_aware
from app.schemas.memories import (
    MemoryCreate,
    MemoryPatch,
)
from app.text import search_text
from app.webhooks import emit as webhooks

DOWNWEIGHT_FACTOR = 0.2  # what "forget" does to importance in a `downweight` bank


async def _insert(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    *,
    content: str,
    tags: list[str],
    confidence: float,
    importance: float,
    valid_from: datetime | None,
    session_id: str | None,
    metadata: dict[str, Any],
    entities: list[EntityOut],
    actor: str,
    status: str,
    extract: bool = False,
    agent_id: str | None = None,  # shared memory: the writing agent
    proposed_update_of: uuid.UUID | None = None,  # shared memory: a proposed PATCH's target
) -> MemoryUnit:
    """A unit written through the API (not distilled), with its vector, entities and a history row.
    Secrets are masked first when the bank redacts (the default), so no vector or index sees them.
    `extract`: the content's entities and relations are found as in a distilled turn (besides those
    given), so resolution compares a direct write like a distilled unit ("works at Globex" supersedes
    "works at Acme"). Its claims are read from the content and tags in every case. `valid_from` None:
    a proposal that names no time, stamped when it is accepted (`app/memory/review.py`)."""
    if bank.config.redact:
        content = redact(content)
        entities = [e.model_copy(update={"name": redact(e.name)}) for e in entities]
    relations: list[RelationOut] = []
    if extract:
        found, relations = await statement_graph(content, tags)
        given = {e.name.lower() for e in entities}
        entities = entities + [e for e in found if e.name.lower() not in given]
    entities = [e for e in entities if not is_redacted(e.name)]
    relations = [r for r in relations if not (is_redacted(r.subject) or is_redacted(r.object))]
    unit_id = uuid.uuid4()
    [vector] = await embedder.embed([content])
    searched = await asyncio.to_thread(search_text, content)  # jieba: CPU work, off the event loop
    claims = await asyncio.to_thread(read_claims, content, tags)
    await units_repo.insert_units(
        db,
        [
            {
                "id": unit_id,
                "bank_id": bank.id,
                "content": content,
                "search_text": searched,
                "tags": tags,
                "confidence": confidence,
                "importance": importance,
                "status": status,
                "session_id": session_id,
                "valid_from": valid_from,
                "distiller": "api",
                "embedding_model": embedder.model,
                "metadata": metadata,
                **claim_columns(claims),
                "agent_id": agent_id,
                "proposed_update_of": proposed_update_of,
            }
        ],
    )
    await embeddings_repo.insert_embeddings(db, bank.id, embedder.model, {unit_id: vector})
    await store_graph(db, bank.id, [(unit_id, entities, relations, confidence)])
    await history_repo.add_history(
        db,
        [
            {
                "bank_id": bank.id,
                "memory_id": unit_id,
                "action": "created",
                "actor": actor,
                "agent_id": agent_id,
                "details": {"to": status},
            }
        ],
    )
    unit = await units_repo.get_unit(db, unit_id)
    assert unit is not None
    return unit


async def create(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    body: MemoryCreate,
    actor: str,
    *,
    agent_id: str | None = None,
    propose: bool = False,
) -> MemoryUnit:
    """A direct write: inserted `pending`; resolution decides what becomes of it. With `propose` it
    waits as `proposed` for a review, with no valid time unless the write names one."""
    tz = bank.timezone
    untimed = None if propose else datetime.now(UTC)
    return await _insert(
        db,
        embedder,
        bank,
        content=body.content,
        tags=body.tags,
        confidence=body.confidence,
        importance=body.importance,
        valid_from=as_aware(body.occurred_at, tz) if body.occurred_at else untimed,
        session_id=body.session_id,
        metadata=body.metadata,
        entities=[EntityOut(name=e.name, type=e.type) for e in body.entities],
        actor=actor,
        status="proposed" if propose else "pending",
        extract=True,
        agent_id=agent_id,
    )


async def write(
    db: AsyncSession,
    embedder: Embedder,
    settings: Settings,
    bank: ConfiguredBank,
    body: MemoryCreate,
    actor: str,
    *,
    wait: bool,
    agent_id: str | None = None,
    propose: bool = False,
) -> tuple[MemoryUnit, Job | None]:
    """A direct write. Without `wait` the unit stays `pending` and the bank's resolution job
    is sent → (unit, job); with `wait` it is resolved in this transaction (with the LLM judge when one
    is configured) → (unit as resolved: active, merged into a twin, or superseding an older value, None).
    With `propose` it waits as `proposed` and nothing is resolved → (unit, None)."""
    if propose:  # shared memory: changes nothing until a review accepts it
        return await create(db, embedder, bank, body, actor, agent_id=agent_id, propose=True), None
    if wait:  # the bank's lock before any row this write touches: the order every status change takes
        await lock_bank(db, bank.id)
    unit = await create(db, embedder, bank, body, actor, agent_id=agent_id)
    if not wait:
        job, _ = await schedule_resolve(db, bank.id)
        return unit, job
    async with judge_for(settings) as judge:
        await resolve_pending(db, bank.id, embedder=embedder, judge=judge, only=[unit.id], config=bank.config)
    await db.refresh(unit)
    return unit, None


async def update(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    memory_id: uuid.UUID,
    body: MemoryPatch,
    actor: str,
    *,
    agent_id: str | None = None,
    propose: bool = False,
) -> MemoryUnit:
    """A new unit with the changes supersedes the old one (history action `updated`). Only the
    chain's active head can be updated. Its claims, entities and relations are read from the new
    content; a changed content keeps none of the old unit's entities. With `propose` the new unit
    waits as `proposed` (`proposed_update_of` the old one) and the old one stays as it is."""
    if not propose:  # shared memory: a proposal changes no status, so it takes no lock
        await lock_bank(db, bank.id)
    old = await get(db, bank, memory_id, for_update=not propose)
    if old.status != "active":
        raise Conflict(f"Memory {memory_id} is {old.status}; only an active unit can be updated.")
    changed = body.content is not None and body.content != old.content
    entities = {} if changed else await graph_repo.entities_of(db, [old.id])
    new = await _insert(
        db,
        embedder,
        bank,
        content=body.content if body.content is not None else old.content,
        tags=body.tags if body.tags is not None else list(old.tags),
        confidence=body.confidence if body.confidence is not None else old.confidence,
        importance=body.importance if body.importance is not None else old.importance,
        valid_from=None if propose else datetime.now(UTC),
        session_id=old.session_id,
        metadata=dict(old.metadata_),
        entities=[EntityOut(name=e["name"], type=e["type"]) for e in entities.get(old.id, [])],
        actor=actor,
        status="proposed" if propose else "pending",
        extract=True,
        agent_id=agent_id,
        proposed_update_of=old.id if propose else None,
    )
    await units_repo.copy_sources(db, old, new)
    if propose:
        await db.refresh(new)
        return new
    await supersede(db, old, new, reason="update", actor=actor, action="updated", agent_id=agent_id)
    await db.refresh(new)
    return new


async def forget(
    db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, actor: str, *, agent_id: str | None = None
) -> MemoryUnit:
    """Soft delete by the bank's forgetting policy: `delete` → `deleted` (restorable), `downweight` →
    still active at a fifth of its importance, `never` → refused (only a purge erases)."""
    policy = bank.config.forgetting_policy
    await lock_bank(db, bank.id)
    unit = await get(db, bank, memory_id, for_update=True)  # its status now, not before the wait
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
                    "agent_id": agent_id,
                    "details": {
                        "importance": unit.importance * DOWNWEIGHT_FACTOR,
                        "from": unit.status,
                        "to": unit.status,
                    },
                }
            ],
        )
        await webhooks.memories_forgotten(db, bank.id, [unit.id], status=unit.status, action="downweighted")
    else:
        await history_repo.transition_unit(
            db, unit, "deleted", action="deleted", actor=actor, agent_id=agent_id
        )
        await webhooks.memories_forgotten(db, bank.id, [unit.id], status="deleted", action="deleted")
    await db.refresh(unit)
    return unit


async def restore(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    memory_id: uuid.UUID,
    actor: str,
    *,
    agent_id: str | None = None,
) -> MemoryUnit:
    """Undo a forget: back to the status it had (or its importance); a unit that was in force goes
    through resolution again."""
    await lock_bank(db, bank.id)
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
                    "agent_id": agent_id,
                    "details": {"from": unit.status, "to": unit.status},
                }
            ],
        )
    elif unit.status == "deleted":
        back = unit.previous_status or "active"
        if back not in ("active", "pending"):
            await history_repo.transition(
                db, bank.id, [(unit.id, "deleted", back)], action="restored", actor=actor, agent_id=agent_id
            )
        else:
            # The bank may have learned a newer value meanwhile: a unit coming back to life is resolved
            # again (it supersedes, becomes history, merges or activates), never simply re-activated.
            await history_repo.transition(
                db,
                bank.id,
                [(unit.id, "deleted", "pending")],
                action="restored",
                actor=actor,
                agent_id=agent_id,
            )
            await resolve_pending(
                db, bank.id, embedder=embedder, only=[unit.id], actor_details={"restored": True}
            )
    else:
        raise Conflict(f"Memory {memory_id} is {unit.status}, not deleted.")
    await db.refresh(unit)
    return unit


async def purge(
    db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, actor: str, *, agent_id: str | None = None
) -> MemoryUnit:
    """Erase content, vectors and graph links for good; the history keeps a tombstone."""
    await lock_bank(db, bank.id)
    unit = await get(db, bank, memory_id, for_update=True)
    await jobs_repo.scrub_results(db, bank.id, unit.content)  # a redistill diff lists unit contents
    await units_repo.erase(db, unit)
    await history_repo.transition_unit(
        db,
        unit,
        "deleted",
        action="purged",
        actor=actor,
        details={"tombstone": True},
        agent_id=agent_id,
    )
    await webhooks.memory_purged(db, bank.id, unit.id)
    await db.refresh(unit)
    return unit
