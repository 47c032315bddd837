"""Reviewing proposals (docs/guides/shared-memory.md): a unit written with a propose-only key waits as
`proposed`, changing nothing, until a key with the `review` scope accepts it (it is then resolved as
if written at that moment) or rejects it (`rejected`, its history kept)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.config import Settings
from app.db.models import MemoryUnit
from app.db.repositories import history as history_repo
from app.db.repositories import units as units_repo
from app.errors import Conflict
from app.memory.reads import get
from app.providers.embeddings import Embedder
from app.providers.metering import charging
from app.resolve.judge import judge_for
from app.resolve.lock import lock_bank
from app.resolve.service import resolve_pending, supersede
from app.resolve.tuning import REQUEST_JUDGE_SECONDS
from app.usage.ledger import Ledger


async def _proposal(db: AsyncSession, bank: ConfiguredBank, memory_id: uuid.UUID) -> MemoryUnit:
    """The unit, locked after the bank's lock (the order of every status change), if still proposed."""
    await lock_bank(db, bank.id)
    unit = await get(db, bank, memory_id, for_update=True)
    if unit.status != "proposed":
        raise Conflict(f"Memory {memory_id} is {unit.status}; only a proposed unit can be reviewed.")
    return unit


async def accept(
    db: AsyncSession,
    embedder: Embedder,
    settings: Settings,
    bank: ConfiguredBank,
    memory_id: uuid.UUID,
    actor: str,
    *,
    agent_id: str | None = None,
    reason: str | None = None,
) -> MemoryUnit:
    """Accept a proposal: it becomes `pending` and is resolved in this transaction by the bank's usual
    rules, as if written now (a proposal that named no time holds from now). A proposed update
    supersedes its unit when that is still the active head; otherwise it is resolved like a write."""
    unit = await _proposal(db, bank, memory_id)
    await units_repo.stamp_valid_from(db, unit)
    await history_repo.transition_unit(
        db, unit, "pending", action="accepted", actor=actor, details=_details(unit, reason), agent_id=agent_id
    )
    await db.refresh(unit)
    target = await _update_target(db, unit)
    if target is not None:
        await supersede(db, target, unit, reason="update", actor=actor, action="updated", agent_id=agent_id)
    else:
        async with judge_for(settings, Ledger.beside(db), within=REQUEST_JUDGE_SECONDS) as judge:
            with charging(bank.id):  # the judge's calls go on the bank's bill, as a waited write's do
                await resolve_pending(
                    db,
                    bank.id,
                    embedder=embedder,
                    judge=judge,
                    only=[unit.id],
                    config=bank.config,
                    actor_details={"accepted_by": agent_id or actor},
                )
    await db.refresh(unit)
    return unit


async def _update_target(db: AsyncSession, unit: MemoryUnit) -> MemoryUnit | None:
    """The unit a proposed update replaces, locked, when it is still active in the same bank."""
    if unit.proposed_update_of is None:
        return None
    target = await units_repo.get_unit(db, unit.proposed_update_of, for_update=True)
    if target is None or target.bank_id != unit.bank_id or target.status != "active":
        return None
    return target


async def reject(
    db: AsyncSession,
    bank: ConfiguredBank,
    memory_id: uuid.UUID,
    actor: str,
    *,
    agent_id: str | None = None,
    reason: str | None = None,
) -> MemoryUnit:
    """Refuse a proposal: `rejected` for good (never retrieved, never resolved); its history stays."""
    unit = await _proposal(db, bank, memory_id)
    await history_repo.transition_unit(
        db,
        unit,
        "rejected",
        action="rejected",
        actor=actor,
        details=_details(unit, reason),
        agent_id=agent_id,
    )
    await db.refresh(unit)
    return unit


def _details(unit: MemoryUnit, reason: str | None) -> dict[str, str]:
    """Record who proposed the unit and why the review decided as it did."""
    details = {"proposed_by": unit.agent_id} if unit.agent_id else {}
    if reason:
        details["reason"] = reason
    return details
