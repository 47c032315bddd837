"""Changing memory units: direct writes (resolved in the background or at once), updates (a new unit
superseding the old), forgetting by the bank's policy, restore and purge. Reads are in `reads`."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.config import Settings
from app.db.models import Job, MemoryUnit
from app.db.repositories import graph as graph_repo
from app.db.repositories import history as history_repo
from app.db.repositories import jobs as jobs_repo
from app.db.repositories import purge as purge_repo
from app.db.repositories import units as units_repo
from app.entities.types import EntityOut
from app.errors import Conflict
from app.jobs.schedule import schedule_resolve
from app.memory.reads import get
from app.memory.write import UnitWrite, Writer, write_units
from app.providers.embeddings import Embedder
from app.providers.metering import charging
from app.resolve.judge import judge_for
from app.resolve.lock import lock_bank
from app.resolve.service import resolve_pending, supersede
from app.resolve.tuning import REQUEST_JUDGE_SECONDS
from app.schemas.common import as_aware
from app.schemas.memories import MemoryCreate, MemoryPatch
from app.usage.ledger import Ledger
from app.webhooks import emit as webhooks

DOWNWEIGHT_FACTOR = 0.2  # what "forget" does to importance in a `downweight` bank


async def create(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    body: MemoryCreate,
    writer: Writer,
    *,
    propose: bool = False,
) -> MemoryUnit:
    """Insert a direct write `pending`; resolution decides what becomes of it. With `propose` it
    waits as `proposed` for a review, with no valid time unless the write names one."""
    untimed = None if propose else datetime.now(UTC)
    return await _write_one(
        db,
        embedder,
        bank,
        writer,
        UnitWrite(
            content=body.content,
            tags=body.tags,
            confidence=body.confidence,
            importance=body.importance,
            valid_from=as_aware(body.occurred_at, bank.timezone) if body.occurred_at else untimed,
            status="proposed" if propose else "pending",
            agent_id=writer.agent_id,
            session_id=body.session_id,
            metadata=body.metadata,
            entities=[EntityOut(name=e.name, type=e.type) for e in body.entities],
        ),
    )


async def _write_one(
    db: AsyncSession, embedder: Embedder, bank: ConfiguredBank, writer: Writer, write: UnitWrite
) -> MemoryUnit:
    [unit_id] = await write_units(db, embedder, bank, [write], writer)
    unit = await units_repo.get_unit(db, unit_id)
    assert unit is not None
    return unit


async def write(
    db: AsyncSession,
    embedder: Embedder,
    settings: Settings,
    bank: ConfiguredBank,
    body: MemoryCreate,
    writer: Writer,
    *,
    wait: bool,
    propose: bool = False,
) -> tuple[MemoryUnit, Job | None]:
    """Write a unit directly. Without `wait` the unit stays `pending` and the bank's resolution job
    is sent → (unit, job); with `wait` it is resolved in this transaction (with the LLM judge when one
    is configured) → (unit as resolved: active, merged into a twin, or superseding an older value, None).
    With `propose` it waits as `proposed` and nothing is resolved → (unit, None)."""
    if propose:  # shared memory: changes nothing until a review accepts it
        return await create(db, embedder, bank, body, writer, propose=True), None
    if wait:  # the bank's lock before any row this write touches: the order every status change takes
        await lock_bank(db, bank.id)
    unit = await create(db, embedder, bank, body, writer)
    if not wait:
        job, _ = await schedule_resolve(db, bank.id)
        return unit, job
    async with judge_for(settings, Ledger.beside(db), within=REQUEST_JUDGE_SECONDS) as judge:
        with charging(bank.id):  # the judge's calls go on the bank's bill (no job: this request's)
            await resolve_pending(
                db, bank.id, embedder=embedder, judge=judge, only=[unit.id], config=bank.config
            )
    await db.refresh(unit)
    return unit, None


async def update(
    db: AsyncSession,
    embedder: Embedder,
    bank: ConfiguredBank,
    memory_id: uuid.UUID,
    body: MemoryPatch,
    writer: Writer,
    *,
    propose: bool = False,
) -> MemoryUnit:
    """Supersede the chain's active head with a new unit holding the changes (history action
    `updated`). Its claims, entities and relations are read from the new content; a changed content
    keeps none of the old unit's entities. With `propose` the new unit waits as `proposed`
    (`proposed_update_of` the old one) and the old one stays as it is."""
    if not propose:  # shared memory: a proposal changes no status, so it takes no lock
        await lock_bank(db, bank.id)
    old = await get(db, bank, memory_id, for_update=not propose)
    if old.status != "active":
        raise Conflict(f"Memory {memory_id} is {old.status}; only an active unit can be updated.")
    changed = body.content is not None and body.content != old.content
    entities = {} if changed else await graph_repo.entities_of(db, [old.id])
    write = UnitWrite(
        content=body.content if body.content is not None else old.content,
        tags=body.tags if body.tags is not None else list(old.tags),
        confidence=body.confidence if body.confidence is not None else old.confidence,
        importance=body.importance if body.importance is not None else old.importance,
        valid_from=None if propose else datetime.now(UTC),
        status="proposed" if propose else "pending",
        agent_id=writer.agent_id,
        proposed_update_of=old.id if propose else None,
        session_id=old.session_id,
        metadata=dict(old.metadata_),
        entities=[EntityOut(name=e["name"], type=e["type"]) for e in entities.get(old.id, [])],
    )
    new = await _write_one(db, embedder, bank, writer, write)
    await units_repo.copy_sources(db, old, new)
    if not propose:
        await supersede(
            db, old, new, reason="update", actor=writer.actor, action="updated", agent_id=writer.agent_id
        )
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
    await units_repo.confirm(db, unit.id)
    await db.refresh(unit)
    return unit


async def purge(
    db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID, actor: str, *, agent_id: str | None = None
) -> MemoryUnit:
    """Erase content, vectors and graph links for good; the history keeps a tombstone."""
    await lock_bank(db, bank.id)
    unit = await get(db, bank, memory_id, for_update=True)
    await jobs_repo.scrub_results(db, bank.id, unit.content)  # a redistill diff lists unit contents
    await purge_repo.erase(db, unit)
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
